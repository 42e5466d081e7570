package streamable

import (
	"net"
	"testing"
)

// fakeConn is a net.Conn with a remote address and a closed flag.
type fakeConn struct {
	net.Conn
	addr   string
	closed bool
}

func (c *fakeConn) RemoteAddr() net.Addr {
	a, _ := net.ResolveTCPAddr("tcp", c.addr)
	return a
}
func (c *fakeConn) Close() error { c.closed = true; return nil }

// TestConnLimiter: a connection over a bound closes the oldest idle one
// (of the same client when the client's bound is reached) and is refused
// only when every counted one is serving a request.
func TestConnLimiter(t *testing.T) {
	l := newConnLimiter(3, 2)
	a1, a2 := &fakeConn{addr: "10.0.0.1:1"}, &fakeConn{addr: "10.0.0.1:2"}
	c1, _ := l.admit(a1)
	c2, _ := l.admit(a2)
	l.serving(c2, +1)
	// a's bound (2) is reached: its oldest idle connection (a1) goes.
	a3 := &fakeConn{addr: "10.0.0.1:3"}
	c3, why := l.admit(a3)
	if c3 == nil || !a1.closed || a2.closed || l.count() != 2 {
		t.Fatalf("a3: admitted %v (%s); a1 closed %v, a2 closed %v, count %d", c3 != nil, why, a1.closed, a2.closed, l.count())
	}
	_ = c1.Close() // the server's own close of the evicted one counts nothing twice
	if l.count() != 2 {
		t.Fatalf("count %d after closing an evicted connection, want 2", l.count())
	}
	l.serving(c3, +1)
	// Both of a's connections serve requests: a fourth from a is refused.
	if c, why := l.admit(&fakeConn{addr: "10.0.0.1:4"}); c != nil || why == "" {
		t.Fatal("a fourth connection of a busy client was admitted")
	}
	b1 := &fakeConn{addr: "10.0.0.2:1"}
	cb1, _ := l.admit(b1)
	if cb1 == nil || l.count() != 3 {
		t.Fatalf("b1 not admitted: count %d", l.count())
	}
	// The server's bound (3) is reached: b1 is the only idle one.
	b2 := &fakeConn{addr: "10.0.0.3:1"}
	if c, _ := l.admit(b2); c == nil || !b1.closed {
		t.Fatalf("b2 not admitted by closing the idle b1")
	}
	l.serving(c2, -1)
	_ = c2.Close()
	if l.count() != 2 {
		t.Fatalf("count %d, want 2", l.count())
	}
}
