package memory

import (
	"context"
	"encoding/json"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/internal/check"
)

// Service is the memory domain: it validates requests, stamps times and
// delegates to a Store. It is safe for concurrent use when its Store is.
type Service struct {
	store Store
	clock core.Clock
}

// NewService returns a Service over store. A nil clock means
// core.SystemClock.
func NewService(store Store, clock core.Clock) *Service {
	if clock == nil {
		clock = core.SystemClock{}
	}
	return &Service{store: store, clock: clock}
}

// Put stores value at namespace:key (namespace "" means DefaultNamespace),
// replacing what was there; replaced reports whether something was. The
// returned entry holds the compact value and its StoredAt.
func (s *Service) Put(ctx context.Context, namespace, key string, value json.RawMessage) (e Entry, replaced bool, err error) {
	if namespace, err = normNamespace(namespace); err != nil {
		return Entry{}, false, err
	}
	if err := checkKey(key); err != nil {
		return Entry{}, false, err
	}
	compact, err := normValue(value)
	if err != nil {
		return Entry{}, false, err
	}
	e = Entry{Namespace: namespace, Key: key, Value: compact, StoredAt: s.clock.Now().UTC()}
	replaced, err = s.store.Put(ctx, e)
	if err != nil {
		return Entry{}, false, err
	}
	return e, replaced, nil
}

// Get returns the entry at namespace:key; found is false when none exists
// (that is not an error).
func (s *Service) Get(ctx context.Context, namespace, key string) (e Entry, found bool, err error) {
	if namespace, err = normNamespace(namespace); err != nil {
		return Entry{}, false, err
	}
	if err := checkKey(key); err != nil {
		return Entry{}, false, err
	}
	return s.store.Get(ctx, namespace, key)
}

// Delete removes the entry at namespace:key. Deleting what does not exist
// succeeds with deleted false.
func (s *Service) Delete(ctx context.Context, namespace, key string) (deleted bool, err error) {
	if namespace, err = normNamespace(namespace); err != nil {
		return false, err
	}
	if err := checkKey(key); err != nil {
		return false, err
	}
	return s.store.Delete(ctx, namespace, key)
}

// List returns a page of entries (without values). A zero Limit means
// DefaultListLimit; Namespace "" means every namespace.
func (s *Service) List(ctx context.Context, q ListQuery) (ListPage, error) {
	if q.Namespace != "" {
		if err := checkNamespace(q.Namespace); err != nil {
			return ListPage{}, err
		}
	}
	var err error
	if q.Limit, err = check.Limit("limit", q.Limit, DefaultListLimit, MaxListLimit); err != nil {
		return ListPage{}, err
	}
	if q.Offset < 0 {
		return ListPage{}, check.Invalid("offset", "is %d; give 0 or more", q.Offset)
	}
	return s.store.List(ctx, q)
}

// Search finds entries (see SearchQuery). A zero Limit means
// DefaultSearchLimit; Namespace "" means every namespace.
func (s *Service) Search(ctx context.Context, q SearchQuery) ([]Entry, error) {
	if err := check.Text("query", q.Query, MaxQueryBytes, true); err != nil {
		return nil, err
	}
	if q.FullText && len(Terms(q.Query)) == 0 {
		return nil, check.Invalid("query", "%q has no words to look for; a full-text query needs at least one letter or digit", q.Query)
	}
	if q.Namespace != "" {
		if err := checkNamespace(q.Namespace); err != nil {
			return nil, err
		}
	}
	var err error
	if q.Limit, err = check.Limit("limit", q.Limit, DefaultSearchLimit, MaxSearchLimit); err != nil {
		return nil, err
	}
	return s.store.Search(ctx, q)
}

// Stats summarises namespace, or every namespace when it is "".
func (s *Service) Stats(ctx context.Context, namespace string) (Stats, error) {
	if namespace != "" {
		if err := checkNamespace(namespace); err != nil {
			return Stats{}, err
		}
	}
	return s.store.Stats(ctx, namespace)
}
