package sharedstate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/store"
)

// DomainMemory is the subject token of memory events: state.memory.
const DomainMemory = "memory"

// Memory is the memory.Store of a node that shares its memory: writes
// are events on state.memory, applied to every node's local store in
// stream order; reads (and full-text search) are the local store's.
type Memory struct {
	r     *Replicator
	local *store.Memory
}

var _ memory.Store = (*Memory)(nil)

type memPut struct {
	Entry memory.Entry `json:"entry"`
}

type memDelete struct {
	Namespace string `json:"namespace"`
	Key       string `json:"key"`
}

type memPutAll struct {
	Entries      []memory.Entry `json:"entries"`
	SkipExisting bool           `json:"skipExisting"`
}

// NewMemory registers the memory events on r and returns the shared
// memory.Store over local.
func NewMemory(r *Replicator, local *store.Memory) *Memory {
	m := &Memory{r: r, local: local}
	r.Handle("memory.put", func(ctx context.Context, data json.RawMessage) (any, error) {
		var op memPut
		if err := decode(data, &op); err != nil {
			return nil, err
		}
		return local.Put(ctx, op.Entry)
	})
	r.Handle("memory.delete", func(ctx context.Context, data json.RawMessage) (any, error) {
		var op memDelete
		if err := decode(data, &op); err != nil {
			return nil, err
		}
		return local.Delete(ctx, op.Namespace, op.Key)
	})
	r.Handle("memory.putAll", func(ctx context.Context, data json.RawMessage) (any, error) {
		var op memPutAll
		if err := decode(data, &op); err != nil {
			return nil, err
		}
		return local.PutAll(ctx, op.Entries, op.SkipExisting)
	})
	return m
}

// decode reads an event's data; a malformed one is the event's outcome
// (an error), not a failure to retry.
func decode(data json.RawMessage, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("shared state: malformed %T event: %w", v, err)
	}
	return nil
}

// Put implements memory.Store.
func (m *Memory) Put(ctx context.Context, e memory.Entry) (replaced bool, err error) {
	err = m.r.Do(ctx, DomainMemory, "memory.put", memPut{Entry: e}, &replaced)
	return replaced, err
}

// Delete implements memory.Store.
func (m *Memory) Delete(ctx context.Context, namespace, key string) (deleted bool, err error) {
	err = m.r.Do(ctx, DomainMemory, "memory.delete", memDelete{Namespace: namespace, Key: key}, &deleted)
	return deleted, err
}

// PutAll implements memory.Store: one event, applied in one transaction.
func (m *Memory) PutAll(ctx context.Context, entries []memory.Entry, skipExisting bool) (c memory.ImportCounts, err error) {
	err = m.r.Do(ctx, DomainMemory, "memory.putAll", memPutAll{Entries: entries, SkipExisting: skipExisting}, &c)
	return c, err
}

// Get implements memory.Store from the local store.
func (m *Memory) Get(ctx context.Context, namespace, key string) (memory.Entry, bool, error) {
	return m.local.Get(ctx, namespace, key)
}

// List implements memory.Store from the local store.
func (m *Memory) List(ctx context.Context, q memory.ListQuery) (memory.ListPage, error) {
	return m.local.List(ctx, q)
}

// Search implements memory.Store from the local store (its full-text
// index).
func (m *Memory) Search(ctx context.Context, q memory.SearchQuery) ([]memory.Entry, error) {
	return m.local.Search(ctx, q)
}

// Stats implements memory.Store from the local store.
func (m *Memory) Stats(ctx context.Context, namespace string) (memory.Stats, error) {
	return m.local.Stats(ctx, namespace)
}

// Scan implements memory.Store from the local store.
func (m *Memory) Scan(ctx context.Context, namespace string, fn func(memory.Entry) error) error {
	return m.local.Scan(ctx, namespace, fn)
}
