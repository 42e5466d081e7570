package jsonrpc

import (
	"strconv"
	"sync"
)

// batch collects the responses to the elements of one batch and writes
// them as one array when the last one is in. Its answer is bounded by
// Options.MaxBatchResponseBytes: a response that would pass the bound is
// replaced by a short error naming the bound.
type batch struct {
	c       *Conn
	mu      sync.Mutex
	pending int      // guarded by mu
	size    int      // bytes of frames; guarded by mu
	frames  [][]byte // guarded by mu
	// closeAfter closes the connection once the batch's answer is written
	// (a close-after request inside a batch); guarded by mu.
	closeAfter bool
}

// closeWhenAnswered makes the batch close the connection after its answer
// is written, so that the answer still goes out.
func (b *batch) closeWhenAnswered() {
	b.mu.Lock()
	b.closeAfter = true
	b.mu.Unlock()
}

// expect announces one more response (or deliberate non-response).
func (b *batch) expect() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.pending++
	b.mu.Unlock()
}

// finish records the response to element id (nil: none) and writes the
// array when it was the last.
func (b *batch) finish(id ID, frame []byte) {
	if frame != nil && !b.reserve(len(frame)) {
		frame = b.c.encodeError(id, nil, NewError(CodeInternalError, "Internal error: the answer to this "+
			"batch element would make the batch's answer longer than "+strconv.Itoa(b.c.opts.MaxBatchResponseBytes)+
			" bytes; send it again on its own or in a smaller batch"))
		b.mu.Lock()
		b.size += len(frame)
		b.mu.Unlock()
	}
	b.mu.Lock()
	if frame != nil {
		b.frames = append(b.frames, frame[:len(frame)-1]) // without "\n"
	}
	b.pending--
	last := b.pending == 0
	frames := b.frames
	closeAfter := b.closeAfter
	b.mu.Unlock()
	if !last {
		return
	}
	if closeAfter {
		defer b.c.Close()
	}
	if len(frames) == 0 {
		return
	}
	out := []byte{'['}
	for i, f := range frames {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, f...)
	}
	out = append(out, "]\n"...)
	b.c.write(Outgoing{Data: out, Response: true, Flush: closeAfter}) // before a close, the answer must be out
}

// reserve counts a frame of n bytes into the batch's answer when it fits
// the bound, in one step, and reports whether it did.
func (b *batch) reserve(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.size+n > b.c.opts.MaxBatchResponseBytes {
		return false
	}
	b.size += n
	return true
}

// handleBatch processes a JSON array per JSON-RPC 2.0.
func (c *Conn) handleBatch(data []byte) {
	elems, derr := DecodeBatch(data)
	if derr != nil {
		c.replyError(nil, ID{}, nil, derr.Err)
		return
	}
	if e := c.disp.Batch(); e != nil {
		c.replyError(nil, ID{}, nil, e)
		return
	}
	if len(elems) == 0 {
		c.replyError(nil, ID{}, nil, NewError(CodeInvalidRequest,
			"Invalid Request: an empty batch; a batch must hold at least one message"))
		return
	}
	b := &batch{c: c, pending: 1} // the 1 is this loop, finished below
	for _, raw := range elems {
		msg, derr := DecodeElement(raw)
		if derr != nil {
			c.replyError(b, derr.ID, derr.Params, derr.Err)
			continue
		}
		c.route(msg, b)
	}
	b.finish(ID{}, nil)
}
