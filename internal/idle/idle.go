package idle

import (
	"context"
	"sync"
)

// Group counts running jobs. Add and Done move the count like a
// sync.WaitGroup's; Idle returns a channel closed once the count is zero.
type Group struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // handed out by Idle while n > 0, closed when n reaches zero; nil while nobody waits
}

// Add adds delta (which may be negative) to the count. It panics when the
// count would go below zero, as sync.WaitGroup does.
func (g *Group) Add(delta int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.n + delta
	switch {
	case n < 0:
		panic("idle: negative Group count")
	case g.n > 0 && n == 0 && g.idle != nil:
		close(g.idle)
		g.idle = nil
	}
	g.n = n
}

// Done subtracts one from the count.
func (g *Group) Done() { g.Add(-1) }

// Idle returns a channel that is closed once the count is zero: at once
// when it is zero now. Jobs added after the count reached zero do not
// reopen a channel already handed out.
func (g *Group) Idle() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	if g.idle == nil { // made when somebody waits, not per job: a busy group allocates nothing
		g.idle = make(chan struct{})
	}
	return g.idle
}

// Wait waits until the count is zero (nil) or ctx is done (ctx.Err()).
// It starts no goroutine, so a wait that times out leaves nothing behind.
func (g *Group) Wait(ctx context.Context) error {
	select {
	case <-g.Idle():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
