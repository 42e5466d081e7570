package natstest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// link is a TCP proxy carrying the routes node from opens to node to.
// Cut, it closes what it carries and refuses new connections.
type link struct {
	from, to int
	addr     string
	target   string
	l        net.Listener

	mu    sync.Mutex
	cut   bool                  // guarded by mu
	conns map[net.Conn]struct{} // guarded by mu
}

func startLink(t testing.TB, from, to int, target string) *link {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	k := &link{from: from, to: to, addr: l.Addr().String(), target: target, l: l, conns: map[net.Conn]struct{}{}}
	go k.serve()
	t.Cleanup(func() {
		_ = l.Close()
		k.setCut(true)
	})
	return k
}

func (k *link) serve() {
	for {
		c, err := k.l.Accept()
		if err != nil {
			return
		}
		go k.carry(c)
	}
}

func (k *link) carry(c net.Conn) {
	up, err := net.Dial("tcp", k.target)
	if err != nil {
		_ = c.Close()
		return
	}
	k.mu.Lock()
	if k.cut {
		k.mu.Unlock()
		_ = c.Close()
		_ = up.Close()
		return
	}
	k.conns[c], k.conns[up] = struct{}{}, struct{}{}
	k.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	_ = c.Close()
	_ = up.Close()
	k.mu.Lock()
	delete(k.conns, c)
	delete(k.conns, up)
	k.mu.Unlock()
}

func (k *link) setCut(cut bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.cut = cut
	if cut {
		for c := range k.conns {
			_ = c.Close()
		}
	}
}

// Isolate cuts node i off the other nodes (both directions of its
// routes): a network partition with i in the minority. Its clients still
// reach it. Only a cluster from StartPartitionableCluster can be
// partitioned.
func (c *Cluster) Isolate(i int) {
	c.t.Helper()
	if len(c.links) == 0 {
		c.t.Fatal("natstest: Isolate needs a cluster from StartPartitionableCluster")
	}
	for _, k := range c.links {
		if k.from == i || k.to == i {
			k.setCut(true)
		}
	}
}

// Heal reconnects every route cut by Isolate.
func (c *Cluster) Heal() {
	for _, k := range c.links {
		k.setCut(false)
	}
}
