package memory

import (
	"context"
	"encoding/json"
	"time"
)

// Limits of the memory domain. A request over one of them fails with an
// error that names the limit; nothing is stored.
const (
	// MaxValueBytes bounds a value's compact JSON encoding (100 KiB).
	MaxValueBytes = 100 * 1024
	// MaxValueDepth bounds how deeply arrays and objects nest in a value.
	MaxValueDepth = 64
	// MaxKeyBytes bounds a key's UTF-8 length.
	MaxKeyBytes = 512
	// MaxNamespaceBytes bounds a namespace's length.
	MaxNamespaceBytes = 64
	// MaxQueryBytes bounds a search query's UTF-8 length.
	MaxQueryBytes = 512
	// DefaultSearchLimit and MaxSearchLimit bound search results.
	DefaultSearchLimit, MaxSearchLimit = 10, 50
	// DefaultListLimit and MaxListLimit bound a page of List.
	DefaultListLimit, MaxListLimit = 100, 1000
	// MaxNamespaces bounds the namespaces Stats reports one by one.
	MaxNamespaces = 1000
)

// DefaultNamespace is the namespace of a request that names none.
const DefaultNamespace = "default"

// Entry is one stored value, addressed as {Namespace}:{Key}.
type Entry struct {
	Namespace string
	Key       string
	// Value is compact JSON, at most MaxValueBytes long.
	Value json.RawMessage
	// StoredAt is when the value was last written (UTC).
	StoredAt time.Time
}

// Address returns "{namespace}:{key}". A namespace never contains ':', so
// the address is unambiguous even when the key does.
func (e Entry) Address() string { return e.Namespace + ":" + e.Key }

// Info describes an entry without its value.
type Info struct {
	Namespace string
	Key       string
	StoredAt  time.Time
	// Size is the length in bytes of the value's compact JSON.
	Size int
}

// ListQuery selects a page of entries ordered by namespace, then key (byte
// order), or with Recent the most recently stored first (as Search
// orders). An empty Namespace means every namespace.
type ListQuery struct {
	Namespace string
	Limit     int
	Offset    int
	Recent    bool
}

// ListPage is one page of List and the number of entries that match.
type ListPage struct {
	Entries []Info
	Total   int
}

// SearchQuery selects entries. Without FullText it matches entries whose
// key contains Query (case-sensitive), newest first. With FullText it
// matches entries whose value holds every word of Query (case-insensitive),
// best match first, then newest. An empty Namespace means every namespace.
type SearchQuery struct {
	Query     string
	Namespace string
	Limit     int
	FullText  bool
}

// NamespaceStats summarises one namespace.
type NamespaceStats struct {
	Namespace string
	Entries   int
	Bytes     int64
	Oldest    time.Time
	Newest    time.Time
}

// Stats summarises the store or one namespace. Namespaces is sorted by
// name and holds at most MaxNamespaces items (Truncated says when more
// exist; the totals always cover everything).
type Stats struct {
	Entries    int
	Bytes      int64
	Namespaces []NamespaceStats
	Truncated  bool
}

// ImportCounts tells what PutAll did.
type ImportCounts struct {
	// Created entries did not exist before.
	Created int
	// Replaced entries existed and were overwritten.
	Replaced int
	// Skipped entries existed and were kept (skipExisting).
	Skipped int
}

// Store persists entries. Implementations must be safe for concurrent use
// (and, for shared backends, for use by several processes); each method is
// atomic. Arguments have been validated by Service: a Store does not check
// limits. Errors are *core.Error values (INTERNAL, TIMEOUT, ...).
type Store interface {
	// Put writes e, replacing any entry at the same address; replaced
	// reports whether one existed.
	Put(ctx context.Context, e Entry) (replaced bool, err error)
	// Get returns the entry at namespace:key; found is false when there
	// is none.
	Get(ctx context.Context, namespace, key string) (e Entry, found bool, err error)
	// Delete removes the entry at namespace:key; deleted is false when
	// there was none.
	Delete(ctx context.Context, namespace, key string) (deleted bool, err error)
	// List returns one page of entries and the total that match.
	List(ctx context.Context, q ListQuery) (ListPage, error)
	// Search returns at most q.Limit matching entries (see SearchQuery).
	Search(ctx context.Context, q SearchQuery) ([]Entry, error)
	// Stats summarises namespace, or everything when namespace is "".
	Stats(ctx context.Context, namespace string) (Stats, error)
	// Scan calls fn for every entry of namespace (all when "") in
	// namespace, key order, from one consistent snapshot. An error from
	// fn stops the scan and is returned.
	Scan(ctx context.Context, namespace string, fn func(Entry) error) error
	// PutAll writes entries in one transaction: all of them or, on any
	// error, none. Entries at an existing address replace it, or are
	// skipped when skipExisting. A later entry replaces an earlier one
	// at the same address.
	PutAll(ctx context.Context, entries []Entry, skipExisting bool) (ImportCounts, error)
}
