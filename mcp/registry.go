package mcp

import (
	"encoding/base64"
	"sort"
	"strings"
	"sync"

	"github.com/mcprt/mcprt/internal/jsontext"
)

// registry holds named items (tools, prompts, resources and resource
// templates) sorted by name, pages through them with opaque cursors, and
// announces changes. It is safe for concurrent use; readers get an
// immutable snapshot.
type registry[T any] struct {
	kind    string // "tools": the list method's noun, in cursors and errors
	nameOf  func(T) string
	changed func() // called after every change, outside the lock

	mu     sync.RWMutex
	items  map[string]T // guarded by mu
	sorted []T          // by name, byte order; replaced, never changed in place; guarded by mu
}

func newRegistry[T any](kind string, nameOf func(T) string, changed func()) *registry[T] {
	return &registry[T]{kind: kind, nameOf: nameOf, changed: changed, items: map[string]T{}}
}

// add registers v; it reports false when the name is taken.
func (r *registry[T]) add(v T) bool {
	name := r.nameOf(v)
	r.mu.Lock()
	if _, dup := r.items[name]; dup {
		r.mu.Unlock()
		return false
	}
	r.items[name] = v
	r.rebuildLocked()
	r.mu.Unlock()
	r.changed()
	return true
}

// remove unregisters name; it reports false when no such item exists.
func (r *registry[T]) remove(name string) bool {
	r.mu.Lock()
	if _, ok := r.items[name]; !ok {
		r.mu.Unlock()
		return false
	}
	delete(r.items, name)
	r.rebuildLocked()
	r.mu.Unlock()
	r.changed()
	return true
}

// get returns the item called name.
func (r *registry[T]) get(name string) (T, bool) {
	r.mu.RLock()
	v, ok := r.items[name]
	r.mu.RUnlock()
	return v, ok
}

// getBytes is get for a name given as bytes; it allocates nothing.
func (r *registry[T]) getBytes(name []byte) (T, bool) {
	r.mu.RLock()
	v, ok := r.items[string(name)]
	r.mu.RUnlock()
	return v, ok
}

// all returns every item sorted by name. The slice must not be changed.
func (r *registry[T]) all() []T {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.sorted
}

func (r *registry[T]) rebuildLocked() {
	list := make([]T, 0, len(r.items))
	for _, v := range r.items {
		list = append(list, v)
	}
	sort.Slice(list, func(i, j int) bool { return r.nameOf(list[i]) < r.nameOf(list[j]) })
	r.sorted = list
}

// page returns the items after cursor (nil: from the first), at most size
// of them, and the cursor of the next page ("" on the last page). A cursor
// this registry did not make is -32602.
func (r *registry[T]) page(cursor *string, size int) ([]T, string, error) {
	return r.pageOf(cursor, size, nil)
}

// pageOf is page over the items keep accepts (all of them when keep is
// nil).
func (r *registry[T]) pageOf(cursor *string, size int, keep func(T) bool) ([]T, string, error) {
	after := ""
	if cursor != nil {
		name, ok := r.decodeCursor(*cursor)
		if !ok {
			return nil, "", invalidParams("invalid cursor " + jsontext.Quote(jsontext.Clip(*cursor, 64)) +
				": pass the nextCursor of the previous " + r.kind + "/list result unchanged, or omit it for the first page")
		}
		after = name
	}
	items := r.all()
	if keep != nil {
		kept := make([]T, 0, len(items))
		for _, it := range items {
			if keep(it) {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	start := 0
	if cursor != nil {
		start = sort.Search(len(items), func(i int) bool { return r.nameOf(items[i]) > after })
	}
	end := min(start+size, len(items))
	next := ""
	if end < len(items) {
		next = r.encodeCursor(r.nameOf(items[end-1]))
	}
	return items[start:end], next, nil
}

// Cursors are opaque to clients: the registry's kind and the last name of
// the page, base64url-encoded.
func (r *registry[T]) encodeCursor(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("mcprt-" + r.kind + ":" + name))
}

func (r *registry[T]) decodeCursor(c string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	prefix := "mcprt-" + r.kind + ":"
	if err != nil || !strings.HasPrefix(string(raw), prefix) {
		return "", false
	}
	return strings.TrimPrefix(string(raw), prefix), true
}
