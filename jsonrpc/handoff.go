package jsonrpc

import (
	"sync"
	"time"
)

// handoff passes a role (the reader) from a goroutine whose
// handler runs long to a new goroutine. The goroutine holding the role
// arms it before running a handler and disarms it after; if the handler is
// still running handoffAfter later, the timer starts a new goroutine in the
// role and the old one, once its handler returns, learns from disarm that
// it no longer holds the role. Tokens make a late or stale firing harmless.
type handoff struct {
	timer *time.Timer
	start func() // starts a goroutine in the role

	mu    sync.Mutex // guards seq and token
	seq   uint64     // the last arming's token
	token uint64     // the arming the timer is for; 0 when disarmed
}

func newHandoff(start func()) *handoff {
	h := &handoff{start: start}
	h.timer = time.AfterFunc(time.Hour, h.fire)
	h.timer.Stop()
	return h
}

// arm starts the timer for the caller's handler and returns the token.
func (h *handoff) arm() uint64 {
	h.mu.Lock()
	h.seq++
	token := h.seq
	h.token = token
	h.mu.Unlock()
	h.timer.Reset(handoffAfter)
	return token
}

// disarm stops the timer after the handler returned. It reports whether
// the caller still holds the role: false when the timer took its token and
// started a new goroutine in the role.
func (h *handoff) disarm(token uint64) bool {
	h.mu.Lock()
	mine := h.token == token
	if mine {
		h.token = 0
	}
	h.mu.Unlock()
	if mine {
		h.timer.Stop()
	}
	return mine
}

// fire runs when the timer fires: if an arming is still current, a new
// goroutine takes the role. A stale firing (its arming already disarmed)
// does nothing, or at worst hands a later arming off early.
func (h *handoff) fire() {
	h.mu.Lock()
	fire := h.token != 0
	h.token = 0
	h.mu.Unlock()
	if fire {
		h.start()
	}
}
