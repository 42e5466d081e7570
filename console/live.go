package console

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/store"
)

// Live-event kinds: what changed. A page names the kinds it shows
// (data-live) and reloads its content when one of them arrives.
const (
	kindMessages     = "messages"
	kindPresence     = "presence"
	kindReservations = "reservations"
	kindTasks        = "tasks"
	kindTrace        = "trace"
	kindMemory       = "memory"
	kindSession      = "session"
)

// maxSubscribers bounds the open event streams.
const maxSubscribers = 64

// keepAlive is how often an idle event stream gets a comment, so that
// proxies and browsers keep it open.
const keepAlive = 15 * time.Second

// hub watches the journal, the store and the interface sources while
// some browser listens, and tells every listener what changed.
type hub struct {
	c *Console

	mu      sync.Mutex
	subs    map[chan string]struct{} // guarded by mu
	stop    context.CancelFunc       // guarded by mu: nil when not watching
	closed  bool                     // guarded by mu
	watcher *store.Watcher

	// What the last poll saw, kept across spans of watching: a page
	// rendered just before its stream subscribes (a navigation) must
	// still hear of a change made in between.
	seenMu                    sync.Mutex
	seen                      bool
	files, online, res, tasks uint64
	storeSeq                  int64
}

func newHub(c *Console) *hub {
	h := &hub{c: c, subs: map[chan string]struct{}{}}
	h.watcher = c.db.NewWatcher(store.WatchOptions{
		Interval: c.cfg.PollInterval, Clock: c.clock,
		Active: func() bool {
			h.mu.Lock()
			defer h.mu.Unlock()
			return len(h.subs) > 0
		},
		Changes: func(changes []store.Change, gap bool) {
			kinds := map[string]bool{}
			h.seenMu.Lock()
			for _, ch := range changes {
				kinds[ch.Domain] = true
				h.storeSeq = max(h.storeSeq, ch.Seq)
			}
			h.seenMu.Unlock()
			if gap {
				kinds[kindTrace], kinds[kindMemory], kinds[kindSession] = true, true, true
			}
			h.publish(kinds)
		},
	})
	return h
}

// subscribe adds a listener and starts watching when it is the first.
func (h *hub) subscribe() (chan string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("the console is shutting down")
	}
	if len(h.subs) >= maxSubscribers {
		return nil, fmt.Errorf("too many live views are open (%d); close some console tabs", maxSubscribers)
	}
	ch := make(chan string, 16)
	h.subs[ch] = struct{}{}
	if h.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		h.stop = cancel
		h.catchUp(ctx)
		go h.poll(ctx)
		if err := h.watcher.Start(ctx); err != nil {
			h.c.log.Warn("console: cannot follow the store's change feed", "error", err.Error())
		}
	}
	return ch, nil
}

// unsubscribe removes a listener and stops watching after the last.
func (h *hub) unsubscribe(ch chan string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, ch)
	if len(h.subs) == 0 && h.stop != nil {
		h.stop()
		h.stop = nil
		h.watcher.Stop()
	}
}

func (h *hub) close() {
	h.mu.Lock()
	h.closed = true
	stop := h.stop
	h.stop = nil
	for ch := range h.subs {
		close(ch)
		delete(h.subs, ch)
	}
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
	h.watcher.Stop()
}

// publish sends the changed kinds to every listener; a listener that is
// behind loses the event (the next one reloads the same content).
func (h *hub) publish(kinds map[string]bool) {
	if len(kinds) == 0 {
		return
	}
	list := make([]string, 0, len(kinds))
	for k := range kinds {
		list = append(list, k)
	}
	sort.Strings(list)
	msg := strings.Join(list, ",")
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- msg:
		default:
		}
	}
}

// catchUp tells of the store's changes made while nobody watched (the
// watcher starts from the feed's end).
func (h *hub) catchUp(ctx context.Context) {
	seq, err := h.c.db.LastChange(ctx)
	if err != nil {
		return
	}
	h.seenMu.Lock()
	defer h.seenMu.Unlock()
	if h.storeSeq != 0 && seq != h.storeSeq {
		go h.publish(map[string]bool{kindTrace: true, kindMemory: true, kindSession: true})
	}
	h.storeSeq = seq
}

// poll looks at the journal and the interface sources every poll
// interval until ctx ends.
func (h *hub) poll(ctx context.Context) {
	interval := h.c.cfg.PollInterval
	for {
		h.publish(h.look(ctx))
		if !sleep(ctx, h.c.clock, interval) {
			return
		}
	}
}

// look compares the journal and the sources with what the last look saw
// and returns the kinds that changed.
func (h *hub) look(ctx context.Context) map[string]bool {
	h.seenMu.Lock()
	defer h.seenMu.Unlock()
	kinds := map[string]bool{}
	first := !h.seen
	h.seen = true
	if f, o, _, err := h.c.journal.fingerprints(ctx); err == nil {
		if !first && f != h.files {
			kinds[kindMessages] = true
		}
		if !first && o != h.online {
			kinds[kindPresence] = true
		}
		h.files, h.online = f, o
	}
	if src := h.c.opts.Reservations; src != nil {
		if list, err := src.Active(ctx, 1000); err == nil {
			if v := hashOf(list); !first && v != h.res {
				kinds[kindReservations] = true
			}
			h.res = hashOf(list)
		}
	}
	if src := h.c.opts.Tasks; src != nil {
		if list, err := src.List(ctx, 1000); err == nil {
			if v := hashOf(list); !first && v != h.tasks {
				kinds[kindTasks] = true
			}
			h.tasks = hashOf(list)
		}
	}
	return kinds
}

// sleep waits d on clock, or until ctx ends (false).
func sleep(ctx context.Context, clock core.Clock, d time.Duration) bool {
	done := make(chan struct{})
	t := clock.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}

func hashOf(v any) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%+v", v)
	return h.Sum64()
}

// serve streams the changes to one browser as server-sent events:
// "event: change" with the comma-separated kinds as data.
func (h *hub) serve(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "this connection cannot stream events", http.StatusInternalServerError)
		return
	}
	ch, err := h.subscribe()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer h.unsubscribe(ch)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n: live\n\n")
	fl.Flush()
	for {
		beat := make(chan struct{})
		t := h.c.clock.AfterFunc(keepAlive, func() { close(beat) })
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case msg, ok := <-ch:
			t.Stop()
			if !ok {
				return
			}
			if _, err := fmt.Fprintf(w, "event: change\ndata: %s\n\n", msg); err != nil {
				return
			}
		case <-beat:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
		fl.Flush()
	}
}
