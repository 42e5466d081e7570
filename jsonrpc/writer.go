package jsonrpc

import (
	"bytes"
	"io"
	"sync"
)

// maxSpare bounds the batch buffer kept for reuse between flushes.
const maxSpare = 1 << 20

// writer is the connection's one write path, a group commit: a caller that
// finds no write in progress writes its frame itself (a lone response costs
// one write call and no goroutine hand-off); frames that arrive while a
// write is in progress are appended to a batch that the writing caller
// writes next, in one call. Frames are never interleaved: each is appended
// whole, and only one caller writes at a time.
type writer struct {
	out     io.Writer
	onError func(error) // called once, outside the lock, when a write fails

	mu       sync.Mutex
	idle     sync.Cond // signalled when a flush ends; L is &mu
	batch    []byte    // frames waiting for the writing caller; guarded by mu
	spare    []byte    // a drained batch kept for reuse; guarded by mu
	flushing bool      // a caller is writing; guarded by mu
	corked   bool      // the reader has more input buffered: gather frames; guarded by mu
	closed   bool      // nothing more is written; guarded by mu
	err      error     // the write error that closed the writer; guarded by mu
}

func newWriter(out io.Writer, onError func(error)) *writer {
	w := &writer{out: out, onError: onError}
	w.idle.L = &w.mu
	return w
}

// write sends one frame (ending in "\n"). When wait is false it may return
// before the frame is written, which another caller then does; when wait is
// true it returns once the frame is written (or dropped by a close).
func (w *writer) write(frame []byte, wait bool) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	if w.flushing || (w.corked && !wait) {
		w.batch = append(w.batch, frame...)
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
	if len(w.batch) > 0 { // corked frames go first, in order
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
			if len(w.batch) == 0 || w.closed {
				break
			}
			out = w.batch
			w.batch = w.spare[:0]
		}
		w.mu.Unlock()
		err = writeFrames(w.out, out)
		w.mu.Lock()
		if first == nil || &out[0] != &first[0] {
			if cap(out) <= maxSpare {
				w.spare = out[:0]
			} else {
				w.spare = nil
			}
		}
		out, first = nil, nil
		if err != nil {
			w.closed, w.err, w.batch = true, err, nil
			break
		}
	}
	w.flushing = false
	w.idle.Broadcast()
	w.mu.Unlock()
	if err != nil && w.onError != nil {
		w.onError(err)
	}
	return err
}

// cork makes writes gather in the batch instead of being written, while
// the reader works through input it already has (pipelined requests): the
// batch then goes out in one write when the reader uncorks.
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

// close stops all writing: frames not yet written are dropped. A write in
// progress completes.
func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.batch = nil
	w.mu.Unlock()
}
