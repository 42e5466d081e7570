package memory

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// MemStore is an in-process Store: a map under a mutex. It suits tests and
// single-process embedding; nothing survives the process. Full-text search
// matches whole lower-cased words of IndexText, close to (not exactly)
// what the SQLite backend's tokenizer does.
type MemStore struct {
	mu      sync.RWMutex
	entries map[[2]string]memEntry // by {namespace, key}; guarded by mu
	rev     int64                  // last write's order; guarded by mu
}

type memEntry struct {
	Entry
	rev int64
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{entries: map[[2]string]memEntry{}} }

// clone copies e's value so callers never share bytes with the store.
func clone(e Entry) Entry {
	e.Value = slices.Clone(e.Value)
	return e
}

// Put implements Store.
func (m *MemStore) Put(ctx context.Context, e Entry) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.putLocked(e, false), nil
}

func (m *MemStore) putLocked(e Entry, skipExisting bool) (existed bool) {
	k := [2]string{e.Namespace, e.Key}
	_, existed = m.entries[k]
	if existed && skipExisting {
		return true
	}
	m.rev++
	m.entries[k] = memEntry{Entry: clone(e), rev: m.rev}
	return existed
}

// Get implements Store.
func (m *MemStore) Get(ctx context.Context, namespace, key string) (Entry, bool, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, false, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.entries[[2]string{namespace, key}]
	if !ok {
		return Entry{}, false, nil
	}
	return clone(e.Entry), true, nil
}

// Delete implements Store.
func (m *MemStore) Delete(ctx context.Context, namespace, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{namespace, key}
	_, ok := m.entries[k]
	delete(m.entries, k)
	return ok, nil
}

// sorted returns the entries of namespace (all when "") in namespace, key
// order. Callers hold mu.
func (m *MemStore) sorted(namespace string) []memEntry {
	var out []memEntry
	for _, e := range m.entries {
		if namespace == "" || e.Namespace == namespace {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b memEntry) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out
}

// List implements Store.
func (m *MemStore) List(ctx context.Context, q ListQuery) (ListPage, error) {
	if err := ctx.Err(); err != nil {
		return ListPage{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	all := m.sorted(q.Namespace)
	if q.Recent {
		all = m.byRecency(all)
	}
	page := ListPage{Entries: []Info{}, Total: len(all)}
	for i := q.Offset; i < len(all) && len(page.Entries) < q.Limit; i++ {
		e := all[i]
		page.Entries = append(page.Entries, Info{Namespace: e.Namespace, Key: e.Key, StoredAt: e.StoredAt, Size: len(e.Value)})
	}
	return page, nil
}

// Search implements Store.
func (m *MemStore) Search(ctx context.Context, q SearchQuery) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	terms := Terms(q.Query)
	var hits []memEntry
	for _, e := range m.sorted(q.Namespace) {
		if q.FullText && hasAll(Terms(IndexText(e.Value)), terms) || !q.FullText && strings.Contains(e.Key, q.Query) {
			hits = append(hits, e)
		}
	}
	slices.SortFunc(hits, func(a, b memEntry) int {
		if c := b.StoredAt.Compare(a.StoredAt); c != 0 {
			return c
		}
		return int(b.rev - a.rev)
	})
	out := []Entry{}
	for _, e := range hits[:min(len(hits), q.Limit)] {
		out = append(out, clone(e.Entry))
	}
	return out, nil
}

func hasAll(words, terms []string) bool {
	for _, t := range terms {
		if !slices.Contains(words, t) {
			return false
		}
	}
	return true
}

// Stats implements Store.
func (m *MemStore) Stats(ctx context.Context, namespace string) (Stats, error) {
	if err := ctx.Err(); err != nil {
		return Stats{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	st := Stats{Namespaces: []NamespaceStats{}}
	for _, e := range m.sorted(namespace) {
		st.Entries++
		st.Bytes += int64(len(e.Value))
		n := len(st.Namespaces)
		if n == 0 || st.Namespaces[n-1].Namespace != e.Namespace {
			st.Namespaces = append(st.Namespaces, NamespaceStats{Namespace: e.Namespace, Oldest: e.StoredAt, Newest: e.StoredAt})
			n++
		}
		ns := &st.Namespaces[n-1]
		ns.Entries++
		ns.Bytes += int64(len(e.Value))
		if e.StoredAt.Before(ns.Oldest) {
			ns.Oldest = e.StoredAt
		}
		if e.StoredAt.After(ns.Newest) {
			ns.Newest = e.StoredAt
		}
	}
	if len(st.Namespaces) > MaxNamespaces {
		st.Namespaces, st.Truncated = st.Namespaces[:MaxNamespaces], true
	}
	return st, nil
}

// Scan implements Store. fn runs on a snapshot taken under the lock, so it
// may call back into the store.
func (m *MemStore) Scan(ctx context.Context, namespace string, fn func(Entry) error) error {
	m.mu.RLock()
	all := m.sorted(namespace)
	m.mu.RUnlock()
	for _, e := range all {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(clone(e.Entry)); err != nil {
			return err
		}
	}
	return nil
}

// PutAll implements Store.
func (m *MemStore) PutAll(ctx context.Context, entries []Entry, skipExisting bool) (ImportCounts, error) {
	if err := ctx.Err(); err != nil {
		return ImportCounts{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var c ImportCounts
	for _, e := range entries {
		switch existed := m.putLocked(e, skipExisting); {
		case !existed:
			c.Created++
		case skipExisting:
			c.Skipped++
		default:
			c.Replaced++
		}
	}
	return c, nil
}

// byRecency sorts entries most recently stored first, as Search does.
func (m *MemStore) byRecency(entries []memEntry) []memEntry {
	slices.SortFunc(entries, func(a, b memEntry) int {
		if c := b.StoredAt.Compare(a.StoredAt); c != 0 {
			return c
		}
		return int(b.rev - a.rev)
	})
	return entries
}
