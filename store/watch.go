package store

import (
	"context"
	"sync"
	"time"

	"github.com/mcprt/mcprt/core"
)

// DefaultWatchInterval is how often a Watcher polls the change feed for
// other processes' writes when WatchOptions.Interval is zero.
const DefaultWatchInterval = 500 * time.Millisecond

// watchBatch bounds the changes one poll reads; more are read at once by
// the next.
const watchBatch = 1024

// WatchOptions configure a Watcher.
type WatchOptions struct {
	// Interval is how often the feed is polled for the writes of other
	// processes (this DB's own writes are seen as soon as they commit).
	// Zero means DefaultWatchInterval.
	Interval time.Duration
	// Clock times the polls; nil means core.SystemClock.
	Clock core.Clock
	// Active is asked before each poll; false stops the watching (until
	// the next Start), so a Watcher nobody needs costs nothing. Nil means
	// always active.
	Active func() bool
	// Changes receives the changes each poll finds, in seq order; gap
	// reports that some were trimmed unread, so anything may have
	// changed. It runs on the Watcher's goroutine, one call at a time.
	Changes func(changes []Change, gap bool)
	// Error receives the errors of polls (the next poll tries again); nil
	// drops them.
	Error func(error)
}

// Watcher follows the change feed of a DB while it is started: it polls
// every Interval and after each write this DB commits, and hands what it
// finds to WatchOptions.Changes. Safe for concurrent use.
type Watcher struct {
	db   *DB
	opts WatchOptions

	mu  sync.Mutex
	run *watchRun // nil when not watching; guarded by mu
}

// watchRun is one span of watching, from Start to Stop.
type watchRun struct {
	wake   chan struct{} // a poll is due
	cancel context.CancelFunc
	ctx    context.Context
	unhook func()
	timer  core.Timer // guarded by Watcher.mu
}

// NewWatcher returns a Watcher of d's change feed, not yet started.
func (d *DB) NewWatcher(opts WatchOptions) *Watcher {
	if opts.Interval <= 0 {
		opts.Interval = DefaultWatchInterval
	}
	if opts.Clock == nil {
		opts.Clock = core.SystemClock{}
	}
	if opts.Active == nil {
		opts.Active = func() bool { return true }
	}
	if opts.Changes == nil {
		opts.Changes = func([]Change, bool) {}
	}
	if opts.Error == nil {
		opts.Error = func(error) {}
	}
	return &Watcher{db: d, opts: opts}
}

// Start starts watching unless the Watcher already is. It reads the end
// of the feed first (opening the store if need be), so only the changes
// committed after Start returns, and possibly some before, are reported.
func (w *Watcher) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.run != nil {
		return nil
	}
	last, err := w.db.LastChange(ctx)
	if err != nil {
		return err
	}
	r := &watchRun{wake: make(chan struct{}, 1)}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.unhook = w.db.onWrite(r.kick)
	r.timer = w.opts.Clock.AfterFunc(w.opts.Interval, r.kick)
	w.run = r
	go w.loop(r, last)
	return nil
}

// Watching reports whether the Watcher is started.
func (w *Watcher) Watching() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.run != nil
}

// Stop stops watching; it does not wait for a poll under way. A later
// Start watches again from then on.
func (w *Watcher) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopLocked(w.run)
}

// stopLocked ends r if it is the current run. The caller holds w.mu.
func (w *Watcher) stopLocked(r *watchRun) {
	if r == nil || w.run != r {
		return
	}
	w.run = nil
	r.timer.Stop()
	r.unhook()
	r.cancel()
}

// kick asks for a poll, without blocking.
func (r *watchRun) kick() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// loop polls whenever r is kicked, until r is stopped.
func (w *Watcher) loop(r *watchRun, last int64) {
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-r.wake:
		}
		if !w.opts.Active() {
			w.mu.Lock()
			w.stopLocked(r)
			w.mu.Unlock()
			return
		}
		changes, gap, err := w.db.ChangesSince(r.ctx, last, watchBatch)
		switch {
		case r.ctx.Err() != nil:
			return
		case err != nil:
			w.opts.Error(err)
		case len(changes) > 0 || gap:
			if len(changes) > 0 {
				last = changes[len(changes)-1].Seq
			}
			w.opts.Changes(changes, gap)
			if len(changes) == watchBatch { // more may wait: read on
				r.kick()
			}
		}
		w.mu.Lock()
		if w.run == r { // the next poll is an interval from this one
			r.timer.Stop()
			r.timer = w.opts.Clock.AfterFunc(w.opts.Interval, r.kick)
		}
		w.mu.Unlock()
	}
}
