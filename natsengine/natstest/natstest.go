// Package natstest starts real embedded NATS servers for tests: one per
// test (a temporary store directory, a random port) or a three-node
// cluster on loopback, all shut down when the test ends.
package natstest

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/mcprt/mcprt/natsengine"
)

// Server starts a single embedded server with JetStream (file storage,
// sync_always) for t.
func Server(t testing.TB) *natsengine.Server {
	t.Helper()
	return ServerIn(t, t.TempDir(), "127.0.0.1:0")
}

// ServerNoSync is Server without sync_always: for tests of ordering and
// exclusion (many rounds of racing writers), not of durability.
func ServerNoSync(t testing.TB) *natsengine.Server {
	t.Helper()
	return start(t, t.TempDir(), "127.0.0.1:0", false)
}

// ServerIn starts an embedded server on listen with its store in dir (to
// restart one from the same store).
func ServerIn(t testing.TB, dir, listen string) *natsengine.Server {
	t.Helper()
	return start(t, dir, listen, true)
}

func start(t testing.TB, dir, listen string, syncAlways bool) *natsengine.Server {
	t.Helper()
	s, err := natsengine.StartServer(natsengine.ServerOptions{
		Config: natsengine.ServerConfig{Listen: listen}, StoreDir: dir, SyncAlways: syncAlways,
	})
	if err != nil {
		t.Fatalf("start an embedded NATS server: %v", err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

// Connect connects to url with cfg's defaults, closed when t ends.
func Connect(t testing.TB, url string) *natsengine.Conn {
	t.Helper()
	cfg := natsengine.DefaultConfig()
	cfg.ConnectTimeout = 20 * time.Second
	c, err := natsengine.Connect(context.Background(), natsengine.ConnOptions{Config: cfg, URL: url, Name: t.Name()})
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(c.Close)
	return c
}

// FreePort returns a loopback address with a port free at the moment.
func FreePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Node is one node of a Cluster.
type Node struct {
	Dir, Listen, Route string
	Config             natsengine.ServerConfig
	Server             *natsengine.Server // nil while stopped
	advertise          string
}

// Cluster is three embedded servers routed to each other on loopback.
type Cluster struct {
	t          testing.TB
	Nodes      []*Node
	syncAlways bool
	links      []*link // routes through proxies (StartPartitionableCluster)
}

// StartCluster starts a three-node JetStream cluster (sync_always) and
// waits until it has a meta leader.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	return StartClusterSync(t, true)
}

// StartClusterSync is StartCluster with sync_always on or off (off:
// JetStream's default, a sync every 2 minutes; durability by quorum).
func StartClusterSync(t testing.TB, syncAlways bool) *Cluster {
	t.Helper()
	return startCluster(t, syncAlways, false)
}

// StartPartitionableCluster is StartCluster with every route through a
// proxy of its own, so that Isolate can cut a node off the others (a
// network partition) while its clients still reach it.
func StartPartitionableCluster(t testing.TB) *Cluster {
	t.Helper()
	return startCluster(t, true, true)
}

func startCluster(t testing.TB, syncAlways, proxied bool) *Cluster {
	t.Helper()
	// The ports are picked before the servers listen on them, so another
	// test may take one in between: start again on fresh ports then.
	var err error
	for range 3 {
		var c *Cluster
		if c, err = tryCluster(t, syncAlways, proxied); err == nil {
			return c
		}
		t.Logf("starting the cluster again on fresh ports: %v", err)
	}
	t.Fatal(err)
	return nil
}

// tryCluster starts a cluster on freshly picked ports; on a start error it
// shuts down what it started and returns the error.
func tryCluster(t testing.TB, syncAlways, proxied bool) (*Cluster, error) {
	t.Helper()
	c := &Cluster{t: t, syncAlways: syncAlways}
	for i := range 3 {
		c.Nodes = append(c.Nodes, &Node{Dir: t.TempDir(), Listen: FreePort(t), Route: FreePort(t)})
		c.Nodes[i].Config = natsengine.ServerConfig{Name: fmt.Sprintf("n%d", i+1), ClusterName: "mcprt-test"}
	}
	for i, n := range c.Nodes {
		n.Config.Listen, n.Config.ClusterListen = n.Listen, n.Route
		for j, o := range c.Nodes {
			switch {
			case i == j:
			case proxied:
				k := startLink(t, i, j, o.Route)
				c.links = append(c.links, k)
				n.Config.Routes = append(n.Config.Routes, "nats-route://"+k.addr)
			default:
				n.Config.Routes = append(n.Config.Routes, "nats-route://"+o.Route)
			}
		}
		if proxied {
			// Gossip must not open routes around the proxies: each node
			// names an address where nothing listens.
			n.advertise = FreePort(t)
		}
	}
	errs := make(chan error, 3)
	for _, n := range c.Nodes {
		go func() { errs <- c.start(n) }()
	}
	var startErr error
	for range 3 {
		if err := <-errs; err != nil && startErr == nil {
			startErr = err
		}
	}
	shutdown := func() {
		for _, n := range c.Nodes {
			if n.Server != nil {
				n.Server.Shutdown()
			}
		}
	}
	if startErr != nil {
		shutdown()
		return nil, startErr
	}
	t.Cleanup(shutdown)
	deadline := time.Now().Add(30 * time.Second)
	for !c.Nodes[0].Server.JetStreamClusterReady() {
		if time.Now().After(deadline) {
			t.Fatal("the cluster elected no JetStream meta leader within 30s")
		}
		time.Sleep(50 * time.Millisecond) // polling the server's state, not synchronising with a goroutine
	}
	return c, nil
}

func (c *Cluster) start(n *Node) error {
	s, err := natsengine.StartServer(natsengine.ServerOptions{Config: n.Config, StoreDir: n.Dir, SyncAlways: c.syncAlways,
		ReadyTimeout: 30 * time.Second, ClusterAdvertise: n.advertise})
	if err != nil {
		return fmt.Errorf("start node %s: %w", n.Config.Name, err)
	}
	n.Server = s
	return nil
}

// Stop shuts node i down.
func (c *Cluster) Stop(i int) {
	if s := c.Nodes[i].Server; s != nil {
		s.Shutdown()
		c.Nodes[i].Server = nil
	}
}

// Restart starts node i again from its store.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if err := c.start(c.Nodes[i]); err != nil {
		c.t.Fatal(err)
	}
}

// URLs is every node's client URL, comma-separated.
func (c *Cluster) URLs() string {
	u := ""
	for i, n := range c.Nodes {
		if i > 0 {
			u += ","
		}
		u += "nats://" + n.Listen
	}
	return u
}
