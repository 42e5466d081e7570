package streamable

import (
	"context"
	"net"
	"strconv"
	"sync"
	"time"
)

// The connection bounds of Serve (transport.http.maxConnections and
// maxConnectionsPerClient). Every accepted connection counts, for the
// server and for its client address (the remote IP), until it closes.
// A connection beyond a bound first makes room by closing the oldest
// connection that is not serving a request (one still sending its request
// headers, or an idle keep-alive one), of that client when the client's
// bound is reached, else of anyone; only when every counted connection
// is serving a request is the new one refused: answered 503 and closed at
// once. So clients that open connections and send nothing (or trickle
// their headers) cannot keep out a client that sends requests, and a
// request in progress is never cut to make room.

// refuseTimeout bounds the write of the 503 to a refused connection.
const refuseTimeout = time.Second

// connLimiter counts connections and picks the ones to close.
type connLimiter struct {
	max, perClient int

	mu     sync.Mutex
	conns  map[*limitedConn]struct{} // open connections; guarded by mu
	byAddr map[string]int            // open connections per client address; guarded by mu
	seq    uint64                    // admission order; guarded by mu
}

func newConnLimiter(max, perClient int) *connLimiter {
	return &connLimiter{max: max, perClient: perClient, conns: map[*limitedConn]struct{}{}, byAddr: map[string]int{}}
}

// limitedConn is a counted connection.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	addr string
	seq  uint64 // guarded by l.mu
	busy int    // requests being served on it; guarded by l.mu
	once sync.Once
}

// Close closes the connection and stops counting it.
func (c *limitedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		if c.l.byAddr[c.addr]--; c.l.byAddr[c.addr] <= 0 {
			delete(c.l.byAddr, c.addr)
		}
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// clientAddr is the client address a connection counts against: its
// remote IP without the port.
func clientAddr(c net.Conn) string {
	a := c.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(a); err == nil {
		return host
	}
	return a
}

// admit counts c, closing older idle connections to make room, or reports
// which bound refuses it ("" when admitted).
func (l *connLimiter) admit(c net.Conn) (*limitedConn, string) {
	lc := &limitedConn{Conn: c, l: l, addr: clientAddr(c)}
	var evict []*limitedConn
	l.mu.Lock()
	if l.perClient > 0 && l.byAddr[lc.addr] >= l.perClient {
		v := l.oldestIdleLocked(lc.addr)
		if v == nil {
			l.mu.Unlock()
			return nil, "transport.http.maxConnectionsPerClient (" + strconv.Itoa(l.perClient) + ")"
		}
		evict = append(evict, v)
	}
	if l.max > 0 && len(l.conns)-len(evict) >= l.max {
		v := l.oldestIdleLocked("", evict...)
		if v == nil {
			l.mu.Unlock()
			return nil, "transport.http.maxConnections (" + strconv.Itoa(l.max) + ")"
		}
		evict = append(evict, v)
	}
	for _, v := range evict { // uncounted now, closed below
		v.busy = -1 // never picked again
		delete(l.conns, v)
		if l.byAddr[v.addr]--; l.byAddr[v.addr] <= 0 {
			delete(l.byAddr, v.addr)
		}
		v.once.Do(func() {})
	}
	l.seq++
	lc.seq = l.seq
	l.conns[lc] = struct{}{}
	l.byAddr[lc.addr]++
	l.mu.Unlock()
	for _, v := range evict {
		_ = v.Conn.Close()
	}
	return lc, ""
}

// oldestIdleLocked returns the oldest connection serving no request, of
// addr when it is not "", other than those in skip; nil if there is none.
func (l *connLimiter) oldestIdleLocked(addr string, skip ...*limitedConn) *limitedConn {
	var best *limitedConn
	for c := range l.conns {
		if c.busy != 0 || (addr != "" && c.addr != addr) || containsConn(skip, c) {
			continue
		}
		if best == nil || c.seq < best.seq {
			best = c
		}
	}
	return best
}

func containsConn(list []*limitedConn, c *limitedConn) bool {
	for _, x := range list {
		if x == c {
			return true
		}
	}
	return false
}

// serving marks a request on c as begun (+1) or done (-1); a connection
// serving a request is never closed to make room.
func (l *connLimiter) serving(c *limitedConn, delta int) {
	l.mu.Lock()
	if c.busy >= 0 {
		c.busy += delta
	}
	l.mu.Unlock()
}

// count returns the open connections, for tests and logs.
func (l *connLimiter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// limitListener applies a connLimiter to the connections it accepts.
type limitListener struct {
	net.Listener
	l *connLimiter
}

// Accept returns the next admitted connection; refused ones are answered
// 503 and closed here.
func (ll *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := ll.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc, bound := ll.l.admit(c)
		if lc != nil {
			return lc, nil
		}
		refuseConn(c, bound)
	}
}

// refuseConn answers 503 on a connection over a bound and closes it,
// without reading anything from it.
func refuseConn(c net.Conn, bound string) {
	body := `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"too many connections: the server's ` + bound +
		` is reached and every connection is serving a request; retry later","data":{"code":"RESOURCE_EXHAUSTED","httpStatus":503}}}` + "\n"
	_ = c.SetWriteDeadline(time.Now().Add(refuseTimeout))
	_, _ = c.Write([]byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n" +
		"Retry-After: 1\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body))
	_ = c.Close()
}

// connKey is the context key of the request's counted connection.
type connKey struct{}

// withConn is http.Server.ConnContext: it keeps the counted connection in
// the context of its requests.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitedConn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// connOf returns the counted connection of a request, or nil.
func connOf(ctx context.Context) *limitedConn {
	lc, _ := ctx.Value(connKey{}).(*limitedConn)
	return lc
}
