package aacp

import (
	"context"
	"fmt"

	"github.com/mcprt/mcprt/core"
)

// SendMessage delivers msg to the agent target and waits for its response.
//
// The message joins the end of the agent's queue and is handled after
// every message accepted before it; the handler receives ctx, so the
// sender's cancellation and deadline reach it. SendMessage never waits for
// room in a queue. It returns:
//   - the handler's response and error, as the handler returned them;
//   - NOT_FOUND when no agent target is registered (the message names the
//     registered agents, at most 10 of them) or when target is
//     unregistered before it starts on the message;
//   - RESOURCE_EXHAUSTED when the agent's queue already holds
//     Options.QueueSize messages, or when msg's JSON is longer than
//     Options.MaxPayloadBytes (details: sizeBytes, limitBytes);
//   - INVALID_ARGUMENT when msg cannot be encoded as JSON (a Payload that
//     is not valid JSON);
//   - INTERNAL when the handler panics, or (wrapping ErrClosed) when the
//     coordinator is closed before the message is handled;
//   - ctx's error and cause, wrapped, when ctx is done before the
//     response arrives. A message not yet started is then taken out of the
//     queue and never handled; a running handler is not stopped, and its
//     response is discarded.
//
// Errors other than the handler's own and ctx's are *core.Error values.
func (c *Coordinator) SendMessage(ctx context.Context, target string, msg Message) (any, error) {
	if ctx.Err() != nil {
		return nil, fmt.Errorf("send a %q message to agent %q: %w", msg.Type, shorten(target), ctxErr(ctx))
	}
	a, err := c.lookupForSend(target)
	if err != nil {
		return nil, err
	}
	if err := c.checkSize(target, msg); err != nil {
		return nil, err
	}
	req := &request{ctx: ctx, msg: msg, done: make(chan outcome, 1)}
	if err := c.enqueue(a, req); err != nil {
		return nil, err
	}
	select {
	case out := <-req.done:
		return out.resp, out.err
	case <-ctx.Done():
	}
	if a.remove(req) {
		return nil, fmt.Errorf("agent %q did not start on the %q message before the sender gave up: %w", target, msg.Type, ctxErr(ctx))
	}
	select {
	case out := <-req.done: // the answer arrived as ctx ended: keep it
		return out.resp, out.err
	default:
		return nil, fmt.Errorf("agent %q did not answer the %q message before the sender gave up: %w", target, msg.Type, ctxErr(ctx))
	}
}

// lookupForSend is lookup, refusing every message once the coordinator is
// closed.
func (c *Coordinator) lookupForSend(target string) (*agent, error) {
	c.mu.RLock()
	closed := c.closed
	c.mu.RUnlock()
	if closed {
		return nil, core.Errorf(core.CodeInternal, "cannot send a message to agent %q: %w", shorten(target), ErrClosed)
	}
	return c.lookup(target)
}

// checkSize refuses a message whose JSON encoding cannot be made or is
// longer than the payload limit.
func (c *Coordinator) checkSize(target string, msg Message) error {
	n, err := core.JSONSize(msg)
	if err != nil {
		return core.Errorf(core.CodeInvalidArgument,
			"cannot send a %q message to agent %q: %v; the payload must be valid JSON", msg.Type, target, err)
	}
	if n > c.maxPayload {
		e := core.Errorf(core.CodeResourceExhausted,
			"the %q message to agent %q is %d bytes of JSON, over the limit of %d bytes (maxPayloadBytes); send a smaller payload",
			msg.Type, target, n, c.maxPayload)
		return e.WithDetail("sizeBytes", n).WithDetail("limitBytes", c.maxPayload)
	}
	return nil
}

// enqueue appends req to a's queue, or refuses it when a is stopped or its
// queue is full. It never waits for room.
func (c *Coordinator) enqueue(a *agent, req *request) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped != nil {
		return a.stopped()
	}
	if len(a.queue) >= c.queueSize {
		e := core.Errorf(core.CodeResourceExhausted,
			"agent %q has %d messages waiting, its queue limit; retry when it has caught up", a.id, len(a.queue))
		return e.WithDetail("queueSize", c.queueSize)
	}
	a.queue = append(a.queue, req)
	if c.enqueued != nil {
		c.enqueued(a.id, req.msg)
	}
	a.cond.Signal()
	return nil
}

// remove takes req out of a's queue and reports whether it was still
// there (not started, not dropped).
func (a *agent) remove(req *request) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, r := range a.queue {
		if r == req {
			copy(a.queue[i:], a.queue[i+1:])
			a.queue[len(a.queue)-1] = nil
			a.queue = a.queue[:len(a.queue)-1]
			return true
		}
	}
	return false
}
