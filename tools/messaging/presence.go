package messaging

import (
	"encoding/json"
	"errors"
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
}

// presence keeps the heartbeats of the agents this process hosts and
// reads those of the others. Writes are coalesced: at most one file write
// per agent per beatInterval, made by a flusher goroutine, so that a tool
// call never waits on the disk for its heartbeat.
type presence struct {
	dir   string
	clock core.Clock

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

func newPresence(dataDir string, clock core.Clock) *presence {
	return &presence{
		dir: filepath.Join(dataDir, presenceDir), clock: clock,
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
	rec.AgentID, rec.LastSeen, rec.PID = agentID, p.clock.Now().UTC(), os.Getpid()
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

// write replaces agentID's presence file atomically.
func (p *presence) write(rec presenceRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode the presence of %q: %w", rec.AgentID, err)
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return fmt.Errorf("record the presence of %q: %w", rec.AgentID, err)
	}
	tmp, err := os.CreateTemp(p.dir, "."+rec.AgentID+".*")
	if err != nil {
		return fmt.Errorf("record the presence of %q: %w", rec.AgentID, err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("record the presence of %q: %w", rec.AgentID, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(p.dir, rec.AgentID+".json")); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("record the presence of %q: %w", rec.AgentID, err)
	}
	return nil
}

// read returns agentID's latest presence record: this process's own
// beat when it has one, else the file; ok is false when there is none.
func (p *presence) read(agentID string) (presenceRecord, bool) {
	p.mu.Lock()
	rec, ok := p.latest[agentID]
	p.mu.Unlock()
	if ok {
		return rec, true
	}
	data, err := os.ReadFile(filepath.Join(p.dir, agentID+".json"))
	if err != nil {
		return presenceRecord{}, false
	}
	if json.Unmarshal(data, &rec) != nil || rec.AgentID != agentID {
		return presenceRecord{}, false
	}
	return rec, true
}

// forget drops agentID's in-memory beat (its session ended): later reads
// see the file, as other processes do.
func (p *presence) forget(agentID string) {
	p.mu.Lock()
	rec, ok := p.latest[agentID]
	dirty := p.dirty[agentID]
	delete(p.latest, agentID)
	delete(p.dirty, agentID)
	p.mu.Unlock()
	if ok && dirty {
		_ = p.write(rec)
	}
}

// remove deletes agentID's presence file (it was retired).
func (p *presence) remove(agentID string) {
	_ = os.Remove(filepath.Join(p.dir, agentID+".json")) // gone already is fine
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
