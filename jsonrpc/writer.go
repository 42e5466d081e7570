package jsonrpc

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// maxSpare bounds the batch buffer kept for reuse between flushes.
const maxSpare = 1 << 20

// writer is a line transport's one write path, a group commit: a caller
// that finds no write in progress writes its frame itself (a lone response
// costs one write call and no goroutine hand-off); frames that arrive while
// a write is in progress, or while the reader has more input buffered
// (corked), are appended to a batch that is written next, in one call.
// Frames are never interleaved: each is appended whole, and only one
// caller writes at a time.
//
// Bounds: a corked batch is written once it holds corkMaxBytes or its
// first frame has waited corkMaxDelay; the bytes accepted but not yet
// written (pending) stay near the budget, because writers wait while it is
// exceeded and the reader paces itself on it.
type writer struct {
	out    io.Writer
	budget int
	timer  *time.Timer // flushes a corked batch after corkMaxDelay

	mu       sync.Mutex
	idle     sync.Cond // signalled when a write call ends; L is &mu
	batch    []byte    // frames waiting to be written; guarded by mu
	spare    []byte    // a drained batch kept for reuse; guarded by mu
	pending  int       // bytes accepted and not yet written; guarded by mu
	waiting  int       // bytes of frames whose writers wait for the budget; guarded by mu
	flushing bool      // a caller is writing; guarded by mu
	corked   bool      // the reader has more input buffered; guarded by mu
	timed    bool      // the cork timer is armed; guarded by mu
	closed   bool      // nothing more is written; guarded by mu
	err      error     // the write error that closed the writer; guarded by mu

	onError func(error) // called once, outside the lock, when a write fails; set before use
}

func newWriter(out io.Writer, budget int, onError func(error)) *writer {
	w := &writer{out: out, budget: budget, onError: onError}
	w.idle.L = &w.mu
	w.timer = time.AfterFunc(time.Hour, w.corkExpired)
	w.timer.Stop()
	return w
}

// write sends one frame (ending in "\n"). When wait is false it may return
// before the frame is written, which another caller then does; when wait is
// true it returns once the frame is written (or dropped by a close).
func (w *writer) write(frame []byte, wait bool) error {
	w.mu.Lock()
	// Output backpressure: while a write is in progress and the queue is
	// over the budget, wait for it to drain. A frame larger than the whole
	// budget goes once the queue is empty.
	if w.flushing && w.pending > 0 && w.pending+len(frame) > w.budget {
		w.waiting += len(frame)
		for !w.closed && w.flushing && w.pending > 0 && w.pending+len(frame) > w.budget {
			w.idle.Wait()
		}
		w.waiting -= len(frame)
	}
	if w.closed {
		err := w.err
		w.mu.Unlock()
		if err == nil {
			err = ErrClosed
		}
		return err
	}
	gather := w.flushing || (w.corked && len(w.batch)+len(frame) <= corkMaxBytes)
	if gather {
		w.batch = append(w.batch, frame...)
		w.pending += len(frame)
		if !w.flushing && !w.timed {
			w.timed = true
			w.timer.Reset(corkMaxDelay)
		}
		if !wait {
			w.mu.Unlock()
			return nil
		}
		for w.flushing {
			w.idle.Wait()
		}
		if len(w.batch) == 0 || w.closed {
			err := w.err
			w.mu.Unlock()
			return err
		}
		return w.flushLocked(nil)
	}
	w.pending += len(frame)
	if len(w.batch) > 0 { // gathered frames go first, in order
		w.batch = append(w.batch, frame...)
		return w.flushLocked(nil)
	}
	return w.flushLocked(frame)
}

// flushLocked writes first (if any) and then every batch that gathers
// meanwhile. It is called with mu held and returns with it released.
func (w *writer) flushLocked(first []byte) error {
	w.flushing = true
	out := first
	var err error
	for {
		if out == nil {
			if len(w.batch) == 0 { // after a close too: what was accepted is written
				break
			}
			out = w.batch
			w.batch = w.spare[:0]
		}
		w.mu.Unlock()
		err = writeFrames(w.out, out)
		w.mu.Lock()
		w.pending -= len(out)
		if first == nil || &out[0] != &first[0] {
			if cap(out) <= maxSpare {
				w.spare = out[:0]
			} else {
				w.spare = nil
			}
		}
		out, first = nil, nil
		w.idle.Broadcast()
		if err != nil {
			w.closed, w.err, w.batch, w.pending = true, err, nil, 0
			break
		}
	}
	w.flushing = false
	w.idle.Broadcast()
	w.mu.Unlock()
	if err != nil && w.onError != nil {
		w.onError(err) // whoever wrote: a caller, the reader uncorking, or the cork timer
	}
	return err
}

// cork makes writes gather in the batch while the reader works through
// input it already has (pipelined requests).
func (w *writer) cork() {
	w.mu.Lock()
	w.corked = true
	w.mu.Unlock()
}

// uncork writes what gathered; the reader calls it before it waits for
// input.
func (w *writer) uncork() {
	w.mu.Lock()
	w.corked = false
	if w.flushing || w.closed || len(w.batch) == 0 {
		w.mu.Unlock()
		return
	}
	_ = w.flushLocked(nil)
}

// corkExpired writes a corked batch whose first frame has waited
// corkMaxDelay.
func (w *writer) corkExpired() {
	w.mu.Lock()
	w.timed = false
	if w.flushing || w.closed || len(w.batch) == 0 {
		w.mu.Unlock()
		return
	}
	_ = w.flushLocked(nil)
}

// pace blocks while more than the budget is queued, being written, or held
// by writers waiting for room.
func (w *writer) pace(done <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for !w.closed && w.pending+w.waiting > w.budget {
		select {
		case <-done:
			return
		default:
		}
		w.idle.Wait()
	}
}

// pipeBuf is the size up to which a write to a pipe is atomic (POSIX
// PIPE_BUF on Linux): a reader never sees part of it.
const pipeBuf = 4096

// writeFrames writes whole frames in calls of at most pipeBuf bytes where
// it can, so that a write cut short (a stalled reader, an exit) never
// leaves half a frame on the output. A frame longer than pipeBuf is
// written alone.
func writeFrames(out io.Writer, frames []byte) error {
	for len(frames) > 0 {
		n := len(frames)
		if n > pipeBuf {
			n = bytes.LastIndexByte(frames[:pipeBuf], '\n') + 1
			if n == 0 { // the first frame is longer than pipeBuf
				n = bytes.IndexByte(frames, '\n') + 1
				if n == 0 {
					n = len(frames)
				}
			}
		}
		if _, err := out.Write(frames[:n]); err != nil {
			return err
		}
		frames = frames[n:]
	}
	return nil
}

// close refuses every later frame. Frames already accepted are still
// written: by the write in progress, or by a goroutine started here when
// none is (drain waits for that). A response whose Write returned nil is
// thus on its way, and a layer that recorded it as answered told the
// truth.
func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.idle.Broadcast()
	if !w.flushing && len(w.batch) > 0 {
		w.flushing = true // the goroutine below is the writer now
		go func() {
			w.mu.Lock()
			w.flushing = false
			_ = w.flushLocked(nil)
		}()
	}
	w.mu.Unlock()
	w.timer.Stop()
}

// drain waits until every accepted frame is written (or a write failed),
// or done is closed.
func (w *writer) drain(done <-chan struct{}) {
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-done:
			w.mu.Lock()
			w.idle.Broadcast()
			w.mu.Unlock()
		case <-stop:
		}
	}()
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.pending > 0 && w.err == nil && !w.flushedOrDone(done) {
		w.idle.Wait()
	}
}

func (w *writer) flushedOrDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
