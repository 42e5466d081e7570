package trace

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/core"
)

// Defaults of RecorderOptions.
const (
	DefaultQueueSize   = 4096
	DefaultBatchSize   = 1024
	DefaultMaxCaptured = 4096
	DefaultMaxAge      = 7 * 24 * time.Hour
	DefaultMaxEvents   = 100000
	// pruneEvery is how often the writer applies retention.
	pruneEvery = time.Minute
)

// RecorderOptions configure a Recorder. Zero values take the defaults.
type RecorderOptions struct {
	// Store receives the events. Required.
	Store Store
	// QueueSize bounds the events waiting to be written; when the queue
	// is full, Record drops the event and counts it.
	QueueSize int
	// BatchSize bounds the events written in one transaction.
	BatchSize int
	// Capture keeps each call's arguments and result, redacted with
	// Redactor and bounded by MaxCaptured bytes each.
	Capture     bool
	MaxCaptured int
	Redactor    *core.Redactor
	// MaxAge and MaxEvents are the retention: older events, and the
	// oldest beyond the newest MaxEvents, are deleted about once a
	// minute while events arrive.
	MaxAge    time.Duration
	MaxEvents int
	// Linger is how long the writer waits for more events after the first
	// of a batch before it writes a batch that is not full: calls that
	// come one after another then share a transaction instead of paying
	// one each. Zero writes at once. Flush and Close cut it short.
	Linger time.Duration
	// Clock stamps retention and times Linger; nil means
	// core.SystemClock.
	Clock core.Clock
	// Logger reports write failures; nil discards them.
	Logger *slog.Logger
}

// Recorder writes events to a Store asynchronously: Record only queues
// (it never blocks), one goroutine writes batches. Safe for concurrent
// use.
//
// The queue is a slice under a mutex that the writer swaps for an empty
// one, taking every queued event at once: a Record costs one uncontended
// lock and an append, and the writer takes the lock once per batch, not
// once per event as a channel's receiver would.
type Recorder struct {
	opts RecorderOptions

	qmu     sync.Mutex // guards pending and results
	pending []Event    // queued events, oldest first; at most QueueSize
	results []any      // their results, index for index, when capturing

	stopped  atomic.Bool   // Close was called: Record refuses
	accepted atomic.Uint64 // events queued
	dropped  atomic.Uint64 // events refused: queue full or closed
	failed   atomic.Uint64 // events lost to write errors

	mu       sync.Mutex    // guards written, progress, closed
	written  uint64        // events handled by the writer (stored or failed)
	progress chan struct{} // closed and replaced after every batch
	closed   bool

	stop     chan struct{} // closed by Close
	done     chan struct{} // closed when the writer has exited
	flushNow chan struct{} // 1-buffered: Flush asks the writer to stop lingering
	full     chan struct{} // 1-buffered: Record says a batch is waiting
	wake     chan struct{} // 1-buffered: Record says the queue is no longer empty
}

// NewRecorder starts a Recorder. Close it to write what is queued.
func NewRecorder(opts RecorderOptions) *Recorder {
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.MaxCaptured <= 0 {
		opts.MaxCaptured = DefaultMaxCaptured
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = DefaultMaxAge
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = DefaultMaxEvents
	}
	if opts.Clock == nil {
		opts.Clock = core.SystemClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Redactor == nil {
		opts.Redactor = core.NewRedactor(nil)
	}
	r := &Recorder{opts: opts, progress: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
		flushNow: make(chan struct{}, 1), full: make(chan struct{}, 1), wake: make(chan struct{}, 1)}
	go r.run()
	return r
}

// Capturing reports whether arguments and results are kept.
func (r *Recorder) Capturing() bool { return r.opts.Capture }

// Record queues ev (with the call's result, used only when capturing). It
// never blocks: when the queue is full or the Recorder is closed the event
// is dropped and counted, and Record returns false.
func (r *Recorder) Record(ev Event, result any) bool {
	if r.stopped.Load() {
		r.dropped.Add(1)
		return false
	}
	if !r.opts.Capture {
		ev.Args, ev.Result, result = nil, nil, nil
	}
	r.qmu.Lock()
	n := len(r.pending)
	if n >= r.opts.QueueSize {
		r.qmu.Unlock()
		r.dropped.Add(1)
		return false
	}
	r.pending = append(r.pending, ev)
	if r.opts.Capture {
		r.results = append(r.results, result)
	}
	r.qmu.Unlock()
	r.accepted.Add(1)
	if n == 0 {
		signal(r.wake)
	}
	if r.opts.Linger > 0 && n+1 == r.opts.BatchSize {
		signal(r.full) // a whole batch waits: the lingering writer need not wait longer
	}
	return true
}

// signal puts a token in a 1-buffered channel unless one is there.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// queued returns how many events wait.
func (r *Recorder) queued() int {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	return len(r.pending)
}

// Counts reports the events queued, dropped (queue full) and lost to
// write errors since the Recorder started.
func (r *Recorder) Counts() (accepted, dropped, failed uint64) {
	return r.accepted.Load(), r.dropped.Load(), r.failed.Load()
}

// Flush waits until every event queued before the call has been handled
// by the writer, or ctx ends.
func (r *Recorder) Flush(ctx context.Context) error {
	target := r.accepted.Load()
	select {
	case r.flushNow <- struct{}{}: // write now, do not linger
	default:
	}
	for {
		r.mu.Lock()
		if r.written >= target || r.closed && r.writerDone() {
			r.mu.Unlock()
			return nil
		}
		ch := r.progress
		r.mu.Unlock()
		select {
		case <-ch:
		case <-r.done:
			return nil
		case <-ctx.Done():
			return core.Errorf(core.CodeTimeout, "trace: events were still being written when the wait ended: %v", context.Cause(ctx))
		}
	}
}

func (r *Recorder) writerDone() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Close stops accepting events, writes those queued, and waits for the
// writer until ctx ends. An event recorded while Close runs may be lost.
// It is safe to call more than once.
func (r *Recorder) Close(ctx context.Context) error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		r.stopped.Store(true)
		close(r.stop)
	}
	r.mu.Unlock()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return core.Errorf(core.CodeTimeout, "trace: %d queued events were not written before the wait ended", r.queued())
	}
}

// run is the writer: it waits for an event, lingers for more (when
// Linger is set), takes the queued events (only whole batches when a
// whole batch ended the linger; see takeBatches), writes them in batches
// of at most BatchSize, one transaction each, and repeats.
func (r *Recorder) run() {
	defer close(r.done)
	var spare []Event // the slice taken last time, given back as the queue
	var spareResults []any
	lastPrune := time.Time{}
	for {
		if r.queued() == 0 {
			select {
			case <-r.wake:
				continue
			case <-r.stop:
				// Write what is left, without waiting for more.
				for {
					spare, spareResults = r.takeBatches(spare, spareResults, false)
					if len(spare) == 0 {
						return
					}
					r.writeAll(spare, spareResults)
				}
			}
		}
		wholeBatches := r.opts.Linger > 0
		if wholeBatches && r.queued() < r.opts.BatchSize {
			wholeBatches = r.linger()
		}
		spare, spareResults = r.takeBatches(spare, spareResults, wholeBatches)
		r.writeAll(spare, spareResults)
		if now := r.opts.Clock.Now(); now.Sub(lastPrune) >= pruneEvery {
			lastPrune = now
			r.prune(now)
		}
	}
}

// linger waits, without waking for each event, until Linger has passed, a
// whole batch is queued, or Flush or Close asks for the write. It reports
// whether a whole batch woke it.
func (r *Recorder) linger() (full bool) {
	expired := make(chan struct{})
	t := r.opts.Clock.AfterFunc(r.opts.Linger, func() { close(expired) })
	select {
	case <-expired:
	case <-r.full:
		full = true
	case <-r.flushNow:
	case <-r.stop:
	}
	t.Stop()
	return full
}

// takeBatches swaps the queue for the emptied slices given (those taken
// last time, cleared so that they hold no event) and returns what was
// queued: everything, or with wholeBatches only whole batches, the rest
// (events that came while the writer woke) staying queued, first, for the
// next batch instead of costing a transaction of their own.
func (r *Recorder) takeBatches(empty []Event, emptyResults []any, wholeBatches bool) ([]Event, []any) {
	clear(empty)
	clear(emptyResults)
	r.qmu.Lock()
	evs, res := r.pending, r.results
	cut := len(evs)
	if wholeBatches {
		cut -= cut % r.opts.BatchSize
	}
	r.pending = append(empty[:0], evs[cut:]...)
	r.results = emptyResults[:0]
	if len(res) > cut {
		r.results = append(r.results, res[cut:]...)
		clear(res[cut:])
		res = res[:cut]
	}
	r.qmu.Unlock()
	clear(evs[cut:])
	return evs[:cut], res
}

// writeAll prepares taken events for the store (finish) and writes them in
// batches of at most BatchSize.
func (r *Recorder) writeAll(evs []Event, results []any) {
	for i := range evs {
		var res any
		if i < len(results) {
			res = results[i]
		}
		r.finish(&evs[i], res)
	}
	for len(evs) > 0 {
		n := min(len(evs), r.opts.BatchSize)
		r.write(evs[:n])
		evs = evs[n:]
	}
}

// finish prepares an event for the store: captured parts are redacted and
// bounded here, off the call's path (without capture, Record dropped them).
func (r *Recorder) finish(ev *Event, result any) {
	if !r.opts.Capture {
		return
	}
	if ev.Args != nil {
		ev.Args = r.capture(ev.Args)
	}
	if result != nil {
		ev.Result = r.capture(result)
	}
}

// capture redacts v and bounds its JSON to MaxCaptured bytes; a longer
// value becomes {"truncated":true,"bytes":N,"preview":"..."}.
func (r *Recorder) capture(v any) json.RawMessage {
	red := r.opts.Redactor.Redact(v)
	b, err := json.Marshal(red)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"unencodable": err.Error()})
	}
	if len(b) <= r.opts.MaxCaptured {
		return b
	}
	preview := core.Clip(string(b), r.opts.MaxCaptured/2)
	out, _ := json.Marshal(struct {
		Truncated bool   `json:"truncated"`
		Bytes     int    `json:"bytes"`
		Preview   string `json:"preview"`
	}{true, len(b), preview})
	return out
}

func (r *Recorder) write(batch []Event) {
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err := r.opts.Store.Append(ctx, batch)
	cancel()
	if err != nil {
		r.failed.Add(uint64(len(batch)))
		r.opts.Logger.Warn("trace events could not be written; they are lost", "events", len(batch), "error", err.Error())
	}
	r.mu.Lock()
	r.written += uint64(len(batch))
	close(r.progress)
	r.progress = make(chan struct{})
	r.mu.Unlock()
}

func (r *Recorder) prune(now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := r.opts.Store.Prune(ctx, now.Add(-r.opts.MaxAge), r.opts.MaxEvents)
	switch {
	case err != nil && !errors.Is(err, context.Canceled):
		r.opts.Logger.Warn("trace retention failed; old events stay for now", "error", err.Error())
	case n > 0:
		r.opts.Logger.Debug("trace retention deleted old events", "events", n)
	}
}
