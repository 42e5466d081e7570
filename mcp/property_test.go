package mcp

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
)

// This file checks the lifecycle gate over random traffic
// generated with a seeded math/rand/v2 generator: before RUNNING, only initialize
// and ping get a result; every other request gets -32002 with data.code
// NOT_INITIALIZED and the connection's correlation id (even when the
// request carries its own in params._meta); a repeated initialize gets
// -32600; notifications get nothing and, but for notifications/initialized
// after initialize, change nothing.

const (
	propGateSeed     = 4242
	propGateSessions = 160
	propGateMessages = 30 // per session
)

// propGateMethods are MCP method names, near misses and notifications.
var propGateMethods = []string{
	MethodInitialize, MethodPing, "tools/list", "tools/call", "resources/list", "resources/read",
	"prompts/list", "prompts/get", MethodShutdown, "logging/setLevel", "completion/complete",
	"Ping", "INITIALIZE", "ping ", "initialize\u0000", "", "rpc.discover",
	NotifyInitialized, NotifyCancelled, "notifications/progress",
}

// propGateMsg is one generated message.
type propGateMsg struct {
	notification bool
	method       string
	params       string // raw JSON, "" for none
}

func propGateGen(m *propGateMsg, c *propRand) {
	*m = propGateMsg{notification: c.Intn(4) == 0}
	if c.Intn(5) == 0 {
		m.method = c.RandString()
	} else {
		m.method = propGateMethods[c.Intn(len(propGateMethods))]
	}
	cid, _ := json.Marshal("client-" + c.RandString())
	switch c.Intn(8) {
	case 0:
	case 1:
		m.params = `{}`
	case 2:
		m.params = `[1,2]`
	case 3:
		m.params = `{"_meta":{"correlationId":` + string(cid) + `}}`
	default:
		if m.method == MethodInitialize || c.Intn(3) == 0 {
			versions := append([]string{"1999-01-01", "2026-07-28", ""}, SupportedVersions()...)
			v, _ := json.Marshal(versions[c.Intn(len(versions))])
			m.params = `{"protocolVersion":` + string(v) + `,"capabilities":{},"clientInfo":{"name":"p","version":"1"},` +
				`"_meta":{"correlationId":` + string(cid) + `}}`
			if c.Intn(6) == 0 {
				m.params = []string{`{"protocolVersion":1}`, `{"capabilities":{}}`, `{"protocolVersion":"2025-06-18","capabilities":[]}`,
					`{"protocolVersion":"2025-06-18","clientInfo":"x"}`}[c.Intn(4)]
			}
		}
	}
}

// propGateSession is a session over a transport, read message by message.
type propGateSession struct {
	t    *testing.T
	sess *Session
	end  *clientEnd
	done chan error
	next int // next request id
}

func newPropGateSession(t *testing.T, srv *Server, tr transportKind) *propGateSession {
	stream, end := newClientEnd(srv, tr)
	p := &propGateSession{t: t, sess: srv.Connect(stream, nil), end: end, done: make(chan error, 1)}
	t.Cleanup(func() { p.sess.Close(); end.closeInput(); end.finish() }) // also on Fatal
	go func() { p.done <- p.sess.Serve(context.Background()) }()
	return p
}

func (p *propGateSession) send(line string) {
	p.t.Helper()
	if err := p.end.send(line); err != nil {
		p.t.Fatalf("send %s: %v", line, err)
	}
}

// expect reads the next response and decodes it.
func (p *propGateSession) expect(after string) map[string]json.RawMessage {
	p.t.Helper()
	select {
	case msg, ok := <-p.end.msgs:
		var m map[string]json.RawMessage
		if !ok || json.Unmarshal(msg, &m) != nil {
			p.t.Fatalf("after %s: want a response object, got %q (open %v)", after, msg, ok)
		}
		return m
	case <-time.After(guard):
		p.t.Fatalf("after %s: no response within %v", after, guard)
	}
	return nil
}

// call sends a request and returns its response, checking the id echo.
func (p *propGateSession) call(method, params string) (line string, resp map[string]json.RawMessage) {
	p.t.Helper()
	p.next++
	id := strconv.Itoa(p.next)
	if p.next%3 == 0 {
		id = strconv.Quote("r" + id)
	}
	mb, _ := json.Marshal(method)
	line = `{"jsonrpc":"2.0","id":` + id + `,"method":` + string(mb)
	if params != "" {
		line += `,"params":` + params
	}
	line += "}"
	p.send(line)
	resp = p.expect(line)
	if string(resp["id"]) != id {
		p.t.Fatalf("%s: response id %s, want %s", line, resp["id"], id)
	}
	return line, resp
}

func (p *propGateSession) close() {
	p.end.closeInput()
	if err := <-p.done; err != nil {
		p.t.Errorf("Serve: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := p.sess.Wait(ctx); err != nil {
		p.t.Errorf("Wait: %v", err)
	}
	p.end.finish()
	for msg := range p.end.msgs {
		p.t.Errorf("output after the input ended: %s", msg)
	}
}

// propGateError decodes an error response, failing on a result.
func propGateError(t *testing.T, line string, resp map[string]json.RawMessage) (code int64, data map[string]json.RawMessage) {
	t.Helper()
	var e struct {
		Code    int64                      `json:"code"`
		Message string                     `json:"message"`
		Data    map[string]json.RawMessage `json:"data"`
	}
	if resp["error"] == nil || resp["result"] != nil || json.Unmarshal(resp["error"], &e) != nil || e.Message == "" {
		t.Fatalf("%s: want an error response, got %v", line, propGateString(resp))
	}
	return e.Code, e.Data
}

func propGateString(resp map[string]json.RawMessage) string {
	b, _ := json.Marshal(resp)
	return string(b)
}

func TestPropertyLifecycleGate(t *testing.T) {
	forEachTransport(t, testPropertyLifecycleGate)
}

func testPropertyLifecycleGate(t *testing.T, tr transportKind) {
	cfg := testConfig()
	cfg.Version = "prop"
	srv, err := NewServer(withConfig(Options{IDs: &core.SequenceGenerator{}}, cfg))
	if err != nil {
		t.Fatal(err)
	}
	r := newPropRand(propSeed(propGateSeed, tr))
	counts := map[string]int{}
	for s := range propShare(propGateSessions) {
		p := newPropGateSession(t, srv, tr)
		state := StateStarting
		if s%2 == 1 { // start in INITIALIZING
			line, resp := p.call(MethodInitialize, `{"protocolVersion":"2025-06-18"}`)
			if resp["result"] == nil {
				t.Fatalf("%s: %s", line, propGateString(resp))
			}
			state = StateInitializing
		}
		for range propGateMessages {
			var m propGateMsg
			propGateGen(&m, r)
			if m.notification && m.method == NotifyInitialized && state == StateInitializing {
				m.method = "notifications/roots/list_changed" // would leave the states under test
			}
			if m.notification {
				counts["notification"]++
				mb, _ := json.Marshal(m.method)
				line := `{"jsonrpc":"2.0","method":` + string(mb)
				if m.params != "" {
					line += `,"params":` + m.params
				}
				p.send(line + "}")
				// Nothing may answer it: the next line is the ping's.
				if l, resp := p.call(MethodPing, ""); string(resp["result"]) != "{}" {
					t.Fatalf("after notification %s: ping answered %v (%s)", line, propGateString(resp), l)
				}
			} else {
				state = propGateCheckRequest(t, p, m, state, counts)
			}
			if st := p.sess.State(); st != state {
				t.Fatalf("session %d: state %v after %+v; want %v", s, st, m, state)
			}
		}
		p.close()
		if t.Failed() {
			return
		}
	}
	t.Logf("%d sessions; messages by outcome: %v", propShare(propGateSessions), counts)
}

// propGateCheckRequest sends one request and checks the answer the gate
// must give in state; it returns the new state.
func propGateCheckRequest(t *testing.T, p *propGateSession, m propGateMsg, state State,
	counts map[string]int) State {
	t.Helper()
	line, resp := p.call(m.method, m.params)
	switch {
	case m.method == MethodPing:
		counts["ping"]++
		if string(resp["result"]) != "{}" {
			t.Fatalf("%s: want {}, got %s", line, propGateString(resp))
		}
	case m.method == MethodInitialize && state == StateStarting:
		var ip struct {
			ProtocolVersion *string `json:"protocolVersion"`
		}
		if json.Unmarshal([]byte(m.params), &ip) == nil && ip.ProtocolVersion != nil && resp["result"] != nil {
			counts["initialize"]++
			var r struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			want := LatestVersion
			for _, v := range SupportedVersions() {
				if v == *ip.ProtocolVersion {
					want = v
				}
			}
			if json.Unmarshal(resp["result"], &r) != nil || r.ProtocolVersion != want {
				t.Fatalf("%s: want protocolVersion %s, got %s", line, want, propGateString(resp))
			}
			return StateInitializing
		}
		counts["initialize -32602"]++
		if code, data := propGateError(t, line, resp); code != jsonrpc.CodeInvalidParams || data["correlationId"] == nil {
			t.Fatalf("%s: want -32602 with a correlationId, got %s", line, propGateString(resp))
		}
	case m.method == MethodInitialize:
		counts["initialize again"]++
		if code, _ := propGateError(t, line, resp); code != jsonrpc.CodeInvalidRequest {
			t.Fatalf("%s: want -32600 already initialized, got %s", line, propGateString(resp))
		}
	default:
		counts["gated"]++
		code, data := propGateError(t, line, resp)
		var dcode, dmsg, dcid string
		_ = json.Unmarshal(data["code"], &dcode)
		_ = json.Unmarshal(data["message"], &dmsg)
		_ = json.Unmarshal(data["correlationId"], &dcid)
		if code != CodeNotInitialized || dcode != string(core.CodeNotInitialized) || dmsg == "" ||
			dcid != p.sess.CorrelationID() {
			t.Fatalf("%s in %v: want -32002 {code NOT_INITIALIZED, message, correlationId %q}, got %s",
				line, state, p.sess.CorrelationID(), propGateString(resp))
		}
	}
	return state
}
