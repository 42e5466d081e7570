package main

// Helpers of the NATS backend tests (nats_*_test.go): a hub run as
// `mcprt nats`, and the environment of an mcprt process that uses it.

import (
	"net"
	"path/filepath"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

const natsTestToken = "s3cret-hub-token"

// hub is an `mcprt nats` process.
type hub struct {
	p         *wiretest.Proc
	addr, dir string
}

// freeAddr returns a loopback address whose port is free at the moment.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startHub runs `mcprt nats` on addr with its store under dir and waits
// until it is ready.
func startHub(t testing.TB, addr, dir string) *hub {
	t.Helper()
	p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Args: []string{"nats"}, Env: []string{
		"MCPRT_AACP_DATA_DIR=" + dir, "MCPRT_NATS_SERVER_LISTEN=" + addr, "MCPRT_NATS_TOKEN=" + natsTestToken,
	}})
	p.ExpectLog(t, "mcprt nats ready", func(m map[string]any) bool { return m["msg"] == "mcprt nats ready" })
	return &hub{p: p, addr: addr, dir: dir}
}

// newHub starts a hub on a free port with a fresh store.
func newHub(t testing.TB) *hub {
	t.Helper()
	return startHub(t, freeAddr(t), filepath.Join(t.TempDir(), "hub"))
}

// clientEnv is the environment of an mcprt process on the hub.
func (h *hub) clientEnv(extra ...string) []string {
	return append([]string{"MCPRT_AACP_BACKEND=nats", "MCPRT_NATS_URL=nats://" + h.addr,
		"MCPRT_NATS_TOKEN=" + natsTestToken, "MCPRT_NATS_CLAIM_TTL_MS=1000"}, extra...)
}
