package streamable

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/mcp"
)

// errorCode reads a JSON error body's data.code.
func errorCode(t *testing.T, m wire) string {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("want a JSON-RPC error, got %+v", m)
	}
	var d struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(m.Error.Data, &d)
	return d.Code
}

// TestOriginAndHostChecks refuses other sites (DNS rebinding) with 403 and
// admits localhost and the allow-lists.
func TestOriginAndHostChecks(t *testing.T) {
	f := newFixture(t, fixtureOpts{http: func(c *Config) {
		c.AllowedOrigins = []string{"https://app.example.com"}
		c.AllowedHosts = []string{"mcp.example.com"}
	}})
	for _, tc := range []struct {
		name   string
		hdr    []string
		status int
	}{
		{"foreign origin", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"null origin", []string{"Origin", "null"}, http.StatusForbidden},
		{"origin that only starts like localhost", []string{"Origin", "http://localhost.evil.example"}, http.StatusForbidden},
		{"rebound host name", []string{"Host", "evil.example:8080"}, http.StatusForbidden},
		{"localhost origin", []string{"Origin", "http://localhost:6274"}, http.StatusOK},
		{"loopback origin", []string{"Origin", "http://127.0.0.1:3000"}, http.StatusOK},
		{"allowed origin", []string{"Origin", "https://APP.example.com"}, http.StatusOK},
		{"allowed host", []string{"Host", "mcp.example.com:443"}, http.StatusOK},
		{"localhost host", []string{"Host", "localhost:9"}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := f.request(t.Context(), http.MethodPost, initBody, tc.hdr...)
			if len(tc.hdr) == 2 && tc.hdr[0] == "Host" {
				req.Host = tc.hdr[1]
			}
			resp := f.send(req)
			body := readAll(t, resp)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status == http.StatusForbidden && !strings.Contains(body, "allowed") {
				t.Fatalf("a 403 body should say what is allowed: %s", body)
			}
		})
	}
}

// TestSessionHeaderErrors: no id → 400, an unknown id → 404, a bad
// protocol version → 400.
func TestSessionHeaderErrors(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	sid := f.open()
	if c := errorCode(t, jsonAnswer(t, f.do(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), http.StatusBadRequest)); c != "INVALID_ARGUMENT" {
		t.Fatalf("no session id: data.code %q", c)
	}
	if c := errorCode(t, jsonAnswer(t, f.post("not-a-session", `{"jsonrpc":"2.0","id":1,"method":"ping"}`), http.StatusNotFound)); c != "NOT_FOUND" {
		t.Fatalf("unknown session id: data.code %q", c)
	}
	jsonAnswer(t, f.do(http.MethodGet, "", "Mcp-Session-Id", "not-a-session"), http.StatusNotFound)
	jsonAnswer(t, f.do(http.MethodDelete, "", "Mcp-Session-Id", "not-a-session"), http.StatusNotFound)
	jsonAnswer(t, f.do(http.MethodGet, ""), http.StatusBadRequest)
	m := jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "MCP-Protocol-Version", "1999-01-01"), http.StatusBadRequest)
	if !strings.Contains(m.Error.Message, "2025-11-25") {
		t.Fatalf("a bad protocol version: the message should list the supported ones: %s", m.Error.Message)
	}
	// No header at all means 2025-03-26, which is supported.
	if m := jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, "MCP-Protocol-Version", ""), http.StatusOK); m.Result == nil {
		t.Fatalf("ping without MCP-Protocol-Version: %+v", m)
	}
	// initialize again on a session.
	if m := jsonAnswer(t, f.post(sid, initBody), http.StatusOK); m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("a second initialize: %+v, want -32600", m)
	}
}

// TestBadBodies: oversized → 413; invalid or truncated JSON → -32700;
// wrong content types → 415 or 406; an id in flight → -32600.
func TestBadBodies(t *testing.T) {
	f := newFixture(t, fixtureOpts{base: func(o *mcp.Options) { o.Limits.MaxMessageBytes = 1024 }})
	sid := f.open()
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`
	if c := errorCode(t, jsonAnswer(t, f.post(sid, big), http.StatusRequestEntityTooLarge)); c != "RESOURCE_EXHAUSTED" {
		t.Fatalf("oversized body: data.code %q", c)
	}
	// Without Content-Length (chunked), the limit holds as well.
	req := f.request(t.Context(), http.MethodPost, "", "Mcp-Session-Id", sid)
	req.Body = io.NopCloser(strings.NewReader(big))
	req.ContentLength = -1
	jsonAnswer(t, f.send(req), http.StatusRequestEntityTooLarge)

	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"meth`, `{nope}`, ``, "\xff\xfe"} {
		m := jsonAnswer(t, f.post(sid, body), http.StatusBadRequest)
		if m.Error == nil || m.Error.Code != -32700 || string(m.ID) != "null" {
			t.Fatalf("body %q: %+v, want -32700 with id null", body, m)
		}
	}
	if m := jsonAnswer(t, f.post(sid, `{"jsonrpc":"1.0","id":5,"method":"ping"}`), http.StatusBadRequest); m.Error == nil || m.Error.Code != -32600 || string(m.ID) != "5" {
		t.Fatalf("an invalid request with a readable id: %+v", m)
	}
	// A session that never initialized answers -32700 too (no session yet).
	if m := jsonAnswer(t, f.do(http.MethodPost, `{"jsonrpc":`), http.StatusBadRequest); m.Error.Code != -32700 {
		t.Fatalf("truncated initialize: %+v", m)
	}

	jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Content-Type", "text/plain"), http.StatusUnsupportedMediaType)
	jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Content-Type", ""), http.StatusUnsupportedMediaType)
	jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Accept", "text/html"), http.StatusNotAcceptable)
	jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Accept", "application/json"), http.StatusNotAcceptable)
	jsonAnswer(t, f.do(http.MethodGet, "", "Mcp-Session-Id", sid, "Accept", "application/json"), http.StatusNotAcceptable)
	if m := jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Content-Type", "application/json; charset=utf-8", "Accept", "*/*"), http.StatusOK); m.Result == nil {
		t.Fatalf("charset parameter and */*: %+v", m)
	}
	resp := f.do(http.MethodPut, "{}", "Mcp-Session-Id", sid)
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") == "" {
		t.Fatalf("PUT: status %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}

	// A request id still in flight is refused; the first call is unharmed.
	done := make(chan wire, 1)
	go func() {
		resp, err := f.ts.Client().Do(f.request(t.Context(), http.MethodPost,
			`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"steps","arguments":{"before":0,"after":0}}}`, "Mcp-Session-Id", sid))
		if err != nil {
			t.Error(err)
			close(done)
			return
		}
		defer resp.Body.Close()
		done <- jsonAnswer(t, resp, http.StatusOK)
	}()
	<-f.started
	if m := jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":9,"method":"ping"}`), http.StatusBadRequest); m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("a duplicate id: %+v, want -32600", m)
	}
	close(f.release)
	if m := <-done; string(m.ID) != "9" || m.Result == nil {
		t.Fatalf("the first call with id 9: %+v", m)
	}
}

// TestBearerToken: 401 with WWW-Authenticate without the token or with a
// wrong one; the admin token opens a session that keeps asking for it.
func TestBearerToken(t *testing.T) {
	f := newFixture(t, fixtureOpts{
		http:       func(c *Config) { c.AuthTokenEnvVar = "TEST_HTTP_TOKEN" },
		adminToken: "TEST_ADMIN_TOKEN",
		env:        map[string]string{"TEST_HTTP_TOKEN": "s3cret", "TEST_ADMIN_TOKEN": "adm1n"},
	})
	resp := f.do(http.MethodPost, initBody)
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("no token: status %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	resp = f.do(http.MethodPost, initBody, "Authorization", "Bearer wrong")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "invalid_token") {
		t.Fatalf("wrong token: status %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if body := readAll(t, resp); strings.Contains(body, "s3cret") {
		t.Fatalf("the error body shows the token: %s", body)
	}
	sid := f.open("Authorization", "Bearer s3cret")
	if m := jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Authorization", "bearer s3cret"), http.StatusOK); m.Result == nil {
		t.Fatalf("ping with the token: %+v", m)
	}
	if resp := f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a session's request without the token: status %d", resp.StatusCode)
	}

	admin := f.open("Authorization", "Bearer adm1n")
	if !f.h.AdminAuthorized(f.h.sessionByID(admin).sess) {
		t.Fatal("a session opened with the admin token is not AdminAuthorized")
	}
	if f.h.AdminAuthorized(f.h.sessionByID(sid).sess) {
		t.Fatal("a session opened with the access token is AdminAuthorized")
	}
	if tr := f.h.sessionByID(sid).sess.Transport(); tr != TransportName {
		t.Fatalf("the session's transport is %q, want %q", tr, TransportName)
	}
	jsonAnswer(t, f.post(admin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Authorization", "Bearer s3cret"), http.StatusForbidden)
	jsonAnswer(t, f.post(admin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Authorization", "Bearer adm1n"), http.StatusOK)
}

// TestTokenVariableMustBeSet: a named but empty variable refuses to start.
func TestTokenVariableMustBeSet(t *testing.T) {
	cfg := DefaultConfig()
	cfg.AuthTokenEnvVar = "TEST_MISSING"
	srv := newFixture(t, fixtureOpts{}).srv
	_, err := NewHandler(srv, cfg, Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err == nil || !strings.Contains(err.Error(), "TEST_MISSING") {
		t.Fatalf("NewHandler with an unset token variable: %v", err)
	}
}
