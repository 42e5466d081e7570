package session

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// MemStore is an in-process Store: a map under a mutex, for tests and
// single-process embedding. Nothing survives the process.
type MemStore struct {
	mu       sync.Mutex
	sessions map[string]*memSession // guarded by mu
	seq      int64                  // creation order; guarded by mu
}

type memSession struct {
	Session
	seq int64
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{sessions: map[string]*memSession{}} }

// Create implements Store.
func (m *MemStore) Create(ctx context.Context, s Session) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[s.ID]; ok {
		return fmt.Errorf("session store: id %q is taken", s.ID)
	}
	m.seq++
	m.sessions[s.ID] = &memSession{Session: s.Clone(), seq: m.seq}
	return nil
}

// Get implements Store.
func (m *MemStore) Get(ctx context.Context, id string) (Session, error) {
	if err := ctx.Err(); err != nil {
		return Session{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return Session{}, ErrNotFound
	}
	return s.Clone(), nil
}

// List implements Store.
func (m *MemStore) List(ctx context.Context, f Filter) ([]Summary, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var hits []*memSession
	for _, s := range m.sessions {
		if (f.Status == "" || s.Status == f.Status) && (f.Initiator == "" || s.Initiator == f.Initiator) {
			hits = append(hits, s)
		}
	}
	slices.SortFunc(hits, func(a, b *memSession) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return int(b.seq - a.seq)
	})
	out := []Summary{}
	for _, s := range hits[:min(len(hits), f.Limit)] {
		out = append(out, summarize(s.Session))
	}
	return out, len(hits), nil
}

// summarize returns the List view of s.
func summarize(s Session) Summary {
	return Summary{ID: s.ID, Initiator: s.Initiator, Task: s.Task, Status: s.Status,
		ParticipantCount: len(s.Participants), CreatedAt: s.CreatedAt}
}

// Update implements Store.
func (m *MemStore) Update(ctx context.Context, id string, fn func(*Session) error) (Session, error) {
	if err := ctx.Err(); err != nil {
		return Session{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return Session{}, ErrNotFound
	}
	work := s.Clone()
	if err := fn(&work); err != nil {
		return Session{}, err
	}
	s.Session = work.Clone()
	return work, nil
}
