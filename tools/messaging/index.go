package messaging

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/store"
)

// The message index (store.MessageIndex) in <aacp.dataDir>/store: the
// process that appends to the journal indexes what it appended
// (broker.Options.OnAppend); the first use in a process catches it up
// with the journal (what a crash between an append and its indexing left
// out); Reindex rebuilds it from scratch.

// indexDir is where the message index lives, under the data directory:
// the domain tools' store directory by default, so one database holds
// both.
func indexDir(dataDir string) string { return filepath.Join(dataDir, "store") }

// msgIndex is the Service's message index, opened and caught up on first
// use. Envelopes this process appends are indexed off the appending path:
// add queues them and a writer goroutine indexes what has queued, many in
// one transaction; fresh, before a query, waits until every channel's
// index mark has reached the journal.
type msgIndex struct {
	dataDir string

	mu     sync.Mutex
	db     *store.DB           // guarded by mu
	x      *store.MessageIndex // guarded by mu
	caught bool                // guarded by mu: caught up once in this process

	qmu     sync.Mutex
	queue   []*envelope.Envelope // guarded by qmu: appended, not indexed yet
	waiters []chan struct{}      // guarded by qmu: closed once the queue is written
	running bool                 // guarded by qmu: the writer goroutine runs
	closed  bool                 // guarded by qmu
	log     func(err error)
}

// freshWait bounds how long fresh waits for other processes' writers to
// index what they appended before it reads the journal itself.
const freshWait = 300 * time.Millisecond

// get returns the index, opening it (and catching it up with the
// journal) on first use.
func (m *msgIndex) get(ctx context.Context) (*store.MessageIndex, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.x == nil {
		db, err := store.New(store.Options{Dir: indexDir(m.dataDir)})
		if err != nil {
			return nil, err
		}
		m.db, m.x = db, store.NewMessageIndex(db)
	}
	if !m.caught {
		if _, err := CatchUp(ctx, m.x, m.dataDir); err != nil {
			return nil, err
		}
		m.caught = true
	}
	return m.x, nil
}

// add queues envelopes just appended for the writer; it never waits on
// the database. (A crash before they are written leaves them to the next
// catch-up.)
func (m *msgIndex) add(envs []*envelope.Envelope) {
	m.qmu.Lock()
	defer m.qmu.Unlock()
	if m.closed {
		return
	}
	m.queue = append(m.queue, envs...)
	if !m.running {
		m.running = true
		go m.writer()
	}
}

// writer indexes the queue until it is empty, then stops.
func (m *msgIndex) writer() {
	ctx := context.Background()
	for {
		m.qmu.Lock()
		batch, waiters := m.queue, m.waiters
		m.queue, m.waiters = nil, nil
		if len(batch) == 0 {
			m.running = false
			m.qmu.Unlock()
			for _, w := range waiters {
				close(w)
			}
			return
		}
		m.qmu.Unlock()
		x, err := m.get(ctx)
		if err == nil {
			err = x.Index(ctx, batch)
		}
		if err != nil && m.log != nil {
			m.log(err)
		}
		for _, w := range waiters {
			close(w)
		}
	}
}

// flush waits until what add queued so far is written (or ctx ends).
func (m *msgIndex) flush(ctx context.Context) error {
	m.qmu.Lock()
	if !m.running {
		m.qmu.Unlock()
		return nil
	}
	done := make(chan struct{})
	m.waiters = append(m.waiters, done)
	m.qmu.Unlock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fresh returns the index once it holds everything the journal held when
// fresh was called: this process's queue written, and every channel's
// mark at the channel's last seq, waiting up to freshWait for other
// processes' writers, then catching up from the journal itself. last
// tells a channel's last seq.
func (m *msgIndex) fresh(ctx context.Context, last func(sender, receiver string) (uint64, error)) (*store.MessageIndex, error) {
	if err := m.flush(ctx); err != nil {
		return nil, err
	}
	x, err := m.get(ctx)
	if err != nil {
		return nil, err
	}
	chans, err := journal.ChannelDirs(m.dataDir)
	if err != nil {
		return nil, err
	}
	want := map[string]uint64{}
	for _, ch := range chans {
		seq, err := last(ch[0], ch[1])
		if err != nil {
			return nil, err
		}
		want[envelope.Channel(ch[0], ch[1])] = seq
	}
	deadline := time.Now().Add(freshWait)
	for {
		marks, err := x.Watermarks(ctx)
		if err != nil {
			return nil, err
		}
		behind := false
		for ch, seq := range want {
			behind = behind || marks[ch] < seq
		}
		if !behind {
			return x, nil
		}
		if time.Now().After(deadline) {
			_, err := CatchUp(ctx, x, m.dataDir) // the writer of what is missing died
			return x, err
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (m *msgIndex) close() error {
	m.qmu.Lock()
	m.closed = true
	m.qmu.Unlock()
	_ = m.flush(context.Background())
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.db == nil {
		return nil
	}
	return m.db.Close()
}

// CatchUp indexes what the journal in dataDir holds beyond the index's
// marks, channel by channel, and returns how many envelopes it indexed.
func CatchUp(ctx context.Context, x *store.MessageIndex, dataDir string) (int, error) {
	marks, err := x.Watermarks(ctx)
	if err != nil {
		return 0, err
	}
	chans, err := journal.ChannelDirs(dataDir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ch := range chans {
		var batch []*envelope.Envelope
		flush := func() error {
			if err := x.Index(ctx, batch); err != nil {
				return err
			}
			n += len(batch)
			batch = batch[:0]
			return nil
		}
		err := journal.ScanChannel(dataDir, ch[0], ch[1], marks[envelope.Channel(ch[0], ch[1])], func(env *envelope.Envelope) error {
			batch = append(batch, env)
			if len(batch) == 512 {
				return flush()
			}
			return ctx.Err()
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return n, fmt.Errorf("catch the message index up with channel %s: %w", envelope.Channel(ch[0], ch[1]), err)
		}
	}
	return n, nil
}

// Reindex rebuilds the message index of the data directory dataDir from
// the journal and returns how many envelopes it indexed.
func Reindex(ctx context.Context, dataDir string) (int, error) {
	db, err := store.New(store.Options{Dir: indexDir(dataDir)})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	x := store.NewMessageIndex(db)
	if err := x.Reset(ctx); err != nil {
		return 0, err
	}
	return CatchUp(ctx, x, dataDir)
}
