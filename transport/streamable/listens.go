package streamable

import (
	"net"
	"net/http"
	"strconv"
	"sync"
)

// listenBounds counts the open subscriptions/listen requests of the
// stateless revision, overall and per client address, apart from the
// stateless request slots: a listen stays open as long as its client
// wants, so listens must not be able to take every slot that other
// requests need. Zero bounds mean no bound.
type listenBounds struct {
	max, perClient int

	mu       sync.Mutex
	open     int            // guarded by mu
	byClient map[string]int // guarded by mu
}

func newListenBounds(max, perClient int) *listenBounds {
	return &listenBounds{max: max, perClient: perClient, byClient: map[string]int{}}
}

// acquire counts one more listen of client, or says which bound refuses
// it.
func (b *listenBounds) acquire(client string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.max > 0 && b.open >= b.max:
		return "too many open subscriptions/listen requests: the server keeps " + strconv.Itoa(b.max) +
			" open at once (transport.http.maxListens); close one, or retry later"
	case b.perClient > 0 && b.byClient[client] >= b.perClient:
		return "this client already has " + strconv.Itoa(b.perClient) + " open subscriptions/listen requests " +
			"(transport.http.maxListensPerClient); one listen can watch many resources: close one before opening another"
	}
	b.open++
	b.byClient[client]++
	return ""
}

// release uncounts a listen of client.
func (b *listenBounds) release(client string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open--
	if b.byClient[client]--; b.byClient[client] <= 0 {
		delete(b.byClient, client)
	}
}

// remoteIP is a request's client address without its port.
func remoteIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// count returns the open listens.
func (b *listenBounds) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}
