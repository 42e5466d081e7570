package mcp

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/mcprt/mcprt/core"
)

// rootsState is a session's view of the client's roots: the last list the
// client sent, cached only when the client promised to announce changes
// (roots.listChanged), and the program's hook for those announcements.
// Its zero value is ready.
type rootsState struct {
	mu      sync.Mutex // guards the fields below
	cached  []Root     // valid when valid is true
	valid   bool
	gen     uint64 // counts notifications/roots/list_changed
	hook    func(*Session)
	running bool // the hook is running
	again   bool // a change arrived while it ran: run it once more
}

// ListRoots asks the client for its roots (roots/list). It needs the
// client's roots capability. When the client also declared
// roots.listChanged, the list is cached until the client sends
// notifications/roots/list_changed; otherwise every call asks the client.
// The returned slice is the caller's own.
func (sess *Session) ListRoots(ctx context.Context) ([]Root, error) {
	caps := sess.capsFor(ctx)
	if caps.Roots == nil {
		return nil, missingCapability(ctx, "roots", MethodRootsList)
	}
	rs := &sess.roots
	cache := caps.Roots.ListChanged && statelessOf(ctx) == nil
	rs.mu.Lock()
	if cache && rs.valid {
		out := cloneRoots(rs.cached)
		rs.mu.Unlock()
		return out, nil
	}
	gen := rs.gen
	rs.mu.Unlock()
	var res listRootsResult
	if err := sess.clientCall(ctx, MethodRootsList, nil, &res); err != nil {
		return nil, err
	}
	if res.Roots == nil {
		return nil, core.NewError(core.CodeInternal, "the client's answer to roots/list has no roots array").
			WithDetail("method", MethodRootsList).WithDetail("reason", "bad_client_answer")
	}
	roots := *res.Roots
	if cache {
		rs.mu.Lock()
		if rs.gen == gen { // no change announced while the list was on its way
			rs.cached, rs.valid = cloneRoots(roots), true
		}
		rs.mu.Unlock()
	}
	return roots, nil
}

func cloneRoots(r []Root) []Root {
	out := slices.Clone(r)
	if out == nil {
		out = []Root{}
	}
	return out
}

// OnRootsListChanged sets the function called when the client sends
// notifications/roots/list_changed (nil removes it); the cached roots list
// is dropped before it runs, so ListRoots inside it asks the client. It
// runs on a goroutine of its own, never concurrently with itself:
// announcements that arrive while it runs make it run once more after.
func (sess *Session) OnRootsListChanged(f func(sess *Session)) {
	sess.roots.mu.Lock()
	sess.roots.hook = f
	sess.roots.mu.Unlock()
}

// rootsChanged handles notifications/roots/list_changed on the reading
// goroutine: it drops the cached list and starts the hook.
func (sess *Session) rootsChanged() {
	rs := &sess.roots
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.gen++
	rs.cached, rs.valid = nil, false
	sess.log.Debug("the client's roots changed")
	if rs.hook == nil {
		return
	}
	if rs.running {
		rs.again = true
		return
	}
	rs.running = true
	go sess.runRootsHook()
}

// runRootsHook runs the hook until no announcement is left, recovering a
// panic.
func (sess *Session) runRootsHook() {
	rs := &sess.roots
	for {
		rs.mu.Lock()
		f := rs.hook
		rs.again = false
		rs.mu.Unlock()
		if f != nil && sess.State() != StateClosed {
			sess.callRootsHook(f)
		}
		rs.mu.Lock()
		if !rs.again || rs.hook == nil {
			rs.running = false
			rs.mu.Unlock()
			return
		}
		rs.mu.Unlock()
	}
}

func (sess *Session) callRootsHook(f func(*Session)) {
	defer func() {
		if p := recover(); p != nil {
			sess.log.Error("recovered from a panic in the roots list_changed hook", "panic", fmt.Sprint(p))
		}
	}()
	f(sess)
}
