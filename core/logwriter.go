package core

import (
	"io"
	"sync"
	"time"
)

// LogWriterOptions configures a LogWriter. Zero values mean the defaults.
type LogWriterOptions struct {
	// FlushInterval is the longest a record waits in the buffer (default
	// 20 ms).
	FlushInterval time.Duration
	// MaxBuffered is the buffer size at which a write waits for a flush
	// instead of growing the buffer (default 1 MiB).
	MaxBuffered int
}

// LogWriter batches log records for a slow destination (stderr): Write
// copies a record into a buffer and returns; a background goroutine writes
// the buffer every FlushInterval, in one call. Flush and Close write
// everything buffered, so no record is lost on a clean exit. When the
// destination stalls, the buffer is bounded: a Write that would pass
// MaxBuffered waits for the flush. Safe for concurrent use; records (one
// Write each, as slog handlers do) are never interleaved.
type LogWriter struct {
	out      io.Writer
	interval time.Duration
	max      int

	mu      sync.Mutex
	drained sync.Cond // signalled after each flush; L is &mu
	buf     []byte    // guarded by mu
	spare   []byte    // guarded by mu
	busy    bool      // a flush is writing; guarded by mu
	closed  bool      // guarded by mu
	kick    chan struct{}
	stopped chan struct{}
}

// NewLogWriter returns a LogWriter writing to out and starts its flusher.
// Call Close to stop it.
func NewLogWriter(out io.Writer, opts LogWriterOptions) *LogWriter {
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 20 * time.Millisecond
	}
	if opts.MaxBuffered <= 0 {
		opts.MaxBuffered = 1 << 20
	}
	w := &LogWriter{out: out, interval: opts.FlushInterval, max: opts.MaxBuffered,
		kick: make(chan struct{}, 1), stopped: make(chan struct{})}
	w.drained.L = &w.mu
	go w.loop()
	return w
}

// Write buffers p (a copy) and returns len(p). After Close it writes p
// through at once.
func (w *LogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return w.out.Write(p)
	}
	for len(w.buf)+len(p) > w.max && len(w.buf) > 0 {
		select {
		case w.kick <- struct{}{}:
		default:
		}
		w.drained.Wait()
		if w.closed {
			w.mu.Unlock()
			return w.out.Write(p)
		}
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) >= flushAt && !w.busy {
		select { // a full block: write it now rather than grow the buffer
		case w.kick <- struct{}{}:
		default:
		}
	}
	w.mu.Unlock()
	return len(p), nil
}

// flushAt is the buffer size at which the flusher is woken before its
// interval ends, which keeps the buffer small under a flood of records.
const flushAt = 32 << 10

// Flush writes everything buffered so far and returns the write's error.
func (w *LogWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

// flushLocked writes the buffer; mu is held on entry and on return, and
// released around the write.
func (w *LogWriter) flushLocked() error {
	for w.busy {
		w.drained.Wait()
	}
	if len(w.buf) == 0 {
		return nil
	}
	out := w.buf
	w.buf = w.spare[:0]
	w.busy = true
	w.mu.Unlock()
	_, err := w.out.Write(out)
	w.mu.Lock()
	w.busy = false
	if cap(out) <= w.max {
		w.spare = out[:0]
	}
	w.drained.Broadcast()
	return err
}

// Close flushes the buffer and stops the flusher; later writes go straight
// through. It is safe to call more than once.
func (w *LogWriter) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	err := w.flushLocked()
	w.closed = true
	w.drained.Broadcast()
	w.mu.Unlock()
	close(w.kick)
	<-w.stopped
	return err
}

func (w *LogWriter) loop() {
	defer close(w.stopped)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case _, ok := <-w.kick:
			if !ok {
				return
			}
		case <-t.C:
		}
		w.mu.Lock()
		if !w.closed {
			_ = w.flushLocked()
		}
		w.mu.Unlock()
	}
}
