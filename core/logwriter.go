package core

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// LogWriterOptions configures a LogWriter. Zero values mean the defaults.
type LogWriterOptions struct {
	// FlushInterval is the longest an entry waits in the buffer before the
	// background goroutine writes it (default 20 ms).
	FlushInterval time.Duration
	// MaxBuffered bounds the bytes waiting to be written (default 1 MiB).
	// An entry that does not fit is dropped whole and counted.
	MaxBuffered int
	// CloseTimeout bounds Close (default 1 s).
	CloseTimeout time.Duration
	// Clock gives the time of the drop summary line (nil means
	// SystemClock).
	Clock Clock
}

// Defaults of LogWriterOptions.
const (
	defaultFlushInterval = 20 * time.Millisecond
	defaultMaxBuffered   = 1 << 20
	defaultCloseTimeout  = time.Second
)

// DropSummaryMessage is the msg of the line a LogWriter writes, at level
// WARN, before the first output after entries were dropped:
//
//	{"time":"…","level":"WARN","msg":"log entries dropped while stderr was not being read","dropped":N}
const DropSummaryMessage = "log entries dropped while stderr was not being read"

// LogWriter stands between the loggers and a destination that may stall
// (stderr, read by a client that may never read it). Its contract:
//
//   - Write never waits for the destination. It copies the entry (one
//     Write call, as a slog handler makes per record) into a buffer and
//     returns. A background goroutine writes the buffer, many entries in
//     one call, every FlushInterval or as soon as a large batch has
//     gathered. Entries are never interleaved or reordered.
//   - The buffer is bounded by MaxBuffered. While the destination is
//     stalled and the buffer is full, each further entry is dropped whole
//     and counted (Dropped). Entries whose write fails with an error are
//     counted as dropped too.
//   - The first write after entries were dropped starts with one JSON line
//     at level WARN, msg DropSummaryMessage, saying how many ("dropped": N).
//   - Flush and Close wait at most until their context ends (Close: at most
//     CloseTimeout), so a stalled destination never hangs an exit. After
//     Close, Write drops and counts every entry.
//
// All methods are safe for concurrent use. A dropped entry is not an error:
// Write returns len(p), nil either way.
type LogWriter struct {
	out          io.Writer
	interval     time.Duration
	max          int
	kickAt       int // buffer size that wakes the writer before its interval ends
	closeTimeout time.Duration
	clock        Clock

	dropped atomic.Uint64 // every entry dropped so far

	mu         sync.Mutex
	buf        []byte        // entries waiting; guarded by mu
	spare      []byte        // the other buffer, reused; guarded by mu
	entries    uint64        // number of entries in buf; guarded by mu
	unreported uint64        // dropped since the last summary line; guarded by mu
	accepted   uint64        // bytes accepted into buf, ever; guarded by mu
	written    uint64        // bytes whose write has ended, ever; guarded by mu
	lastErr    error         // the result of the last write; guarded by mu
	progress   chan struct{} // closed after the next write ends, when someone waits; guarded by mu
	closed     bool          // guarded by mu

	kick    chan struct{} // 1-buffered: wake the writer now
	stop    chan struct{} // closed by Close
	stopped chan struct{} // closed when the writer goroutine ends
}

// flushAt is the buffer size at which the writer is woken before its
// interval ends, which keeps the batches (and the buffer) small under a
// flood of entries.
const flushAt = 32 << 10

// NewLogWriter returns a LogWriter writing to out and starts its writer
// goroutine. Call Close to stop it.
func NewLogWriter(out io.Writer, opts LogWriterOptions) *LogWriter {
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = defaultFlushInterval
	}
	if opts.MaxBuffered <= 0 {
		opts.MaxBuffered = defaultMaxBuffered
	}
	if opts.CloseTimeout <= 0 {
		opts.CloseTimeout = defaultCloseTimeout
	}
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	w := &LogWriter{
		out:          out,
		interval:     opts.FlushInterval,
		max:          opts.MaxBuffered,
		kickAt:       min(flushAt, max(opts.MaxBuffered/2, 1)),
		closeTimeout: opts.CloseTimeout,
		clock:        opts.Clock,
		kick:         make(chan struct{}, 1),
		stop:         make(chan struct{}),
		stopped:      make(chan struct{}),
	}
	go w.loop()
	return w
}

// Write buffers a copy of p, one entry, and returns len(p), nil. It never
// waits for the destination: when p does not fit in the buffer, or the
// writer is closed, p is dropped and counted instead.
func (w *LogWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	w.mu.Lock()
	if w.closed || len(w.buf)+len(p) > w.max {
		w.unreported++
		w.mu.Unlock()
		w.dropped.Add(1)
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	w.entries++
	w.accepted += uint64(len(p))
	wake := len(w.buf) >= w.kickAt
	w.mu.Unlock()
	if wake {
		w.wake()
	}
	return len(p), nil
}

// Dropped returns how many entries have been dropped so far: refused
// because the buffer was full or the writer closed, or lost to a failed
// write.
func (w *LogWriter) Dropped() uint64 { return w.dropped.Load() }

// Flush asks the writer goroutine to write everything buffered now and
// waits until it has, or until ctx is done. It returns the error of the
// last write, or, when ctx ends first, an error wrapping ctx.Err().
func (w *LogWriter) Flush(ctx context.Context) error {
	w.mu.Lock()
	target, done := w.accepted, w.written >= w.accepted
	err := w.lastErr
	w.mu.Unlock()
	if done { // nothing pending: no wake-up left behind to split the next batch
		return err
	}
	w.wake()
	for {
		w.mu.Lock()
		if w.written >= target {
			err := w.lastErr
			w.mu.Unlock()
			return err
		}
		if w.progress == nil {
			w.progress = make(chan struct{})
		}
		ch := w.progress
		w.mu.Unlock()
		select {
		case <-ch:
		case <-w.stopped: // the last batch is written: nothing is pending
			w.mu.Lock()
			err := w.lastErr
			w.mu.Unlock()
			return err
		case <-ctx.Done():
			return w.stalledError(ctx.Err())
		}
	}
}

// Close is CloseContext with a deadline CloseTimeout from now.
func (w *LogWriter) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), w.closeTimeout)
	defer cancel()
	return w.CloseContext(ctx)
}

// CloseContext stops accepting entries, lets the writer goroutine write
// what is buffered, and waits for it to finish or for ctx to be done. It
// returns the error of the last write, or, when ctx ends first (the
// destination is stalled), an error wrapping ctx.Err(); the goroutine then
// stays blocked in its write until the destination gives way or the process
// exits. It is safe to call more than once.
func (w *LogWriter) CloseContext(ctx context.Context) error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.stop)
	}
	w.mu.Unlock()
	select {
	case <-w.stopped:
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.lastErr
	case <-ctx.Done():
		return w.stalledError(ctx.Err())
	}
}

// stalledError says how much is still unwritten.
func (w *LogWriter) stalledError(cause error) error {
	w.mu.Lock()
	pending := w.accepted - w.written
	w.mu.Unlock()
	return fmt.Errorf("core: log writer: %d bytes not yet written (the output is stalled): %w", pending, cause)
}

// wake asks the writer goroutine to write now.
func (w *LogWriter) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// loop is the writer goroutine.
func (w *LogWriter) loop() {
	defer close(w.stopped)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-w.kick:
		case <-t.C:
		case <-w.stop:
			w.writeBatch() // nothing is accepted after stop: this is the last
			return
		}
		w.writeBatch()
	}
}

// writeBatch writes the buffered entries, after the drop summary line when
// entries were dropped since the last one.
func (w *LogWriter) writeBatch() {
	w.mu.Lock()
	batch, entries, report, end := w.buf, w.entries, w.unreported, w.accepted
	if len(batch) == 0 && report == 0 {
		w.mu.Unlock()
		return
	}
	w.buf, w.spare = w.spare[:0], nil
	w.entries, w.unreported = 0, 0
	w.mu.Unlock()

	out := batch
	if report > 0 {
		out = appendDropSummary(make([]byte, 0, 160+len(batch)), w.clock.Now(), report)
		out = append(out, batch...)
	}
	_, err := w.out.Write(out)

	w.mu.Lock()
	w.written = end
	w.lastErr = err
	if err != nil {
		// The entries are lost; report them, and the summary that did not
		// make it, with the next write that succeeds.
		w.unreported += report + entries
		w.dropped.Add(entries)
	}
	if cap(batch) <= w.max {
		w.spare = batch[:0]
	}
	if w.progress != nil {
		close(w.progress)
		w.progress = nil
	}
	w.mu.Unlock()
}

// appendDropSummary appends the drop summary line, in the format of
// slog.JSONHandler.
func appendDropSummary(b []byte, now time.Time, dropped uint64) []byte {
	b = append(b, `{"time":"`...)
	b = now.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"WARN","msg":"`+DropSummaryMessage+`","dropped":`...)
	b = strconv.AppendUint(b, dropped, 10)
	return append(b, "}\n"...)
}
