package aacptools

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

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
// use.
type msgIndex struct {
	dataDir string

	mu     sync.Mutex
	db     *store.DB           // guarded by mu
	x      *store.MessageIndex // guarded by mu
	caught bool                // guarded by mu: caught up once in this process
}

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

// add indexes envelopes just appended; a failure is returned for the
// caller to log (the journal has them; the next catch-up adds them).
func (m *msgIndex) add(ctx context.Context, envs []*envelope.Envelope) error {
	x, err := m.get(ctx)
	if err != nil {
		return err
	}
	return x.Index(ctx, envs)
}

func (m *msgIndex) close() error {
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
