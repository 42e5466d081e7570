package mcp

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Server.Run: connect, serve, graceful shutdown.

func TestRunReturnsPromptlyWhenIdle(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		cfg := testConfig()
		// Far longer than the guard: Run must not wait for it when no
		// handler runs.
		cfg.Server.ShutdownTimeoutMs = int(10 * guard / time.Millisecond)
		srv, logs := newTestServer(t, cfg, Options{}, nil)

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c, errc := runTestClient(t, tr, srv, logs, ctx)
		c.handshake(Version20251125, `{}`, `{"name":"t","version":"1"}`)
		if n := srv.Stats().Sessions; n != 1 {
			t.Fatalf("%d sessions while Run serves", n)
		}
		cancel() // the client is idle
		if err := recv(t, errc, "Run to return after its context was cancelled"); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if n := srv.Stats().Sessions; n != 0 {
			t.Fatalf("%d sessions after Run returned", n)
		}

		// The end of the input and shutdown end Run cleanly too.
		c2, errc2 := runTestClient(t, tr, srv, logs, context.Background())
		c2.handshake(Version20250618, `{}`, `{"name":"t","version":"1"}`)
		c2.end.closeInput()
		if err := recv(t, errc2, "Run to return at the end of its input"); err != nil {
			t.Fatalf("Run at the end of the input: %v", err)
		}
		c3, errc3 := runTestClient(t, tr, srv, logs, context.Background())
		c3.handshake(Version20250618, `{}`, `{"name":"t","version":"1"}`)
		c3.request("9", MethodShutdown, "")
		if err := recv(t, errc3, "Run to return after shutdown"); err != nil {
			t.Fatalf("Run after shutdown: %v", err)
		}
	})
}

// TestRunShutdownAbortsDeafHandler: a handler that ignores its context
// gets an aborted completion record once server.shutdownTimeoutMs has
// passed, Run returns, and the handler's late return adds no record.
func TestRunShutdownAbortsDeafHandler(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		cfg := testConfig()
		cfg.Server.ShutdownTimeoutMs = 20
		gate := make(chan struct{})
		started := make(chan *Session, 1)
		returned := make(chan struct{})
		srv, logs := newTestServer(t, cfg, Options{}, func(s *Server) {
			err := s.AddTool(Tool{Name: "deaf", Handler: func(ctx context.Context, req *CallToolRequest) (any, error) {
				defer close(returned)
				started <- req.Session
				<-gate // ignores ctx
				return "too late", nil
			}})
			if err != nil {
				t.Fatal(err)
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c, errc := runTestClient(t, tr, srv, logs, ctx)
		c.handshake(Version20251125, `{}`, `{"name":"t","version":"1"}`)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deaf","_meta":{"correlationId":"deaf-1"}}}`)
		sess := recv(t, started, "deaf started")
		cancel()
		if err := recv(t, errc, "Run to return once the shutdown timeout passed"); err != nil {
			t.Fatalf("Run: %v", err)
		}
		// When Run returns, the call has its record: aborted, no code.
		outcomes := func() (string, map[string]any) {
			var seq []string
			var last map[string]any
			for _, r := range logs.records() {
				if r["correlationId"] == "deaf-1" {
					seq = append(seq, r["outcome"].(string))
					last = r
				}
			}
			return strings.Join(seq, ","), last
		}
		if seq, rec := outcomes(); seq != OutcomeAborted || rec["errorCode"] != nil {
			t.Fatalf("records when Run returned: %q %v; log:\n%s", seq, rec, logs.String())
		}
		if !strings.Contains(logs.String(), "shutdown timeout passed") {
			t.Error("the shutdown timeout was not logged")
		}
		if sess.State() != StateClosed {
			t.Fatalf("state %v after Run", sess.State())
		}
		// The handler returns late: it adds no second final record.
		close(gate)
		recv(t, returned, "the deaf handler to return")
		wctx, wcancel := context.WithTimeout(context.Background(), guard)
		defer wcancel()
		if err := sess.Wait(wctx); err != nil {
			t.Fatalf("Wait after the handler returned: %v", err)
		}
		if seq, _ := outcomes(); seq != OutcomeAborted {
			t.Fatalf("records after the handler returned: %q", seq)
		}
		if n := srv.Stats().ConcurrentExecutions; n != 0 {
			t.Fatalf("%d slots in use after the handler returned", n)
		}
	})
}
