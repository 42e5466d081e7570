package mcp

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/core"
)

// A tools/call from step 3 on is a toolCall, made of parts by concern:
// who and what it is (callID), the race between its handler and its
// deadline (callState), where its answer goes (callReply), what it holds
// (callHold) and what its completion record says (callRecord). The parts
// are values inside the one toolCall: a call allocates nothing for them.

// toolCall is one tools/call from step 3 on.
type toolCall struct {
	callID
	req CallToolRequest // what the handler sees

	// The call is its handler's context: the request's context (cancelled
	// by the client, the connection's end, or the deadline), plus the
	// call's deadline (state.at) and callInfo. For a call that may become
	// a task it is a context of its own (callReply.detach).
	context.Context
	info callInfo

	state callState
	reply callReply
	hold  callHold
	rec   callRecord
}

// callID is what identifies a call, and what its records, audit events
// and errors carry.
type callID struct {
	sess    *Session
	tool    string // the name as called, clipped for logs
	runID   string
	cid     string // correlation id
	payload int    // the arguments' compact size
	start   time.Time
	rt      *registeredTool // nil until the tool is found
}

// stamp returns a copy of e carrying the call's ids.
func (id *callID) stamp(e *core.Error) *core.Error {
	out := *e
	out.CorrelationID, out.RunID = id.cid, id.runID
	return &out
}

// callState settles the race between the handler's return and its
// deadline, and holds the task the call may become.
type callState struct {
	at           time.Time      // the deadline, as the handler's context reports it
	deadlineDone sync.WaitGroup // done when the deadline timer's work is done
	timeoutSent  bool           // TIMEOUT was sent; written by deadline before deadlineDone is done

	mu       sync.Mutex // guards returned, expired and task
	returned bool       // the handler returned (or never will run)
	expired  bool       // the deadline fired first
	task     *task      // set when the call became a task (StartTask)

	// The call's place in the server's deadline queue (deadlines.go),
	// guarded by the queue's mutex: index is its heap position + 1 (0 when
	// not queued), seq its arming order.
	index int
	seq   uint64
}

// expire marks the deadline as passed, unless the handler returned
// first, and reports whether it did.
func (s *callState) expire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.returned {
		return false
	}
	s.expired = true
	return true
}

// handlerReturned marks the handler as returned and reports whether the
// deadline had passed first.
func (s *callState) handlerReturned() (expired bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.returned = true
	return s.expired
}

// callReply is where the call's answer goes. rpc is the request's
// context: the answer goes through it (until the call becomes a task).
// For a call that may become a task (tasks_call.go) the handler's context
// is another one: cancelHandler cancels it, stopProp stops passing the
// request's cancellation on to it, and answered is closed once the
// request has its answer.
type callReply struct {
	rpc           context.Context
	cancelHandler context.CancelCauseFunc
	stopProp      func() bool
	answered      chan struct{}
	answerOnce    sync.Once
}

// callHold is what a running call holds: its execution slot (see
// WaitWithoutSlot) and, for an Exclusive tool, the tool's lock.
type callHold struct {
	slot     slotHold
	lockHeld bool
}

// release gives back the tool's lock, if held, and the slot.
func (h *callHold) release(lock chan struct{}) {
	if h.lockHeld {
		h.lockHeld = false
		<-lock
	}
	h.slot.release()
}

// callRecord is what the completion record needs beyond the call's ids:
// whether the final record was written, and what it says once the answer
// the handler returned went out (see exit and Answered).
type callRecord struct {
	final         atomic.Bool
	outcome, code string
}
