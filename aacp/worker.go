package aacp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/mcprt/mcprt/core"
)

// agent is one registered agent: its handler, its live state (touched only
// by its worker goroutine), its queue and its published state snapshot.
type agent struct {
	id      string
	handler Handler
	state   State // owned by the worker goroutine; no lock

	mu   sync.Mutex
	cond sync.Cond // L is &mu; signalled on enqueue, broadcast on stop
	// queue holds the accepted messages not yet started, oldest first.
	queue []*request // guarded by mu
	// stopped is nil while the agent runs; after UnregisterAgent or Close
	// it makes the error of each refused or dropped message.
	stopped func() error // guarded by mu
	// snap is the JSON encoding of state after the last finished message,
	// snapErr why that encoding failed (snap then keeps the last good one).
	snap    []byte // guarded by mu
	snapErr error  // guarded by mu
}

// request is one message on its way through an agent's queue.
type request struct {
	ctx  context.Context // the sender's; handed to the handler
	msg  Message
	done chan outcome // buffered (1): whoever answers never blocks
}

// outcome is the answer to a request.
type outcome struct {
	resp any
	err  error
}

// newAgent returns an agent with an empty state.
func newAgent(id string, h Handler) *agent {
	a := &agent{id: id, handler: h, state: State{}, snap: []byte("{}")}
	a.cond.L = &a.mu
	return a
}

// stop marks the agent stopped (the first mkErr wins), fails every queued
// message with an error from mkErr and wakes the worker so that it exits
// once its running message, if any, is done.
func (a *agent) stop(mkErr func() error) {
	a.mu.Lock()
	if a.stopped == nil {
		a.stopped = mkErr
	}
	dropped := a.queue
	a.queue = nil
	mkErr = a.stopped
	a.cond.Broadcast()
	a.mu.Unlock()
	for _, req := range dropped {
		req.done <- outcome{err: mkErr()}
	}
}

// next waits for the oldest queued message and takes it out of the queue.
// It returns nil when the agent is stopped (its queue is then empty).
func (a *agent) next() *request {
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.queue) == 0 {
		if a.stopped != nil {
			return nil
		}
		a.cond.Wait()
	}
	req := a.queue[0]
	a.queue[0] = nil // let the request be collected
	a.queue = a.queue[1:]
	return req
}

// snapshot returns the last published JSON of the agent's state, or why it
// could not be encoded.
func (a *agent) snapshot() ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.snap, a.snapErr
}

// run is an agent's worker: it handles the agent's messages one at a time,
// in queue order, until the agent is stopped. A message whose sender gave
// up before it started is skipped.
func (c *Coordinator) run(a *agent) {
	var cur *request
	defer func() {
		if cur != nil {
			// Only runtime.Goexit in a handler or hook ends the loop here
			// (panics are recovered): answer the sender and carry on in a
			// new worker. The WaitGroup count is still held, so Go is safe.
			cur.done <- outcome{err: core.Errorf(core.CodeInternal,
				"agent %q called runtime.Goexit while handling a %q message; a handler must return", a.id, cur.msg.Type)}
			c.workers.Go(func() { c.run(a) })
		}
	}()
	for {
		req := a.next()
		if req == nil {
			return
		}
		if req.ctx.Err() != nil { // the sender gave up: skip the message
			req.done <- outcome{err: fmt.Errorf("agent %q did not start on the %q message before the sender gave up: %w",
				a.id, req.msg.Type, ctxErr(req.ctx))}
			continue
		}
		cur = req
		resp, err := c.handle(a, req)
		c.publish(a)
		cur = nil
		req.done <- outcome{resp: resp, err: err}
	}
}

// handle runs the handler on one message, turning a panic into an
// INTERNAL error (the panic value and stack go to the log, not the wire).
func (c *Coordinator) handle(a *agent, req *request) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("agent handler panicked", "agentId", a.id, "messageType", req.msg.Type,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			resp, err = nil, core.Errorf(core.CodeInternal,
				"agent %q panicked while handling a %q message; the server log has the details", a.id, req.msg.Type)
		}
	}()
	return a.handler.HandleMessage(req.ctx, req.msg, a.state)
}

// publish encodes the agent's state after a message, makes it what
// AgentState returns, and calls the state-change hook when the encoding
// differs from the previous one.
func (c *Coordinator) publish(a *agent) {
	data, err := encodeState(a.state)
	a.mu.Lock()
	changed := err == nil && !bytes.Equal(data, a.snap)
	if err == nil {
		a.snap = data
	}
	a.snapErr = err
	a.mu.Unlock()
	if err != nil {
		c.log.Warn("agent state cannot be encoded as JSON; AgentState fails until it can",
			"agentId", a.id, "error", err.Error())
		return
	}
	if !changed || c.onStateChange == nil {
		return
	}
	st, err := decodeState(data)
	if err != nil {
		c.log.Error("agent state cannot be copied", "agentId", a.id, "error", err.Error())
		return
	}
	c.callHook(a.id, st)
}

// callHook calls Options.OnStateChange, recovering (and logging) a panic.
func (c *Coordinator) callHook(id string, st State) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("agent state-change hook panicked", "agentId", id,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	c.onStateChange(id, st)
}

// encodeState returns the JSON encoding of st (map keys sorted), turning a
// panic in a MarshalJSON method into an error.
func encodeState(st State) (data []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("encoding the state panicked: %v", p)
		}
	}()
	data, err = json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encode the state as JSON: %w", err)
	}
	return data, nil
}

// decodeState decodes a state snapshot into a fresh State.
func decodeState(data []byte) (State, error) {
	st := State{}
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("decode the state snapshot: %w", err)
	}
	return st, nil
}
