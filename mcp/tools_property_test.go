package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// The tools_property_*_test.go files check properties of the tool runtime
// over random cases generated from fixed math/rand/v2 seeds,
// through an in-process Session over each transport; this file holds their
// client:
//
//   - TestPropertyToolsListOrder: tools/list pages, walked via nextCursor,
//     list every registered tool exactly once in strictly increasing byte
//     order, for random tool sets, page sizes and add/remove sequences
//     (also between pages), in every revision.
//   - TestPropertyNoCompileDuringCall: tools/call never compiles a schema,
//     whatever the arguments (valid, invalid, not objects, huge) or tool.
//   - TestPropertyArgumentsReachHandlerUnchanged: a handler only ever sees
//     an object, byte for byte as sent in params.arguments, never _meta;
//     every call gets exactly one response.
//   - TestPropertyConcurrencyLimit: no more than
//     resources.maxConcurrentExecutions handlers run at once, under bursts
//     of pipelined calls with timeouts and handlers that ignore
//     cancellation; every call gets exactly one response; all slots come
//     back.
//   - TestPropertyCompletionRecords: every call gets exactly one final
//     completion record (a timed-out call also a timeout record before its
//     late_completed), for mixes of success, tool errors, timeouts, client
//     cancellations and disconnections.
//
// Each runs over every transport (forEachTransport), from the same seed.

// ---------------------------------------------------------------------------
// tpConn: a session over a transport whose responses are routed by id.

// tpConn is an in-process session over a transport. Responses are
// matched to requests by their id text; notifications are counted;
// anything else is kept as a stray message, which the tests treat as a
// failure.
type tpConn struct {
	t    *testing.T
	srv  *Server
	sess *Session
	logs *syncBuffer
	end  *clientEnd

	served   chan error
	readDone chan struct{}
	closed   sync.Once
	nextID   atomic.Int64

	mu      sync.Mutex
	waiters map[string]chan json.RawMessage // by id text
	counts  map[string]int                  // responses by id text
	strays  []string
	notes   int
}

// newTPConn builds a server with cfg and opts, lets setup register tools,
// starts a session over tr and, unless version is "", completes the
// handshake.
func newTPConn(t *testing.T, tr transportKind, cfg Options, opts Options, setup func(*Server), version string) *tpConn {
	t.Helper()
	logs := &syncBuffer{}
	if opts.Logger == nil {
		opts.Logger = core.NewLogger(logs, core.LogOptions{Level: slog.LevelInfo})
	}
	srv, _ := newTestServer(t, cfg, opts, setup)
	return attachTPConn(t, tr, srv, logs, version)
}

// attachTPConn starts a new session on srv.
func attachTPConn(t *testing.T, tr transportKind, srv *Server, logs *syncBuffer, version string) *tpConn {
	t.Helper()
	stream, end := newClientEnd(srv, tr)
	p := &tpConn{t: t, srv: srv, logs: logs, end: end, served: make(chan error, 1),
		readDone: make(chan struct{}), waiters: map[string]chan json.RawMessage{}, counts: map[string]int{}}
	p.sess = srv.Connect(stream, nil)
	go func() { p.served <- p.sess.Serve(context.Background()) }()
	go p.read()
	t.Cleanup(func() { p.shutdown() }) // also after Fatal
	if version != "" {
		resp := p.await(p.request("initialize", `{"protocolVersion":"`+version+
			`","capabilities":{},"clientInfo":{"name":"prop","version":"1"}}`))
		if resp["result"] == nil {
			t.Fatalf("initialize: %s", tpString(resp))
		}
		p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		// Notifications are handled in arrival order, before the ping is
		// routed: once it is answered the session is RUNNING.
		if resp := p.await(p.request(MethodPing, "")); resp["result"] == nil || p.sess.State() != StateRunning {
			t.Fatalf("ping after the handshake: %s, state %v", tpString(resp), p.sess.State())
		}
	}
	return p
}

// read routes output messages until the output ends.
func (p *tpConn) read() {
	defer close(p.readDone)
	for line := range p.end.msgs {
		var m map[string]json.RawMessage
		p.mu.Lock()
		switch {
		case json.Unmarshal(line, &m) != nil:
			p.strays = append(p.strays, string(line))
		case m["id"] == nil && m["method"] != nil:
			p.notes++
		case m["id"] != nil:
			key := string(m["id"])
			p.counts[key]++
			ch := p.waiters[key]
			if ch == nil || p.counts[key] > 1 {
				p.strays = append(p.strays, string(line))
				break
			}
			ch <- line // buffered 1, used once
		default:
			p.strays = append(p.strays, string(line))
		}
		p.mu.Unlock()
	}
}

func (p *tpConn) send(line string) {
	p.t.Helper()
	if err := p.end.send(line); err != nil {
		p.t.Fatalf("send %s: %v", clip(line, 200), err)
	}
}

// tpPending is a request whose response has not been read yet.
type tpPending struct {
	id   string
	line string
	ch   chan json.RawMessage
}

// request sends a request with a fresh numeric id and params, a raw JSON
// text sent as is ("" for none).
func (p *tpConn) request(method, params string) tpPending {
	p.t.Helper()
	id := strconv.FormatInt(p.nextID.Add(1), 10)
	line := `{"jsonrpc":"2.0","id":` + id + `,"method":` + quoteString(method)
	if params != "" {
		line += `,"params":` + params
	}
	line += `}`
	return p.sendRequest(id, line)
}

// sendRequest sends line, a request whose id text is id.
func (p *tpConn) sendRequest(id, line string) tpPending {
	p.t.Helper()
	ch := make(chan json.RawMessage, 1)
	p.mu.Lock()
	p.waiters[id] = ch
	p.mu.Unlock()
	p.send(line)
	return tpPending{id: id, line: line, ch: ch}
}

// await returns the response of a request.
func (p *tpConn) await(r tpPending) map[string]json.RawMessage {
	p.t.Helper()
	select {
	case line := <-r.ch:
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			p.t.Fatalf("response to %s is not an object: %s", clip(r.line, 200), line)
		}
		return m
	case <-time.After(guard):
		p.t.Fatalf("no response to %s within %v", clip(r.line, 200), guard)
		return nil
	}
}

// call sends tools/call with the given params and returns its response.
func (p *tpConn) call(params string) map[string]json.RawMessage {
	p.t.Helper()
	return p.await(p.request(MethodToolsCall, params))
}

// shutdown ends the input, waits for the session and every handler, and
// for the output to be read to its end. It is idempotent.
func (p *tpConn) shutdown() {
	p.closed.Do(func() {
		p.end.closeInput()
		select {
		case <-p.served:
		case <-time.After(guard):
			p.sess.Close()
			p.t.Errorf("Serve did not return within %v of the input's end", guard)
		}
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		if err := p.sess.Wait(ctx); err != nil {
			p.t.Errorf("handlers still running %v after the session closed: %v", guard, err)
		}
		p.end.finish()
		<-p.readDone
	})
}

// finish shuts the session down and checks that every response was
// expected: no stray lines, at most one response per id.
func (p *tpConn) finish() {
	p.t.Helper()
	p.shutdown()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.strays) > 0 {
		p.t.Fatalf("%d unexpected output lines, first: %s", len(p.strays), clip(p.strays[0], 300))
	}
	for id, n := range p.counts {
		if n != 1 {
			p.t.Fatalf("%d responses for id %s", n, id)
		}
	}
}

func (p *tpConn) notifications() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.notes
}

func tpString(m map[string]json.RawMessage) string {
	b, _ := json.Marshal(m)
	return clip(string(b), 400)
}

// tpOutcome is what a tools/call response says.
type tpOutcome struct {
	rpcCode  int64  // JSON-RPC error code, 0 for a result
	rpcCID   string // error.data.correlationId
	isError  bool
	code     string // the StructuredError code of a tool error
	cid, run string // the StructuredError ids
	text     string // content[0].text
}

// tpDecode decodes a tools/call response and checks its shape: an error
// with code, message and data.correlationId, or a result with content and
// isError, and for a tool error a complete StructuredError.
func tpDecode(t *testing.T, what string, m map[string]json.RawMessage) tpOutcome {
	t.Helper()
	var o tpOutcome
	if raw := m["error"]; raw != nil {
		var e struct {
			Code    *int64 `json:"code"`
			Message string `json:"message"`
			Data    struct {
				CorrelationID string `json:"correlationId"`
			} `json:"data"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Code == nil || e.Message == "" || e.Data.CorrelationID == "" ||
			m["result"] != nil {
			t.Fatalf("%s: malformed error response %s", what, tpString(m))
		}
		o.rpcCode, o.rpcCID = *e.Code, e.Data.CorrelationID
		return o
	}
	var r struct {
		Content []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		} `json:"content"`
		IsError *bool `json:"isError"`
	}
	if json.Unmarshal(m["result"], &r) != nil || r.IsError == nil || r.Content == nil {
		t.Fatalf("%s: result without content and isError: %s", what, tpString(m))
	}
	o.isError = *r.IsError
	if len(r.Content) > 0 && r.Content[0].Text != nil {
		o.text = *r.Content[0].Text
	}
	if !o.isError {
		return o
	}
	var se struct {
		Code          string `json:"code"`
		Message       string `json:"message"`
		Retryable     *bool  `json:"retryable"`
		CorrelationID string `json:"correlationId"`
		RunID         string `json:"runId"`
		Details       struct {
			Reason string `json:"reason"`
		} `json:"details"`
	}
	if len(r.Content) == 0 || r.Content[0].Type != "text" || json.Unmarshal([]byte(o.text), &se) != nil ||
		se.Code == "" || se.Message == "" || se.Retryable == nil || se.CorrelationID == "" || se.RunID == "" {
		t.Fatalf("%s: tool error without a complete StructuredError: %s", what, tpString(m))
	}
	if *se.Retryable != tpRetryable(core.Code(se.Code), se.Details.Reason) {
		t.Fatalf("%s: %s with retryable %v: %s", what, se.Code, *se.Retryable, tpString(m))
	}
	o.code, o.cid, o.run = se.Code, se.CorrelationID, se.RunID
	return o
}

// tpParams builds tools/call params for a tool and raw arguments ("" for
// none) and, if cid is not "", _meta.correlationId.
func tpParams(name, args, cid string) string {
	s := `{"name":` + quoteString(name)
	if args != "" {
		s += `,"arguments":` + args
	}
	if cid != "" {
		s += `,"_meta":{"correlationId":` + quoteString(cid) + `}`
	}
	return s + `}`
}

func tpNoop(context.Context, *CallToolRequest) (any, error) { return map[string]any{}, nil }

// tpRetryable is whether a tool error must say retryable: its code's
// default, but for the causes that differ (a panic is retryable, a payload
// over the limit is not).
func tpRetryable(code core.Code, reason string) bool {
	switch {
	case code == core.CodeInternal && reason == "panic":
		return true
	case code == core.CodeResourceExhausted && reason == "payload_too_large":
		return false
	}
	return code.Retryable()
}
