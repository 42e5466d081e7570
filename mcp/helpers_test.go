package mcp

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
)

// guard bounds every wait of the tests: it is a failure guard, never a
// way to let something happen. It is generous because CI runs every
// package at once under -race on two cores (a 64 MiB result took > 10 s).
const guard = 45 * time.Second

// ---------------------------------------------------------------------------
// Transports.

// transportKind names a transport the tests run sessions over.
type transportKind string

const (
	// transportLines is the newline-delimited transport (Server.Lines)
	// over pipes: what stdio is.
	transportLines transportKind = "lines"
	// transportMemory is jsonrpc.NewMemoryPair: whole messages over
	// channels.
	transportMemory transportKind = "memory"
)

var transports = []transportKind{transportLines, transportMemory}

// forEachTransport runs f as one subtest per transport.
func forEachTransport(t *testing.T, f func(t *testing.T, tr transportKind)) {
	t.Helper()
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) { f(t, tr) })
	}
}

// The property tests run over every transport. To stay within their time,
// the transports share each test's count of cases: each draws its share
// (propShare) from its own seed (propSeed), the first transport from the
// test's seed, so together they run as many cases as one transport used
// to, never the same ones twice.
func propSeed(seed int64, tr transportKind) int64 { return seed + int64(slices.Index(transports, tr)) }

func propShare(n int) int { return (n + len(transports) - 1) / len(transports) }

// clientEnd is the client's side of a transport: it sends one message at
// a time and receives whole messages on msgs, which is closed when the
// output ends.
type clientEnd struct {
	send       func(line string) error
	msgs       chan []byte
	closeInput func() // ends the server's input
	finish     func() // once the session is closed: ends the output, so msgs closes
}

// newClientEnd returns the server's stream of a new transport of kind tr
// and the client's end of it.
func newClientEnd(srv *Server, tr transportKind) (jsonrpc.Stream, *clientEnd) {
	end := &clientEnd{msgs: make(chan []byte, 1024)}
	switch tr {
	case transportLines:
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		end.send = func(line string) error { _, err := io.WriteString(inW, line+"\n"); return err }
		end.closeInput = func() { inW.Close() }
		end.finish = func() { outW.Close() }
		go func() {
			defer close(end.msgs)
			sc := bufio.NewScanner(outR)
			sc.Buffer(make([]byte, 64<<10), 64<<20)
			for sc.Scan() {
				end.msgs <- bytes.Clone(sc.Bytes())
			}
			_, _ = io.Copy(io.Discard, outR)
		}()
		return srv.Lines(inR, outW), end
	case transportMemory:
		server, client := jsonrpc.NewMemoryPair()
		end.send = func(line string) error {
			return client.Write(context.Background(), jsonrpc.Outgoing{Data: []byte(line + "\n")})
		}
		end.closeInput = func() { client.Close() }
		end.finish = func() { client.Close() }
		go func() {
			defer close(end.msgs)
			for {
				m, err := client.Read()
				if err != nil {
					return
				}
				end.msgs <- bytes.Clone(m)
			}
		}()
		return server, end
	}
	panic("unknown transport " + string(tr))
}

// ---------------------------------------------------------------------------
// Logs.

// syncBuffer is a log sink the tests can wait on: every Write wakes the
// waiters of next.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed at the next Write; nil when nobody waits
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// next returns a channel closed at the next Write.
func (s *syncBuffer) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// records returns the decoded "tool call completed" log entries.
func (s *syncBuffer) records() []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(s.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "tool call completed" {
			out = append(out, m)
		}
	}
	return out
}

// waitLog waits until cond holds of the log's completion records, woken by
// every log write.
func (s *syncBuffer) waitLog(t *testing.T, what string, cond func(recs []map[string]any) bool) []map[string]any {
	t.Helper()
	timeout := time.NewTimer(guard)
	defer timeout.Stop()
	for {
		wake := s.next() // before the check: no write is missed
		if recs := s.records(); cond(recs) {
			return recs
		}
		select {
		case <-wake:
		case <-timeout.C:
			t.Fatalf("%s: not logged within %v; log:\n%s", what, guard, s.String())
			return nil
		}
	}
}

// waitRecord waits for a completion record with the outcome and returns it.
func (s *syncBuffer) waitRecord(t *testing.T, outcome string) map[string]any {
	t.Helper()
	var found map[string]any
	s.waitLog(t, "a completion record with outcome "+outcome, func(recs []map[string]any) bool {
		for _, r := range recs {
			if r["outcome"] == outcome {
				found = r
				return true
			}
		}
		return false
	})
	return found
}

// recordsOf returns the outcomes of the completion records of one runId,
// in log order, joined by ",".
func recordsOf(recs []map[string]any, runID any) string {
	var seq []string
	for _, r := range recs {
		if r["runId"] == runID {
			seq = append(seq, r["outcome"].(string))
		}
	}
	return strings.Join(seq, ",")
}

// withConfig returns opts with the configured fields of cfg: its
// instructions, mode, limits, stateless hints and redaction keys, its
// tools and profiles when it has them, and its name and version unless
// opts has its own. The other fields (logger, clock, ids, transport, ...)
// stay as opts has them.
func withConfig(opts, cfg Options) Options {
	opts.Name, opts.Version = cmp.Or(opts.Name, cfg.Name), cmp.Or(opts.Version, cfg.Version)
	opts.Instructions, opts.Mode = cfg.Instructions, cfg.Mode
	opts.Limits, opts.Stateless, opts.RedactKeys = cfg.Limits, cfg.Stateless, cfg.RedactKeys
	if cfg.Tools != nil {
		opts.Tools = cfg.Tools
	}
	if cfg.Profiles != nil {
		opts.Profiles = cfg.Profiles
	}
	return opts
}

// testConfig returns the options of a server as the mcprt binary
// configures one by default (version "test"): the tests describe servers
// by changing them.
func testConfig() Options {
	return Options{
		Name: "mcprt", Version: "test", Mode: ModeFull,
		Limits: Limits{MaxMessageBytes: 4194304, MaxOutputBytes: 1048576, MaxInFlight: 1024, MaxBatchResponseBytes: 16777216,
			MaxConcurrentExecutions: 10, MaxPayloadBytes: 1048576, MaxResultBytes: 10485760, PageSize: 100,
			ToolTimeout: 30 * time.Second, ClientRequestTimeout: time.Minute, ShutdownTimeout: 10 * time.Second},
		Stateless:  StatelessOptions{RequestStateTTL: 10 * time.Minute, CacheScope: "private"},
		RedactKeys: core.DefaultRedactKeys(),
		Profiles:   testProfiles(),
	}
}

// testProfiles are named tool sets shaped like the mcprt binary's
// (config.ToolProfiles), for the tests of how profiles choose tools.
func testProfiles() map[string][]string {
	return map[string][]string{
		"core": {"aacp_send", "aacp_receive", "aacp_ack", "aacp_peek", "aacp_reply",
			"memory_store", "memory_search", "memory_retrieve",
			"reserve_paths", "check_reservations", "release_reservations",
			"task_claim", "task_update", "coord_start", "coord_finish", "server_ping"},
		"messaging": {"aacp_*", "coord_start", "coord_finish", "server_ping"},
		"memory":    {"memory_*", "server_ping"},
		"coordination": {"reserve_paths", "renew_reservations", "release_reservations", "check_reservations",
			"list_reservations", "force_release_reservation", "task_*", "coord_start", "coord_finish", "server_ping"},
		"governance": {"guard_*", "session_*", "trace_*", "workflow_*", "list_reservations", "check_reservations",
			"force_release_reservation", "task_list", "task_get", "server_ping", "health"},
	}
}

// toolSet is the ToolSet of entries; a bad entry fails the test.
func toolSet(t testing.TB, entries ...string) *ToolSet {
	t.Helper()
	set, err := ParseToolSet(entries, testProfiles())
	if err != nil {
		t.Fatalf("tools %v: %v", entries, err)
	}
	return set
}

// newTestServer builds a server with cfg logging into a syncBuffer, and
// lets setup register tools.
func newTestServer(t *testing.T, cfg Options, opts Options, setup func(*Server)) (*Server, *syncBuffer) {
	t.Helper()
	logBuf := &syncBuffer{}
	opts = withConfig(opts, cfg)
	if opts.Logger == nil {
		opts.Logger = core.NewLogger(logBuf, core.LogOptions{Level: slog.LevelDebug})
	}
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(srv)
	}
	return srv, logBuf
}

// ---------------------------------------------------------------------------
// testClient.

// testClient speaks JSON-RPC to an in-process Session over a transport.
type testClient struct {
	t      *testing.T
	tr     transportKind
	srv    *Server
	sess   *Session
	end    *clientEnd
	logBuf *syncBuffer
	done   chan struct{} // closed when Serve returned
	nextID int
}

// newTestClient builds a server with cfg, lets setup register tools,
// starts a session over tr and completes the handshake with the given
// revision ("" skips the handshake).
func newTestClient(t *testing.T, tr transportKind, cfg Options, opts Options, setup func(*Server), version string) *testClient {
	t.Helper()
	srv, logBuf := newTestServer(t, cfg, opts, setup)
	return connectTestClient(t, tr, srv, logBuf, version)
}

// connectTestClient starts one more session of srv over tr.
func connectTestClient(t *testing.T, tr transportKind, srv *Server, logBuf *syncBuffer, version string) *testClient {
	t.Helper()
	stream, end := newClientEnd(srv, tr)
	c := &testClient{t: t, tr: tr, srv: srv, end: end, logBuf: logBuf, done: make(chan struct{})}
	c.sess = srv.Connect(stream, nil)
	go func() {
		defer close(c.done)
		if err := c.sess.Serve(context.Background()); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	t.Cleanup(c.close)
	if version != "" {
		c.handshake(version, `{}`, `{"name":"t","version":"1"}`)
	}
	return c
}

// handshake sends initialize and notifications/initialized, then a ping:
// notifications are handled in arrival order before the ping is routed, so
// once the ping is answered the session is RUNNING.
func (c *testClient) handshake(version, caps, clientInfo string) map[string]any {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":` + caps + `,"clientInfo":` + clientInfo + `}}`)
	init := c.expect()
	if init["result"] == nil {
		c.t.Fatalf("initialize: %v", init)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.quiet()
	if c.sess == nil { // a session of Server.Run: the ping's answer says enough
		return init["result"].(map[string]any)
	}
	if st := c.sess.State(); st != StateRunning {
		c.t.Fatalf("state %v after the handshake", st)
	}
	return init["result"].(map[string]any)
}

// close ends the input, waits for Serve and every handler, then ends the
// output. It runs at cleanup.
func (c *testClient) close() {
	c.end.closeInput()
	select {
	case <-c.done:
	case <-time.After(guard):
		c.t.Errorf("Serve did not return within %v of the input's end", guard)
		if c.sess == nil {
			return
		}
		c.sess.Close()
		<-c.done
	}
	if c.sess == nil { // Server.Run waited for the handlers itself
		c.end.finish()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := c.sess.Wait(ctx); err != nil {
		c.t.Errorf("handlers still running %v after the session closed", guard)
	}
	c.end.finish()
}

// runTestClient serves one session of srv over tr with Server.Run(ctx);
// Run's error arrives on the channel, and done is closed after it.
func runTestClient(t *testing.T, tr transportKind, srv *Server, logBuf *syncBuffer, ctx context.Context) (*testClient, <-chan error) {
	t.Helper()
	stream, end := newClientEnd(srv, tr)
	c := &testClient{t: t, tr: tr, srv: srv, end: end, logBuf: logBuf, done: make(chan struct{})}
	errc := make(chan error, 1)
	go func() {
		defer close(c.done)
		errc <- srv.Run(ctx, stream)
	}()
	t.Cleanup(c.close)
	return c, errc
}

func (c *testClient) send(line string) {
	c.t.Helper()
	if err := c.end.send(line); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// expect returns the next message the server sent.
func (c *testClient) expect() map[string]any {
	c.t.Helper()
	select {
	case l, ok := <-c.end.msgs:
		if !ok {
			c.t.Fatal("the output ended")
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			c.t.Fatalf("output is not JSON: %q", l)
		}
		return m
	case <-time.After(guard):
		c.t.Fatalf("no output within %v", guard)
		return nil
	}
}

// expectRaw returns the next message the server sent, whatever its JSON
// type (a batch's answer is an array).
func (c *testClient) expectRaw() json.RawMessage {
	c.t.Helper()
	select {
	case l, ok := <-c.end.msgs:
		if !ok || !json.Valid(l) {
			c.t.Fatalf("want a JSON message, got %q (open %v)", l, ok)
		}
		return l
	case <-time.After(guard):
		c.t.Fatalf("no output within %v", guard)
		return nil
	}
}

// quiet checks that the server sends nothing unasked: a ping's answer is
// the next message. Everything the server did before routing the ping
// (notifications, answers already written) would come first.
func (c *testClient) quiet() {
	c.t.Helper()
	c.nextID++
	id := "quiet-" + strconv.Itoa(c.nextID)
	c.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"ping"}`)
	if m := c.expect(); m["id"] != id || m["result"] == nil {
		c.t.Fatalf("unexpected output before the answer to ping %s: %v", id, m)
	}
}

// call sends tools/call and returns the result object.
func (c *testClient) call(id, name, args string) map[string]any {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + callParamsJSON(name, args) + `}`)
	m := c.expect()
	res, ok := m["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("tools/call %s: no result: %v", name, m)
	}
	return res
}

// request sends a request and returns its response, which must be the
// next message.
func (c *testClient) request(id, method, params string) map[string]any {
	c.t.Helper()
	line := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		line += `,"params":` + params
	}
	c.send(line + "}")
	m := c.expect()
	if got, _ := json.Marshal(m["id"]); string(got) != id {
		c.t.Fatalf("%s: response %v is not to id %s", method, m, id)
	}
	return m
}

func (c *testClient) waitRecord(outcome string) map[string]any {
	c.t.Helper()
	return c.logBuf.waitRecord(c.t, outcome)
}

// callParamsJSON builds tools/call params.
func callParamsJSON(name, args string) string {
	params := `{"name":` + quoteString(name)
	if args != "" {
		params += `,"arguments":` + args
	}
	return params + `}`
}

// toolError decodes the StructuredError of an isError result (nil when the
// result is not an error).
func toolError(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	if res["isError"] != true {
		return nil
	}
	content := res["content"].([]any)
	text := content[0].(map[string]any)["text"].(string)
	var e map[string]any
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		t.Fatalf("tool error text is not JSON: %q", text)
	}
	return e
}

// rpcError returns a response's error object, failing when it has none.
func rpcError(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("want an error response, got %v", m)
	}
	return e
}

// recv waits for a value from ch, failing after the guard.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("%s: nothing within %v", what, guard)
		var zero T
		return zero
	}
}

// quoteString returns s as a JSON string, unclipped.
func quoteString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// clip shortens s for failure messages.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// toolNames returns the names of the registered tools, in registry order.
func toolNames(s *Server) []string {
	var names []string
	for _, rt := range s.tools.all() {
		names = append(names, rt.def.Name)
	}
	return names
}
