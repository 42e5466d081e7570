package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// The request lines the session benchmarks send.
const (
	initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
		`"capabilities":{},"clientInfo":{"name":"mcprt-bench","version":"1"}}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	requestHead     = `{"jsonrpc":"2.0","id":`
	noopTail        = `,"method":"tools/call","params":{"name":"noop","arguments":{}}}` + "\n"
	listTail        = `,"method":"tools/list","params":{}}` + "\n"
)

// session is a real mcp.Session served over a pipe, with logging on at
// info into io.Discard.
type session struct {
	srv    *mcp.Server
	sess   *mcp.Session
	pipe   *pipe
	served chan error
	nextID int64
}

// newLogger returns the logger of every benchmark: the real JSON handler
// with redaction, at info, writing to io.Discard.
func newLogger() *slog.Logger {
	return core.NewLogger(io.Discard, core.LogOptions{Level: slog.LevelInfo})
}

// newServer builds a server with cfg and lets setup register tools.
func newServer(tb testing.TB, cfg config.Base, setup func(*mcp.Server) error) *mcp.Server {
	tb.Helper()
	srv, err := mcp.NewServer(serverOptions(cfg, mcp.Options{Logger: newLogger(), Transport: "stdio"}))
	if err != nil {
		tb.Fatal(err)
	}
	if setup != nil {
		if err := setup(srv); err != nil {
			tb.Fatal(err)
		}
	}
	return srv
}

// startSession serves a new session of srv on a pipe and completes the
// handshake.
func startSession(tb testing.TB, srv *mcp.Server) *session {
	tb.Helper()
	s := &session{srv: srv, pipe: newPipe(), served: make(chan error, 1), nextID: 2}
	s.sess = srv.Connect(srv.Lines(s.pipe, s.pipe), nil)
	go func() { s.served <- s.sess.Serve(context.Background()) }()
	tb.Cleanup(func() { s.close(tb) })

	s.pipe.capture(true)
	s.pipe.do(tb, &phase{n: 2, window: 1, line: fixedLines([]string{initializeLine, initializedLine}, 1)}, 1)
	if out := s.pipe.capture(false); !bytes.Contains(out, []byte(`"protocolVersion":"2025-06-18"`)) {
		tb.Fatalf("initialize answered %s", out)
	}
	s.pipe.check(tb)
	return s
}

// close ends the input and waits for the session to finish.
func (s *session) close(tb testing.TB) {
	close(s.pipe.phases)
	select {
	case err := <-s.served:
		if err != nil {
			tb.Errorf("Serve: %v", err)
		}
	case <-time.After(time.Minute):
		tb.Errorf("the session did not end after its input did")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.sess.Wait(ctx); err != nil {
		tb.Errorf("Wait: %v", err)
	}
}

// requests returns a phase function that sends requestHead, an id counting
// from first, then tail.
func requests(tail string, first int64) func([]byte, int) ([]byte, bool) {
	return func(dst []byte, i int) ([]byte, bool) {
		dst = append(dst, requestHead...)
		dst = strconv.AppendInt(dst, first+int64(i), 10)
		return append(dst, tail...), true
	}
}

// calls sends n requests ending in tail with at most window in flight and
// waits for their answers.
func (s *session) calls(tb testing.TB, tail string, n, window int) {
	ph := &phase{n: n, window: int64(window), line: requests(tail, s.nextID)}
	s.nextID += int64(n)
	s.pipe.do(tb, ph, n)
}

// warm makes one checked call (its answer must contain want) and then 200
// more, so that first-call costs stay out of the measurement.
func (s *session) warm(tb testing.TB, tail, want string) {
	tb.Helper()
	s.pipe.capture(true)
	s.calls(tb, tail, 1, 1)
	if out := s.pipe.capture(false); !bytes.Contains(out, []byte(want)) {
		tb.Fatalf("the first answer lacks %s: %s", want, out)
	}
	s.calls(tb, tail, 200, 1)
	s.pipe.check(tb)
}

// bench measures b.N requests ending in tail, window in flight.
func (s *session) bench(b *testing.B, tail string, window int) {
	b.ReportAllocs()
	b.ResetTimer()
	s.calls(b, tail, b.N, window)
	b.StopTimer()
	s.pipe.check(b)
}

// serverOptions is opts with the settings of cfg, mapped as the binary maps
// them (config.ServerOptions); a mapping error panics, failing the test.
func serverOptions(cfg config.Base, opts mcp.Options) mcp.Options {
	o, err := config.ServerOptions(cfg, opts)
	if err != nil {
		panic(fmt.Sprintf("config.ServerOptions: %v", err))
	}
	return o
}
