package journal

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
)

// MemoryStore is a Store that keeps everything in memory, for tests and
// for programs that need messaging only within one process lifetime. It
// is not durable: nothing survives the process. Its zero value is not
// ready; use NewMemory.
type MemoryStore struct {
	mu       sync.Mutex
	closed   bool                       // guarded by mu
	channels map[[2]string]*memChannel  // guarded by mu
	ledgers  map[string]*memLedger      // guarded by mu
	claims   map[string]bool            // guarded by mu
	agents   map[string]AgentRecord     // guarded by mu
	dead     []DeadLetter               // guarded by mu
	inboxes  map[string][]chan struct{} // guarded by mu: receiver → notification channels
}

type memChannel struct {
	base uint64 // seqs up to base were compacted away
	msgs []envelope.Envelope
}

var _ Store = (*MemoryStore)(nil)

// NewMemory returns an empty MemoryStore.
func NewMemory() *MemoryStore {
	return &MemoryStore{
		channels: make(map[[2]string]*memChannel),
		ledgers:  make(map[string]*memLedger),
		claims:   make(map[string]bool),
		agents:   make(map[string]AgentRecord),
		inboxes:  make(map[string][]chan struct{}),
	}
}

func (s *MemoryStore) check() error {
	if s.closed {
		return fmt.Errorf("memory journal: %w", ErrClosed)
	}
	return nil
}

// Append implements Store.
func (s *MemoryStore) Append(ctx context.Context, env *envelope.Envelope) (uint64, error) {
	return s.AppendWith(ctx, env, AppendOptions{})
}

// AppendWith implements Appender (opts.Encoded is not needed in memory).
func (s *MemoryStore) AppendWith(ctx context.Context, env *envelope.Envelope, opts AppendOptions) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	key := [2]string{env.Sender.AgentID, env.Receiver.AgentID}
	c := s.channels[key]
	if c == nil {
		c = &memChannel{}
		s.channels[key] = c
	}
	seq := c.base + uint64(len(c.msgs)) + 1
	if opts.Before != nil {
		if err := opts.Before(seq); err != nil {
			return 0, err
		}
	}
	env.Seq = seq
	cp := *env
	cp.Payload = slices.Clone(env.Payload)
	cp.Metadata.Tags = slices.Clone(env.Metadata.Tags)
	c.msgs = append(c.msgs, cp)
	for _, ch := range s.inboxes[env.Receiver.AgentID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return env.Seq, nil
}

// LastSequence implements Store.
func (s *MemoryStore) LastSequence(_ context.Context, sender, receiver string) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	c := s.channels[[2]string{sender, receiver}]
	if c == nil {
		return 0, nil
	}
	return c.base + uint64(len(c.msgs)), nil
}

// CompactChannel implements Store: it drops every transmission below
// `below`.
func (s *MemoryStore) CompactChannel(_ context.Context, sender, receiver string, below uint64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	c := s.channels[[2]string{sender, receiver}]
	if c == nil || below <= c.base+1 {
		return 0, nil
	}
	n := min(int(below-c.base-1), len(c.msgs))
	c.msgs = slices.Delete(c.msgs, 0, n)
	c.base += uint64(n)
	return n, nil
}

// Inbox implements Store.
func (s *MemoryStore) Inbox(receiver string) (Inbox, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	ch := make(chan struct{}, 1)
	ch <- struct{}{}
	s.inboxes[receiver] = append(s.inboxes[receiver], ch)
	return &memInbox{s: s, receiver: receiver, ch: ch, next: make(map[[2]string]uint64)}, nil
}

type memInbox struct {
	s        *MemoryStore
	receiver string
	ch       chan struct{}
	next     map[[2]string]uint64 // channel → next seq to pass; only Read uses it
}

func (in *memInbox) Read(ctx context.Context, fn func(env *envelope.Envelope) error) error {
	in.s.mu.Lock()
	var batch []envelope.Envelope
	var keys [][2]string
	for key, c := range in.s.channels {
		if key[1] != in.receiver {
			continue
		}
		next := max(in.next[key], c.base+1)
		for _, m := range c.msgs[next-c.base-1:] {
			batch = append(batch, m)
			keys = append(keys, key)
		}
	}
	in.s.mu.Unlock()
	for i := range batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		env := batch[i]
		if err := fn(&env); err != nil {
			return err
		}
		in.next[keys[i]] = batch[i].Seq + 1
	}
	return nil
}

func (in *memInbox) Changed() <-chan struct{} { return in.ch }

func (in *memInbox) Close() error {
	in.s.mu.Lock()
	defer in.s.mu.Unlock()
	in.s.inboxes[in.receiver] = slices.DeleteFunc(in.s.inboxes[in.receiver], func(c chan struct{}) bool { return c == in.ch })
	return nil
}

// Ledger implements Store.
func (s *MemoryStore) Ledger(agentID string) (Ledger, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	l := s.ledgers[agentID]
	if l == nil {
		l = &memLedger{ledgerIndex: newLedgerIndex()}
		s.ledgers[agentID] = l
	}
	return l, nil
}

// Claim implements Store.
func (s *MemoryStore) Claim(agentID string) (func() error, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.claims[agentID] {
		return nil, fmt.Errorf("claim agent %q: %w", agentID, ErrClaimed)
	}
	s.claims[agentID] = true
	var once sync.Once
	return func() error {
		once.Do(func() {
			s.mu.Lock()
			delete(s.claims, agentID)
			s.mu.Unlock()
		})
		return nil
	}, nil
}

// PutAgent implements Store.
func (s *MemoryStore) PutAgent(_ context.Context, rec AgentRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if rec.Removed {
		delete(s.agents, rec.AgentID)
	} else {
		s.agents[rec.AgentID] = rec
	}
	return nil
}

// Agents implements Store.
func (s *MemoryStore) Agents(context.Context) ([]AgentRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	out := make([]AgentRecord, 0, len(s.agents))
	for _, a := range s.agents {
		a.Online = s.claims[a.AgentID]
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b AgentRecord) int { return compareStrings(a.AgentID, b.AgentID) })
	return out, nil
}

// AddDeadLetter implements Store.
func (s *MemoryStore) AddDeadLetter(_ context.Context, d DeadLetter) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	s.dead = append(s.dead, d)
	return nil
}

// DeadLetters implements Store.
func (s *MemoryStore) DeadLetters(context.Context) ([]DeadLetter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	return foldDeadLetters(s.dead), nil
}

// PurgeExpired implements Store.
func (s *MemoryStore) PurgeExpired(_ context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	before := len(foldDeadLetters(s.dead))
	s.dead = slices.DeleteFunc(s.dead, func(d DeadLetter) bool { return expired(d.ExpiresAt, now) })
	return before - len(foldDeadLetters(s.dead)), nil
}

// Sync implements Store; memory needs none.
func (s *MemoryStore) Sync(context.Context) error { return nil }

// Close implements Store.
func (s *MemoryStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	clear(s.claims)
	return nil
}

// memLedger is a Ledger in memory.
type memLedger struct{ *ledgerIndex }

func (l *memLedger) Put(ctx context.Context, recs ...Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.apply(recs...)
	return nil
}
func (l *memLedger) Sync(context.Context) error                     { return nil }
func (l *memLedger) Request(id string) (RequestRecord, bool)        { return l.request(id) }
func (l *memLedger) Message(id string) (MessageRecord, bool)        { return l.message(id) }
func (l *memLedger) Delivery(id, recv string) (MessageRecord, bool) { return l.delivery(id, recv) }
func (l *memLedger) History(id string) []MessageRecord              { return l.history(id) }
func (l *memLedger) Inbound(sender, id string) (InboundRecord, bool) {
	return l.inboundRec(sender, id)
}
func (l *memLedger) Unacknowledged(receiver string) []MessageRecord {
	return l.unacknowledged(receiver)
}
func (l *memLedger) PendingRequests(olderThan time.Time) []RequestRecord {
	return l.pendingRequests(olderThan)
}
func (l *memLedger) MessagesInState(st State, olderThan time.Time) []MessageRecord {
	return l.messagesInState(st, olderThan)
}
func (l *memLedger) MarkCompleted(ctx context.Context, id string, o Outcome, ref string) error {
	return l.Put(ctx, OutcomeRec(OutcomeRecord{RequestID: id, Outcome: o, CompletionRef: ref}))
}
func (l *memLedger) MarkFailed(ctx context.Context, id string, err *core.Error) error {
	return l.Put(ctx, OutcomeRec(OutcomeRecord{RequestID: id, Outcome: OutcomeFailed, Error: err}))
}
func (l *memLedger) PurgeExpired(_ context.Context, now time.Time) (int, error) {
	return l.purge(now), nil
}

// foldDeadLetters keeps the latest version of each messageId, in the
// order the messageIds first appeared, without expired-and-deleted ones.
func foldDeadLetters(all []DeadLetter) []DeadLetter {
	idx := make(map[string]int, len(all))
	var out []DeadLetter
	for _, d := range all {
		if i, ok := idx[d.MessageID]; ok {
			out[i] = d
			continue
		}
		idx[d.MessageID] = len(out)
		out = append(out, d)
	}
	return out
}

func expired(at, now time.Time) bool { return !at.IsZero() && !at.After(now) }

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
