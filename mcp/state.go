package mcp

import (
	"fmt"
)

// State is a session's lifecycle state. A session moves forward only:
// STARTING → INITIALIZING → RUNNING → CLOSED (and to CLOSED from any
// state).
type State int32

// The lifecycle states.
const (
	// StateStarting: the connection is open; only initialize and ping are
	// served.
	StateStarting State = iota
	// StateInitializing: initialize was answered; the client has not yet
	// sent notifications/initialized.
	StateInitializing
	// StateRunning: every method is served.
	StateRunning
	// StateClosed: nothing more is read or written.
	StateClosed
)

var stateNames = [...]string{"STARTING", "INITIALIZING", "RUNNING", "CLOSED"}

// String returns the state's name.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// event is what moves a session from one state to the next.
type event uint8

const (
	evInitialized event = iota // initialize was answered
	evReady                    // notifications/initialized arrived
	evClose                    // the connection closed
)

// advance applies ev to the session's state: the one place the state
// changes. It reports the state before and whether ev changed it.
func (sess *Session) advance(ev event) (from State, moved bool) {
	for {
		from = State(sess.state.Load())
		var to State
		switch {
		case ev == evClose && from != StateClosed:
			to = StateClosed
		case ev == evInitialized && from == StateStarting:
			to = StateInitializing
		case ev == evReady && from == StateInitializing:
			to = StateRunning
		default:
			return from, false
		}
		if sess.state.CompareAndSwap(int32(from), int32(to)) {
			return from, true
		}
	}
}
