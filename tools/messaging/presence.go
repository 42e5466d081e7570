package messaging

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcprt/mcprt/core"
)

// presenceDir is the data directory's subdirectory of presence records:
// one small JSON file per agent, <agentId>.json, replaced atomically.
const presenceDir = "presence"

// presenceTimeout bounds one read or write of a shared presence store.
const presenceTimeout = 3 * time.Second

// beatInterval is the least time between two durable heartbeat writes of
// one agent: tool calls in between only update memory.
const beatInterval = time.Second

// presenceRecord is an agent's last sign of life, shared by every process
// on the data directory.
type presenceRecord struct {
	AgentID  string    `json:"agentId"`
	LastSeen time.Time `json:"lastSeen"`
	Status   string    `json:"status,omitempty"`
	Note     string    `json:"note,omitempty"`
	PID      int       `json:"pid"`
	// Released is set when the hosting session ended: the agent is
	// offline until a session hosts it again.
	Released bool `json:"released,omitempty"`
}

// presence keeps the heartbeats of the agents this process hosts and
// reads those of the others. Writes are coalesced: at most one file write
// per agent per beatInterval, made by a flusher goroutine, so that a tool
// call never waits on the disk for its heartbeat.
type presence struct {
	store  PresenceStore
	shared bool // store is read by other machines (not the data directory's files)
	clock  core.Clock

	mu      sync.Mutex
	latest  map[string]presenceRecord // guarded by mu: this process's agents
	written map[string]time.Time      // guarded by mu: when each was last written (real time)
	dirty   map[string]bool           // guarded by mu: beats not written yet
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	started bool // guarded by mu
	closed  bool // guarded by mu
}

// newPresence keeps presence in store, or in the data directory's
// presence files when store is nil.
func newPresence(dataDir string, store PresenceStore, clock core.Clock) *presence {
	shared := store != nil
	if store == nil {
		store = filePresence{dir: filepath.Join(dataDir, presenceDir)}
	}
	return &presence{
		store: store, shared: shared, clock: clock,
		latest: map[string]presenceRecord{}, written: map[string]time.Time{}, dirty: map[string]bool{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
}

// beat records a sign of life of agentID. With sync it is written before
// beat returns (an explicit heartbeat); otherwise the flusher writes it
// within about a second. Status and note, when empty, keep their values.
func (p *presence) beat(agentID, status, note string, sync bool) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	rec := p.latest[agentID]
	rec.AgentID, rec.LastSeen, rec.PID, rec.Released = agentID, p.clock.Now().UTC(), os.Getpid(), false
	if status != "" {
		rec.Status = status
	}
	if note != "" {
		rec.Note = note
	}
	p.latest[agentID] = rec
	if sync {
		delete(p.dirty, agentID)
		p.written[agentID] = time.Now()
		p.mu.Unlock()
		return p.write(rec)
	}
	p.dirty[agentID] = true
	if !p.started {
		p.started = true
		go p.flusher()
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return nil
}

// flusher writes dirty records, each at most once per beatInterval.
func (p *presence) flusher() {
	defer close(p.done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			p.flush(true)
			return
		case <-p.wake:
		case <-t.C:
		}
		if wait := p.flush(false); wait > 0 {
			t.Reset(wait)
		}
	}
}

// flush writes the dirty records that may be written now (all with
// force) and returns how long until the next one may be, or 0.
func (p *presence) flush(force bool) time.Duration {
	p.mu.Lock()
	var recs []presenceRecord
	var next time.Duration
	now := time.Now()
	for id := range p.dirty {
		if wait := beatInterval - now.Sub(p.written[id]); !force && wait > 0 {
			if next == 0 || wait < next {
				next = wait
			}
			continue
		}
		recs = append(recs, p.latest[id])
		p.written[id] = now
		delete(p.dirty, id)
	}
	p.mu.Unlock()
	for _, r := range recs {
		_ = p.write(r) // a lost heartbeat is repaired by the next one
	}
	return next
}

// write replaces the agent's presence record.
func (p *presence) write(rec presenceRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode the presence of %q: %w", rec.AgentID, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), presenceTimeout)
	defer cancel()
	return p.store.Put(ctx, rec.AgentID, data)
}

// read returns agentID's latest presence record: this process's own
// beat when it has one, else the store's; ok is false when there is none
// (or it cannot be read).
func (p *presence) read(ctx context.Context, agentID string) (presenceRecord, bool) {
	p.mu.Lock()
	rec, ok := p.latest[agentID]
	p.mu.Unlock()
	if ok {
		return rec, true
	}
	ctx, cancel := context.WithTimeout(ctx, presenceTimeout)
	defer cancel()
	data, err := p.store.Get(ctx, agentID)
	if err != nil || data == nil {
		return presenceRecord{}, false
	}
	if json.Unmarshal(data, &rec) != nil || rec.AgentID != agentID {
		return presenceRecord{}, false
	}
	return rec, true
}

// forget drops agentID's in-memory beat (its session ended): later reads
// see the store, as other processes do. A shared store records that the
// agent was released, so other machines judge it offline at once.
func (p *presence) forget(agentID string) {
	p.mu.Lock()
	rec, ok := p.latest[agentID]
	dirty := p.dirty[agentID]
	delete(p.latest, agentID)
	delete(p.dirty, agentID)
	p.mu.Unlock()
	if ok && p.shared {
		rec.Released = true
		_ = p.write(rec)
	} else if ok && dirty {
		_ = p.write(rec)
	}
}

// remove deletes agentID's presence record (it was retired). A shared
// store keeps it, marked released: a machine whose registry never listed
// the agent still judges it offline (not unknown, which counts as live).
func (p *presence) remove(ctx context.Context, agentID string) {
	if p.shared {
		if rec, ok := p.read(ctx, agentID); ok && !rec.Released {
			rec.Released = true
			_ = p.write(rec) // a record left unmarked is stale all the same
		}
		return
	}
	ctx, cancel := context.WithTimeout(ctx, presenceTimeout)
	defer cancel()
	_ = p.store.Delete(ctx, agentID) // a record left behind is retired again later
}

// close writes what is pending and stops the flusher.
func (p *presence) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	started := p.started
	p.mu.Unlock()
	if started {
		close(p.stop)
		<-p.done
	}
}
