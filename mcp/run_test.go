package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/jsonrpc"
)

// Server.Run: connect, serve, graceful shutdown.

func TestRunReturnsPromptlyWhenIdle(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		cfg := testConfig()
		// Far longer than the guard: Run must not wait for it when no
		// handler runs.
		cfg.Limits.ShutdownTimeout = 10 * guard
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
		cfg.Limits.ShutdownTimeout = 20 * time.Millisecond
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

// TestShutdownStopsWaitingWhenItsContextEnds: Shutdown waits for a
// running handler until its ctx is done, even when Limits.ShutdownTimeout
// is far off, and says the handler did not return in time.
func TestShutdownStopsWaitingWhenItsContextEnds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		context func() (context.Context, context.CancelFunc)
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 20*time.Millisecond)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate, started := make(chan struct{}), make(chan struct{})
			srv, err := NewServer(Options{Limits: Limits{ShutdownTimeout: 10 * guard}})
			if err != nil {
				t.Fatal(err)
			}
			err = srv.AddTool(Tool{Name: "deaf", Handler: func(context.Context, *CallToolRequest) (any, error) {
				close(started)
				<-gate // ignores its context
				return "late", nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			serverEnd, clientEnd := jsonrpc.NewMemoryPair()
			sess := srv.Connect(serverEnd, nil)
			served := make(chan error, 1)
			go func() { served <- sess.Serve(context.Background()) }()
			go func() { // drain the answers
				for {
					if _, err := clientEnd.Read(); err != nil {
						return
					}
				}
			}()
			for _, line := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deaf"}}`,
			} {
				if err := clientEnd.Write(context.Background(), jsonrpc.Outgoing{Data: []byte(line + "\n")}); err != nil {
					t.Fatal(err)
				}
			}
			recv(t, started, "the deaf handler to start")
			ctx, cancel := tc.context()
			defer cancel()
			done := make(chan bool, 1)
			go func() { done <- srv.Shutdown(ctx, sess) }()
			if recv(t, done, "Shutdown to return once its context ended") {
				t.Error("Shutdown reported every handler returned, but the deaf one still runs")
			}
			close(gate)
			_ = clientEnd.Close()
			recv(t, served, "Serve to return")
		})
	}
}
