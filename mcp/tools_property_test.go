package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	fuzz "github.com/google/gofuzz"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
)

// This file checks properties of the tool runtime (SPEC §7) over random
// cases generated with gofuzz from fixed seeds, through an in-process
// Session over pipes:
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

// ---------------------------------------------------------------------------
// tpConn: a session over pipes whose responses are routed by id.

// tpConn is an in-process session. Responses are matched to requests by
// their id text; notifications are counted; anything else is kept as a
// stray line, which the tests treat as a failure.
type tpConn struct {
	t    *testing.T
	srv  *Server
	sess *Session
	logs *syncBuffer
	in   *io.PipeWriter
	outW *io.PipeWriter

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
// starts a session and, unless version is "", completes the handshake.
func newTPConn(t *testing.T, cfg core.Config, opts Options, setup func(*Server), version string) *tpConn {
	t.Helper()
	logs := &syncBuffer{}
	opts.Config = &cfg
	if opts.Logger == nil {
		opts.Logger = core.NewLogger(logs, core.LogOptions{Level: slog.LevelInfo})
	}
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(srv)
	}
	return attachTPConn(t, srv, logs, version)
}

// attachTPConn starts a new session on srv.
func attachTPConn(t *testing.T, srv *Server, logs *syncBuffer, version string) *tpConn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &tpConn{t: t, srv: srv, logs: logs, in: inW, outW: outW, served: make(chan error, 1),
		readDone: make(chan struct{}), waiters: map[string]chan json.RawMessage{}, counts: map[string]int{}}
	p.sess = srv.NewSession(inR, outW)
	go func() { p.served <- p.sess.Serve(context.Background()) }()
	go p.read(outR)
	t.Cleanup(func() { p.shutdown() }) // also after Fatal
	if version != "" {
		resp := p.await(p.request("initialize", `{"protocolVersion":"`+version+
			`","capabilities":{},"clientInfo":{"name":"prop","version":"1"}}`))
		if resp["result"] == nil {
			t.Fatalf("initialize: %s", tpString(resp))
		}
		p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		waitFor(t, func() bool { return p.sess.State() == jsonrpc.StateRunning })
	}
	return p
}

// read routes output lines until the output ends.
func (p *tpConn) read(r io.Reader) {
	defer close(p.readDone)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := bytes.Clone(sc.Bytes())
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
	_, _ = io.Copy(io.Discard, r)
}

func (p *tpConn) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
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
	case <-time.After(10 * time.Second):
		p.t.Fatalf("no response to %s within 10s", clip(r.line, 200))
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
		p.in.Close()
		select {
		case <-p.served:
		case <-time.After(10 * time.Second):
			p.sess.Close()
			p.t.Errorf("Serve did not return within 10s of the input's end")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.sess.Wait(ctx); err != nil {
			p.t.Errorf("handlers still running 10s after the session closed: %v", err)
		}
		p.outW.Close()
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
	}
	if len(r.Content) == 0 || r.Content[0].Type != "text" || json.Unmarshal([]byte(o.text), &se) != nil ||
		se.Code == "" || se.Message == "" || se.Retryable == nil || se.CorrelationID == "" || se.RunID == "" {
		t.Fatalf("%s: tool error without a complete StructuredError: %s", what, tpString(m))
	}
	if *se.Retryable != core.Code(se.Code).Retryable() {
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

func tpNoop(context.Context, json.RawMessage) (any, error) { return map[string]any{}, nil }

// ---------------------------------------------------------------------------
// Random JSON.

// tpWS returns random insignificant whitespace (mostly none). Never "\n":
// a message is one line.
func tpWS(c fuzz.Continue) string {
	if c.Intn(3) != 0 {
		return ""
	}
	return []string{" ", "\t", "  ", " \t ", "\r", "\r\t"}[c.Intn(6)]
}

var tpStringPieces = []string{"a", "b", "Z", "9", " ", "_meta", "name", "arguments", `\"`, `\\`, `\/`, `\n`,
	`\t`, `\u00e9`, `\ud83d\ude00`, `\u0000`, "é", "日本", "😀", "<>&", "{", "]", ",", ":", "null"}

// tpJSONString returns a JSON string literal (escapes and raw UTF-8).
func tpJSONString(c fuzz.Continue) string {
	var b strings.Builder
	b.WriteByte('"')
	for range c.Intn(6) {
		b.WriteString(tpStringPieces[c.Intn(len(tpStringPieces))])
	}
	b.WriteByte('"')
	return b.String()
}

var tpNumbers = []string{"0", "-0", "1", "-17", "3.25", "1e3", "-2.5E-3", "1E+2", "9007199254740993",
	"0.0000001", "1e300", "123456789012345678901234567890", "-1.0"}

// tpKeys are object member names; tpJSON never writes one twice in an
// object, and none decodes like another.
var tpKeys = []string{"a", "b", "message", "ms", "_meta", "name", "arguments", "x y", "é", "日本", "", "A", "n"}

// tpJSON returns a random JSON value, nested at most depth levels, with
// random whitespace between tokens. Member names are unique per object.
func tpJSON(c fuzz.Continue, depth int) string {
	k := c.Intn(8)
	if depth <= 0 && k >= 6 {
		k = c.Intn(6)
	}
	switch k {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[c.Intn(2)]
	case 2, 3:
		return tpNumbers[c.Intn(len(tpNumbers))]
	case 4, 5:
		return tpJSONString(c)
	case 6:
		return tpJSONArray(c, depth)
	}
	return tpJSONObject(c, depth)
}

func tpJSONArray(c fuzz.Continue, depth int) string {
	var b strings.Builder
	b.WriteString("[" + tpWS(c))
	for i := range c.Intn(4) {
		if i > 0 {
			b.WriteString(tpWS(c) + "," + tpWS(c))
		}
		b.WriteString(tpJSON(c, depth-1))
	}
	b.WriteString(tpWS(c) + "]")
	return b.String()
}

func tpJSONObject(c fuzz.Continue, depth int) string {
	var b strings.Builder
	b.WriteString("{" + tpWS(c))
	keys := slices.Clone(tpKeys)
	c.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for i, key := range keys[:c.Intn(5)] {
		if i > 0 {
			b.WriteString(tpWS(c) + "," + tpWS(c))
		}
		b.WriteString(quoteString(key) + tpWS(c) + ":" + tpWS(c) + tpJSON(c, depth-1))
	}
	b.WriteString(tpWS(c) + "}")
	return b.String()
}

// tpNonObject returns a JSON value that is not an object.
func tpNonObject(c fuzz.Continue) string {
	for {
		if v := tpJSON(c, 3); v[0] != '{' {
			return v
		}
	}
}

// ---------------------------------------------------------------------------
// 1. tools/list ordering.

const (
	tpListSeed  = 7001
	tpListCases = 300
)

// tpNameChars are the characters of tool names; the first few are the
// ones generated most, so that names collide and share prefixes.
const tpNameChars = "a-.0A_zZ9bcdefghijklmnopqrstuvwxyBCDEFGHIJKLMNOPQRSTUVWXY12345678"

// tpToolName returns a valid tool name: mostly short names over a few
// characters, sometimes long ones up to 128 characters.
func tpToolName(c fuzz.Continue) string {
	n, alpha := 1+c.Intn(4), 8
	switch c.Intn(10) {
	case 0:
		n = 100 + c.Intn(maxToolNameLen-99)
		alpha = len(tpNameChars)
	case 1, 2:
		n = 1 + c.Intn(12)
		alpha = len(tpNameChars)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = tpNameChars[c.Intn(alpha)]
	}
	return string(b)
}

var tpBadNames = []string{"", "sp ace", "é", "a/b", "tab\t", strings.Repeat("x", maxToolNameLen+1), "a\u0000", "semi;"}

// tpListOp adds or removes a tool.
type tpListOp struct {
	add  bool
	name string
}

// tpListCase is one tools/list scenario.
type tpListCase struct {
	pageSize int
	version  string
	rounds   [][]tpListOp // applied, then the list is walked
	midWalk  []tpListOp   // applied between the pages of one more walk
}

func tpListGen(lc *tpListCase, c fuzz.Continue) {
	pool := make([]string, 1+c.Intn(40))
	for i := range pool {
		pool[i] = tpToolName(c)
	}
	op := func() tpListOp {
		if c.Intn(25) == 0 {
			return tpListOp{add: c.RandBool(), name: tpBadNames[c.Intn(len(tpBadNames))]}
		}
		return tpListOp{add: c.Intn(3) != 0, name: pool[c.Intn(len(pool))]}
	}
	*lc = tpListCase{pageSize: 1 + c.Intn(10), version: SupportedVersions[c.Intn(len(SupportedVersions))]}
	for range 1 + c.Intn(4) {
		ops := make([]tpListOp, c.Intn(30))
		for i := range ops {
			ops[i] = op()
		}
		lc.rounds = append(lc.rounds, ops)
	}
	lc.midWalk = make([]tpListOp, c.Intn(20))
	for i := range lc.midWalk {
		lc.midWalk[i] = op()
	}
}

// tpListPage is one tools/list page.
type tpListPage struct {
	names  []string
	titles []bool // whether each entry has a title
	next   string
	more   bool // nextCursor present
}

func (p *tpConn) listPage(cursor string, first bool) tpListPage {
	p.t.Helper()
	params := ""
	if !first {
		params = `{"cursor":` + quoteString(cursor) + `}`
	}
	resp := p.await(p.request(MethodToolsList, params))
	var r struct {
		Tools []struct {
			Name        *string         `json:"name"`
			Title       *string         `json:"title"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
		NextCursor *string `json:"nextCursor"`
	}
	if json.Unmarshal(resp["result"], &r) != nil || r.Tools == nil {
		p.t.Fatalf("tools/list cursor %q: %s", cursor, tpString(resp))
	}
	var page tpListPage
	for _, tl := range r.Tools {
		if tl.Name == nil || !isObject(tl.InputSchema) {
			p.t.Fatalf("tools/list entry without name or inputSchema: %s", tpString(resp))
		}
		page.names = append(page.names, *tl.Name)
		page.titles = append(page.titles, tl.Title != nil)
	}
	if r.NextCursor != nil {
		page.next, page.more = *r.NextCursor, true
	}
	return page
}

func TestPropertyToolsListOrder(t *testing.T) {
	f := fuzz.NewWithSeed(tpListSeed).NilChance(0).Funcs(tpListGen)
	walks, mutations, pages := 0, 0, 0
	for i := range tpListCases {
		var lc tpListCase
		f.Fuzz(&lc)
		cfg := testConfig()
		cfg.Tools.PageSize = lc.pageSize
		p := newTPConn(t, cfg, Options{}, nil, lc.version)
		model := map[string]bool{}
		apply := func(op tpListOp) {
			t.Helper()
			var err error
			if op.add {
				// Titled tools check the revision's listing rules too.
				err = p.srv.AddTool(Tool{Name: op.name, Title: "T " + op.name, Handler: tpNoop})
			} else {
				err = p.srv.RemoveTool(op.name)
			}
			var ce *core.Error
			switch {
			case !validToolName(op.name):
				if !errors.As(err, &ce) || ce.Code != core.CodeInvalidArgument && ce.Code != core.CodeNotFound {
					t.Fatalf("case %d: %+v with an invalid name: %v", i, op, err)
				}
			case op.add == model[op.name]: // duplicate add, or removal of an absent tool
				want := core.CodeInvalidArgument
				if !op.add {
					want = core.CodeNotFound
				}
				if !errors.As(err, &ce) || ce.Code != want {
					t.Fatalf("case %d: %+v: got %v, want %s", i, op, err, want)
				}
			case err != nil:
				t.Fatalf("case %d: %+v: %v", i, op, err)
			default:
				model[op.name] = op.add
				if !op.add {
					delete(model, op.name)
				}
				mutations++
			}
		}
		walk := func(between []tpListOp) []string {
			t.Helper()
			walks++
			var all []string
			present := maps.Clone(model) // listed unless removed during the walk
			removed := map[string]bool{}
			cursor := ""
			for n := 0; ; n++ {
				if n > len(model)+len(between)+2 {
					t.Fatalf("case %d: tools/list did not end after %d pages", i, n)
				}
				page := p.listPage(cursor, n == 0)
				pages++
				for k, name := range page.names {
					if !model[name] {
						t.Fatalf("case %d: tools/list lists %q, which is not registered", i, name)
					}
					if wantTitle := lc.version >= Version20250618; page.titles[k] != wantTitle {
						t.Fatalf("case %d (%s): title listed %v", i, lc.version, page.titles[k])
					}
				}
				if len(page.names) > lc.pageSize || page.more && len(page.names) != lc.pageSize {
					t.Fatalf("case %d: page of %d with page size %d (more %v)", i, len(page.names), lc.pageSize, page.more)
				}
				all = append(all, page.names...)
				if !page.more {
					break
				}
				cursor = page.next
				if len(between) > 0 {
					for _, op := range between[:min(len(between), 1+len(between)/3)] {
						apply(op)
						if !op.add {
							removed[op.name] = true
						}
					}
					between = between[min(len(between), 1+len(between)/3):]
				}
			}
			for k := 1; k < len(all); k++ {
				if all[k-1] >= all[k] {
					t.Fatalf("case %d: tools/list not in strictly increasing byte order: %q then %q (page size %d)",
						i, all[k-1], all[k], lc.pageSize)
				}
			}
			for name := range present {
				if !removed[name] && !slices.Contains(all, name) {
					t.Fatalf("case %d: %q, registered throughout the walk, was not listed", i, name)
				}
			}
			return all
		}
		for _, ops := range lc.rounds {
			for _, op := range ops {
				apply(op)
			}
			got := walk(nil)
			want := slices.Sorted(maps.Keys(model))
			if !slices.Equal(got, want) {
				t.Fatalf("case %d (%s, page size %d): walked %q, registered %q", i, lc.version, lc.pageSize, got, want)
			}
		}
		walk(lc.midWalk)
		if got := slices.Sorted(maps.Keys(model)); !slices.Equal(walk(nil), got) {
			t.Fatalf("case %d: after the mid-walk changes the list is not the registered set %q", i, got)
		}
		// The running session heard of the changes: at least one
		// notifications/tools/list_changed, written before the last
		// tools/list response, and no more than one per change.
		if n := p.notifications(); n > mutations || mutations > 0 && n == 0 {
			t.Fatalf("case %d: %d notifications/tools/list_changed for %d changes", i, n, mutations)
		}
		p.finish()
		mutations = 0
	}
	t.Logf("%d cases, %d walks, %d pages", tpListCases, walks, pages)
}

// ---------------------------------------------------------------------------
// 2. No schema is compiled during a call.

const (
	tpCompileSeed    = 7002
	tpCompileServers = 12
	tpCompileCalls   = 300 // per server
	tpCompileLimit   = 8192
)

// tpNode is a generated schema with the knowledge to make valid and
// invalid instances of it.
type tpNode struct {
	kind     string // string, integer, number, boolean, array, object, anyOf, ref
	lo, hi   int    // integer bounds; string length bounds
	pattern  bool   // string: "^[a-z]*$"
	enum     []string
	items    *tpNode
	maxItems int // 0 for none
	props    []tpProp
	closed   bool // additionalProperties: false
	patternX bool // patternProperties {"^x_": integer}
	ref      string
}

type tpProp struct {
	name     string
	node     *tpNode
	required bool
}

// tpSchema is a generated tool schema: an object root, definitions.
type tpSchema struct {
	root    *tpNode
	defs    map[string]*tpNode
	draft07 bool
}

var tpPropNames = []string{"a", "b", "count", "name", "tags", "x y", "é", "nested", "flag", "n1", "_meta"}

func tpGenNode(c fuzz.Continue, s *tpSchema, depth int) *tpNode {
	k := c.Intn(9)
	if depth <= 0 && (k == 4 || k == 5) {
		k = c.Intn(4)
	}
	switch k {
	case 0:
		n := &tpNode{kind: "string", lo: c.Intn(3)}
		n.hi = n.lo + c.Intn(6)
		n.pattern = c.Intn(3) == 0
		if c.Intn(5) == 0 {
			n.enum = []string{"red", "green", "blue"}[:1+c.Intn(3)]
		}
		return n
	case 1:
		lo := c.Intn(200) - 100
		return &tpNode{kind: "integer", lo: lo, hi: lo + c.Intn(1000)}
	case 2:
		return &tpNode{kind: "number"}
	case 3:
		return &tpNode{kind: "boolean"}
	case 4:
		n := &tpNode{kind: "array", items: tpGenNode(c, s, depth-1)}
		if c.RandBool() {
			n.maxItems = 1 + c.Intn(4)
		}
		return n
	case 5:
		return tpGenObject(c, s, depth-1)
	case 6:
		return &tpNode{kind: "anyOf"}
	case 7:
		name := "d" + strconv.Itoa(len(s.defs))
		if depth > 0 && len(s.defs) < 3 {
			s.defs[name] = nil // reserve the name: the definition may hold more
			s.defs[name] = tpGenNode(c, s, depth-1)
			return &tpNode{kind: "ref", ref: name}
		}
	}
	return &tpNode{kind: "string", hi: 8}
}

func tpGenObject(c fuzz.Continue, s *tpSchema, depth int) *tpNode {
	n := &tpNode{kind: "object", closed: c.Intn(3) == 0, patternX: c.Intn(4) == 0}
	names := slices.Clone(tpPropNames)
	c.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for _, name := range names[:1+c.Intn(5)] {
		n.props = append(n.props, tpProp{name: name, node: tpGenNode(c, s, depth), required: c.RandBool()})
	}
	return n
}

// json writes the node's schema.
func (n *tpNode) json(s *tpSchema) string {
	switch n.kind {
	case "string":
		parts := []string{`"type":"string"`, `"minLength":` + strconv.Itoa(n.lo), `"maxLength":` + strconv.Itoa(n.hi)}
		if n.pattern {
			parts = append(parts, `"pattern":"^[a-z]*$"`)
		}
		if n.enum != nil {
			e, _ := json.Marshal(n.enum)
			parts = []string{`"type":"string"`, `"enum":` + string(e)}
		}
		return "{" + strings.Join(parts, ",") + "}"
	case "integer":
		return `{"type":"integer","minimum":` + strconv.Itoa(n.lo) + `,"maximum":` + strconv.Itoa(n.hi) + `}`
	case "number", "boolean":
		return `{"type":"` + n.kind + `"}`
	case "array":
		out := `{"type":"array","items":` + n.items.json(s)
		if n.maxItems > 0 {
			out += `,"maxItems":` + strconv.Itoa(n.maxItems)
		}
		return out + "}"
	case "anyOf":
		return `{"anyOf":[{"type":"string"},{"type":"integer"}]}`
	case "ref":
		if s.draft07 {
			return `{"$ref":"#/definitions/` + n.ref + `"}`
		}
		return `{"$ref":"#/$defs/` + n.ref + `"}`
	}
	var props, req []string
	for _, p := range n.props {
		props = append(props, quoteString(p.name)+":"+p.node.json(s))
		if p.required {
			req = append(req, quoteString(p.name))
		}
	}
	out := `{"type":"object","properties":{` + strings.Join(props, ",") + `}`
	if len(req) > 0 {
		out += `,"required":[` + strings.Join(req, ",") + `]`
	}
	if n.closed {
		out += `,"additionalProperties":false`
	}
	if n.patternX {
		out += `,"patternProperties":{"^x_":{"type":"integer"}}`
	}
	return out + "}"
}

// schema writes the whole tool schema.
func (s *tpSchema) schema() string {
	root := s.root.json(s)
	var extra []string
	if s.draft07 {
		extra = append(extra, `"$schema":"http://json-schema.org/draft-07/schema#"`)
	}
	if len(s.defs) > 0 {
		var defs []string
		for _, name := range slices.Sorted(maps.Keys(s.defs)) {
			defs = append(defs, quoteString(name)+":"+s.defs[name].json(s))
		}
		key := `"$defs"`
		if s.draft07 {
			key = `"definitions"`
		}
		extra = append(extra, key+":{"+strings.Join(defs, ",")+"}")
	}
	if len(extra) == 0 {
		return root
	}
	return "{" + strings.Join(extra, ",") + "," + root[1:]
}

// valid returns an instance of n.
func (n *tpNode) valid(c fuzz.Continue, s *tpSchema) string {
	switch n.kind {
	case "string":
		if n.enum != nil {
			return quoteString(n.enum[c.Intn(len(n.enum))])
		}
		b := make([]byte, n.lo+c.Intn(n.hi-n.lo+1))
		for i := range b {
			b[i] = byte('a' + c.Intn(26))
		}
		return quoteString(string(b))
	case "integer":
		return strconv.Itoa(n.lo + c.Intn(n.hi-n.lo+1))
	case "number":
		return []string{"0", "-1.5", "3", "2.5e3", "1e-3"}[c.Intn(5)]
	case "boolean":
		return []string{"true", "false"}[c.Intn(2)]
	case "array":
		k := c.Intn(4)
		if n.maxItems > 0 {
			k = min(k, n.maxItems)
		}
		items := make([]string, k)
		for i := range items {
			items[i] = n.items.valid(c, s)
		}
		return "[" + strings.Join(items, ",") + "]"
	case "anyOf":
		if c.RandBool() {
			return `"either"`
		}
		return "42"
	case "ref":
		return s.defs[n.ref].valid(c, s)
	}
	var members []string
	for _, p := range n.props {
		if p.required || c.RandBool() {
			members = append(members, quoteString(p.name)+":"+p.node.valid(c, s))
		}
	}
	if !n.closed && c.Intn(3) == 0 {
		members = append(members, `"extra_k":[1,{"z":null}]`)
	}
	if n.patternX && c.Intn(3) == 0 {
		members = append(members, `"x_1":7`)
	}
	c.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	return "{" + strings.Join(members, ",") + "}"
}

// wrong returns a value of a JSON type n does not accept.
func (n *tpNode) wrong(s *tpSchema) string {
	if n.kind == "ref" {
		return s.defs[n.ref].wrong(s)
	}
	if n.kind == "boolean" {
		return `"nope"`
	}
	return "true"
}

// invalid returns an object that does not match the object node n, or ""
// when the generator knows no way to break it.
func (n *tpNode) invalid(c fuzz.Continue, s *tpSchema) string {
	var ways []func() string
	for i, p := range n.props {
		if !p.required {
			continue
		}
		ways = append(ways, func() string { // a required member of the wrong type
			return n.with(c, s, i, p.node.wrong(s), "")
		}, func() string { // a required member missing
			return n.with(c, s, i, "", "")
		})
		if p.node.kind == "integer" {
			ways = append(ways, func() string { return n.with(c, s, i, strconv.Itoa(p.node.hi+1), "") })
		}
	}
	if n.closed {
		ways = append(ways, func() string { return n.with(c, s, -1, "", `"not_declared":1`) })
	}
	if n.patternX {
		ways = append(ways, func() string { return n.with(c, s, -1, "", `"x_9":"not an integer"`) })
	}
	if len(ways) == 0 {
		return ""
	}
	return ways[c.Intn(len(ways))]()
}

// with returns a valid instance of n in which member i (if i >= 0) has the
// value v ("" drops it), plus the extra member, if any.
func (n *tpNode) with(c fuzz.Continue, s *tpSchema, i int, v, extra string) string {
	var members []string
	for j, p := range n.props {
		switch {
		case j == i && v != "":
			members = append(members, quoteString(p.name)+":"+v)
		case j == i:
		case p.required || c.RandBool():
			members = append(members, quoteString(p.name)+":"+p.node.valid(c, s))
		}
	}
	if extra != "" {
		members = append(members, extra)
	}
	return "{" + strings.Join(members, ",") + "}"
}

// emptyValid reports whether {} matches the object node n.
func (n *tpNode) emptyValid() bool {
	for _, p := range n.props {
		if p.required {
			return false
		}
	}
	return true
}

// tpCompileCall is one generated request and what it must get.
type tpCompileCall struct {
	method string // tools/call or tools/list
	params string
	want   string // "ok", a StructuredError code, or "-32602"
}

// tpCompileCase is a server's tools and the calls made to it.
type tpCompileCase struct {
	schemas []*tpSchema
	calls   []tpCompileCall
	bursts  []int // sizes of the pipelined bursts the calls are sent in
}

func tpCompileGen(cc *tpCompileCase, c fuzz.Continue) {
	*cc = tpCompileCase{}
	for range 6 + c.Intn(6) {
		s := &tpSchema{defs: map[string]*tpNode{}, draft07: c.Intn(4) == 0}
		s.root = tpGenObject(c, s, 2)
		cc.schemas = append(cc.schemas, s)
	}
	for len(cc.calls) < tpCompileCalls {
		ti := c.Intn(len(cc.schemas))
		s := cc.schemas[ti]
		name := "t" + strconv.Itoa(ti)
		call := tpCompileCall{method: MethodToolsCall, want: "ok"}
		switch c.Intn(10) {
		case 0, 1, 2: // valid
			call.params = tpParams(name, s.root.valid(c, s), "")
		case 3, 4: // invalid
			if bad := s.root.invalid(c, s); bad != "" {
				call.params, call.want = tpParams(name, bad, ""), string(core.CodeInvalidArgument)
			} else {
				call.params = tpParams(name, s.root.valid(c, s), "")
			}
		case 5: // {} or no arguments
			call.params = tpParams(name, []string{"{}", "", " { } "}[c.Intn(3)], "")
			if !s.root.emptyValid() {
				call.want = string(core.CodeInvalidArgument)
			}
		case 6: // unknown tool
			call.params, call.want = tpParams("nope"+name, s.root.valid(c, s), ""), string(core.CodeNotFound)
		case 7: // over the payload limit (of any tool, known or not)
			if c.RandBool() {
				name = "nope"
			}
			call.params = tpParams(name, `{"big":"`+strings.Repeat("é", tpCompileLimit/2+c.Intn(1000))+`"}`, "")
			call.want = string(core.CodeResourceExhausted)
		case 8: // big, under the limit
			big := `"` + strings.Repeat("z", tpCompileLimit-1500-c.Intn(2000)) + `"`
			if s.root.closed {
				call.params, call.want = tpParams(name, `{"huge_extra":`+big+`}`, ""), string(core.CodeInvalidArgument)
			} else {
				call.params = tpParams(name, s.root.with(c, s, -1, "", `"huge_extra":`+big), "")
			}
		default: // not an object, or tools/list
			if c.RandBool() {
				call = tpCompileCall{method: MethodToolsList, want: "ok"}
			} else {
				call.params, call.want = tpParams(name, tpNonObject(c), ""), "-32602"
			}
		}
		cc.calls = append(cc.calls, call)
	}
	for n := 0; n < len(cc.calls); {
		b := min(1+c.Intn(8), len(cc.calls)-n)
		cc.bursts = append(cc.bursts, b)
		n += b
	}
}

func TestPropertyNoCompileDuringCall(t *testing.T) {
	f := fuzz.NewWithSeed(tpCompileSeed).NilChance(0).Funcs(tpCompileGen)
	outcomes := map[string]int{}
	for i := range tpCompileServers {
		var cc tpCompileCase
		f.Fuzz(&cc)
		cfg := testConfig()
		cfg.Tools.MaxPayloadBytes = tpCompileLimit
		cfg.Resources.MaxConcurrentExecutions = 64
		p := newTPConn(t, cfg, Options{}, func(srv *Server) {
			for ti, s := range cc.schemas {
				tool := Tool{Name: "t" + strconv.Itoa(ti), InputSchema: json.RawMessage(s.schema()), Handler: tpNoop}
				if ti%3 == 0 {
					tool.OutputSchema = json.RawMessage(`{"type":"object","additionalProperties":false}`)
				}
				if err := srv.AddTool(tool); err != nil {
					t.Fatalf("server %d: registering %s: %v", i, tool.InputSchema, err)
				}
			}
		}, Version20251125)
		before := p.srv.schemas.compilations()
		if before < int64(len(cc.schemas)) {
			t.Fatalf("server %d: %d compilations for %d tools: the counter does not count", i, before, len(cc.schemas))
		}
		next := 0
		for _, b := range cc.bursts {
			pending := make([]tpPending, b)
			for k := range b {
				call := cc.calls[next+k]
				pending[k] = p.request(call.method, call.params)
			}
			for k := range b {
				call := cc.calls[next+k]
				resp := p.await(pending[k])
				if call.method == MethodToolsList {
					if resp["result"] == nil {
						t.Fatalf("server %d: tools/list: %s", i, tpString(resp))
					}
					continue
				}
				o := tpDecode(t, clip(call.params, 300), resp)
				got := "ok"
				switch {
				case o.rpcCode != 0:
					got = strconv.FormatInt(o.rpcCode, 10)
				case o.isError:
					got = o.code
				}
				if got != call.want {
					t.Fatalf("server %d: %s %s: got %s, want %s: %s", i, call.method, clip(call.params, 400), got, call.want,
						tpString(resp))
				}
				outcomes[got]++
			}
			next += b
			if n := p.srv.schemas.compilations(); n != before {
				t.Fatalf("server %d: %d schema compilations during calls (%d before, %d after)", i, n-before, before, n)
			}
		}
		p.finish()
		if n := p.srv.schemas.compilations(); n != before {
			t.Fatalf("server %d: %d schema compilations during calls", i, n-before)
		}
	}
	t.Logf("%d servers, outcomes %v", tpCompileServers, outcomes)
}

// ---------------------------------------------------------------------------
// 3. Handlers only ever see objects, exactly as sent, without _meta.

const (
	tpArgsSeed  = 7003
	tpArgsCalls = 2500
	tpArgsLimit = 2048
	tpMarker    = "MARKER-of-meta"
)

// tpArgsCall is one generated tools/call.
type tpArgsCall struct {
	params string // raw params text, "" for none
	want   string // "handler", "-32602", "-32600", NOT_FOUND, RESOURCE_EXHAUSTED
	args   string // what the handler must see
	cid    string // the client's correlation id, "" when it sent none readable
}

// tpMember is one member of a generated params object.
type tpMember struct{ key, value string }

func tpArgsGen(ac *tpArgsCall, c fuzz.Continue) {
	*ac = tpArgsCall{want: "handler"}
	switch c.Intn(25) {
	case 0: // no params: no name
		ac.want = "-32602"
		return
	case 1: // params neither object nor array: the envelope is invalid
		ac.params, ac.want = []string{"null", "1", `"rec"`, "true", "-0.5"}[c.Intn(5)], "-32600"
		return
	case 2: // params an array
		ac.params, ac.want = "["+tpWS(c)+`"rec"`+tpWS(c)+","+tpWS(c)+"{}"+tpWS(c)+"]", "-32602"
		return
	}
	var members []tpMember
	bad, missing, oversize := false, false, false
	name := ""
	switch r := c.Intn(20); {
	case r < 13:
		name = `"rec"`
	case r < 15:
		name = []string{`"r\u0065c"`, `"\u0072ec"`}[c.Intn(2)] // still rec
	case r < 17:
		name = quoteString([]string{"nope", "Rec", "rec ", "REC", "rec2"}[c.Intn(5)])
		ac.want = string(core.CodeNotFound)
	case r < 19:
		name, bad = tpNonObject(c), true
		if name[0] == '"' { // a string after all: an unknown tool
			bad, ac.want = false, string(core.CodeNotFound)
		}
	default:
		missing = true
	}
	if !missing {
		members = append(members, tpMember{"name", name})
	}
	switch r := c.Intn(20); {
	case r < 3: // absent: the handler sees {}
		ac.args = "{}"
	case r < 12:
		ac.args = tpJSONObject(c, 4)
		members = append(members, tpMember{"arguments", ac.args})
	case r < 13: // over the payload limit
		ac.args = `{"pad":` + tpWS(c) + `"` + strings.Repeat("ab", tpArgsLimit/2) + `"}`
		members = append(members, tpMember{"arguments", ac.args})
		oversize = true
	default: // every other JSON type
		members = append(members, tpMember{"arguments", tpNonObject(c)})
		bad = true
	}
	switch r := c.Intn(20); {
	case r < 6:
	case r < 16:
		ac.cid = "cid-" + strconv.Itoa(c.Intn(1<<30))
		members = append(members, tpMember{"_meta", "{" + tpWS(c) + `"correlationId":` + tpWS(c) + quoteString(ac.cid) +
			"," + tpWS(c) + `"marker":"` + tpMarker + `"` + tpWS(c) + "," + `"progressToken":` + tpJSON(c, 1) + "}"})
	case r < 18: // an object without a usable correlation id
		members = append(members, tpMember{"_meta", `{"marker":"` + tpMarker + `","correlationId":` +
			[]string{`""`, `7`, `null`, `{"a":1}`, quoteString(strings.Repeat("c", maxCorrelationBytes+1))}[c.Intn(5)] + "}"})
	default:
		members = append(members, tpMember{"_meta", tpNonObject(c)})
		bad = true
	}
	for range c.Intn(3) { // members tools/call ignores
		key := []string{"extra", "meta", "argument", "_metadata", "names"}[c.Intn(5)]
		members = append(members, tpMember{key, tpJSON(c, 2)})
	}
	c.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	// Later members with the same name (extra keys) are ignored by tools/call
	// anyway; keep the first of each.
	var b strings.Builder
	b.WriteString("{" + tpWS(c))
	seen := map[string]bool{}
	for _, m := range members {
		if seen[m.key] {
			continue
		}
		if len(seen) > 0 {
			b.WriteString(tpWS(c) + "," + tpWS(c))
		}
		seen[m.key] = true
		b.WriteString(quoteString(m.key) + tpWS(c) + ":" + tpWS(c) + m.value)
	}
	b.WriteString(tpWS(c) + "}")
	ac.params = b.String()
	switch {
	case bad || missing:
		ac.want = "-32602"
	case oversize:
		ac.want = string(core.CodeResourceExhausted)
	}
}

// tpSeen is what the recording handler saw of one call.
type tpSeen struct {
	args     string
	cid, run string
}

func TestPropertyArgumentsReachHandlerUnchanged(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []tpSeen
	)
	record := func(ctx context.Context, args json.RawMessage) (any, error) {
		mu.Lock()
		seen = append(seen, tpSeen{args: string(args), cid: CorrelationID(ctx), run: RunID(ctx)})
		mu.Unlock()
		return map[string]any{"ok": true}, nil
	}
	cfg := testConfig()
	cfg.Tools.MaxPayloadBytes = tpArgsLimit
	f := fuzz.NewWithSeed(tpArgsSeed).NilChance(0).Funcs(tpArgsGen)
	counts := map[string]int{}
	perVersion := tpArgsCalls / len(SupportedVersions)
	for _, version := range SupportedVersions {
		p := newTPConn(t, cfg, Options{}, func(srv *Server) {
			if err := srv.AddTool(Tool{Name: "rec", Handler: record}); err != nil {
				t.Fatal(err)
			}
		}, version)
		for range perVersion {
			var ac tpArgsCall
			f.Fuzz(&ac)
			mu.Lock()
			before := len(seen)
			mu.Unlock()
			resp := p.call(ac.params)
			what := version + " params " + clip(ac.params, 300)
			o := tpDecode(t, what, resp)
			mu.Lock()
			calls := seen[before:]
			mu.Unlock()
			got := "handler"
			switch {
			case o.rpcCode != 0:
				got = strconv.FormatInt(o.rpcCode, 10)
			case o.isError:
				got = o.code
			}
			if got != ac.want {
				t.Fatalf("%s: got %s, want %s: %s", what, got, ac.want, tpString(resp))
			}
			counts[got]++
			if got != "handler" {
				if len(calls) != 0 {
					t.Fatalf("%s: answered %s, yet the handler ran with %q", what, got, calls[0].args)
				}
				// Error data and tool errors carry the client's correlation
				// id when it sent one (SPEC §3.3); protocol errors without
				// one carry the connection's.
				wantCID := ac.cid
				if wantCID == "" && o.rpcCode != 0 {
					wantCID = p.sess.CorrelationID()
				}
				if gotCID := o.rpcCID + o.cid; wantCID != "" && gotCID != wantCID {
					t.Fatalf("%s: correlationId %q, want %q: %s", what, gotCID, wantCID, tpString(resp))
				}
				continue
			}
			if len(calls) != 1 {
				t.Fatalf("%s: the handler ran %d times", what, len(calls))
			}
			h := calls[0]
			if h.args != ac.args {
				t.Fatalf("%s: the handler saw %q, want the arguments exactly as sent, %q", what, h.args, ac.args)
			}
			var obj map[string]json.RawMessage
			if !isObject(json.RawMessage(h.args)) || json.Unmarshal([]byte(h.args), &obj) != nil {
				t.Fatalf("%s: the handler saw a non-object %q", what, h.args)
			}
			if strings.Contains(h.args, tpMarker) {
				t.Fatalf("%s: the handler saw params._meta: %q", what, h.args)
			}
			if h.run == "" || h.cid == "" || ac.cid != "" && h.cid != ac.cid {
				t.Fatalf("%s: the handler's runId %q, correlationId %q (client sent %q)", what, h.run, h.cid, ac.cid)
			}
		}
		p.finish()
	}
	t.Logf("%d calls by outcome: %v", perVersion*len(SupportedVersions), counts)
}

// ---------------------------------------------------------------------------
// 4. The concurrency limit holds.

const (
	tpConcSeed  = 7004
	tpConcCases = 100
)

// tpConcCall is one call of a burst.
type tpConcCall struct {
	tool         string // work (1 s timeout), work_to (3 ms timeout), work_x (exclusive, 4 ms) or obs
	ms           int
	ignoreCancel bool
}

// tpConcCase is one server's limit and the bursts sent to it.
type tpConcCase struct {
	max    int
	bursts [][]tpConcCall
}

func tpConcGen(cc *tpConcCase, c fuzz.Continue) {
	*cc = tpConcCase{max: 1 + c.Intn(5)}
	for range 1 + c.Intn(5) {
		burst := make([]tpConcCall, 1+c.Intn(12))
		for i := range burst {
			burst[i] = tpConcCall{tool: []string{"work", "work", "work_to", "work_x", "obs"}[c.Intn(5)],
				ms: c.Intn(8), ignoreCancel: c.Intn(3) == 0}
		}
		cc.bursts = append(cc.bursts, burst)
	}
}

func TestPropertyConcurrencyLimit(t *testing.T) {
	f := fuzz.NewWithSeed(tpConcSeed).NilChance(0).Funcs(tpConcGen)
	outcomes := map[string]int{}
	maxSeenAll := 0
	for i := range tpConcCases {
		var cc tpConcCase
		f.Fuzz(&cc)
		var (
			running atomic.Int64 // handlers of slot-taking tools running now
			maxSeen atomic.Int64
			xRun    atomic.Int64 // handlers of the exclusive tool running now
			over    atomic.Value // a violation seen inside a handler
		)
		work := func(ctx context.Context, args json.RawMessage) (any, error) {
			if bytes.Contains(args, []byte(`"exclusive":true`)) {
				if x := xRun.Add(1); x > 1 {
					over.Store("exclusive handlers running at once: " + strconv.FormatInt(x, 10))
				}
				defer xRun.Add(-1)
			}
			n := running.Add(1)
			defer running.Add(-1)
			for m := maxSeen.Load(); n > m && !maxSeen.CompareAndSwap(m, n); m = maxSeen.Load() {
			}
			if n > int64(cc.max) {
				over.Store("handlers running at once: " + strconv.FormatInt(n, 10))
			}
			var in struct {
				Ms           int  `json:"ms"`
				IgnoreCancel bool `json:"ignoreCancel"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			d := time.Duration(in.Ms) * time.Millisecond
			if in.IgnoreCancel {
				time.Sleep(d)
				return map[string]any{"slept": in.Ms}, nil
			}
			select {
			case <-time.After(d):
				return map[string]any{"slept": in.Ms}, nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		var srv *Server
		obs := func(context.Context, json.RawMessage) (any, error) {
			st := srv.Stats()
			if st.ConcurrentExecutions > cc.max {
				over.Store("slots in use: " + strconv.Itoa(st.ConcurrentExecutions))
			}
			return map[string]any{"inUse": st.ConcurrentExecutions}, nil
		}
		cfg := testConfig()
		cfg.Resources.MaxConcurrentExecutions = cc.max
		cfg.Tools.DefaultTimeoutMs = 1000
		p := newTPConn(t, cfg, Options{}, func(s *Server) {
			srv = s
			for _, tl := range []Tool{
				{Name: "work", Handler: work},
				{Name: "work_to", Timeout: 3 * time.Millisecond, Handler: work},
				{Name: "work_x", Exclusive: true, Timeout: 4 * time.Millisecond, Handler: work},
				{Name: "obs", Observer: true, Handler: obs},
			} {
				if err := s.AddTool(tl); err != nil {
					t.Fatal(err)
				}
			}
		}, Version20251125)
		for _, burst := range cc.bursts {
			pending := make([]tpPending, len(burst))
			for k, call := range burst {
				args := ""
				if call.tool != "obs" {
					args = `{"ms":` + strconv.Itoa(call.ms) + `,"ignoreCancel":` + strconv.FormatBool(call.ignoreCancel) +
						`,"exclusive":` + strconv.FormatBool(call.tool == "work_x") + `}`
				}
				pending[k] = p.request(MethodToolsCall, tpParams(call.tool, args, ""))
			}
			for k, call := range burst {
				o := tpDecode(t, pending[k].line, p.await(pending[k]))
				got := "success"
				switch {
				case o.rpcCode != 0:
					t.Fatalf("case %d: %s: JSON-RPC error %d", i, pending[k].line, o.rpcCode)
				case o.isError:
					got = o.code
				}
				outcomes[call.tool+" "+got]++
				switch {
				case call.tool == "obs" && got != "success":
					t.Fatalf("case %d: observer call answered %s: %s", i, got, o.text)
				case got != "success" && got != string(core.CodeTimeout) && got != string(core.CodeResourceExhausted):
					t.Fatalf("case %d: %s answered %s: %s", i, pending[k].line, got, o.text)
				}
			}
			if v := over.Load(); v != nil {
				t.Fatalf("case %d: max %d exceeded: %v", i, cc.max, v)
			}
		}
		p.finish() // every handler has returned
		if v := over.Load(); v != nil {
			t.Fatalf("case %d: max %d exceeded: %v", i, cc.max, v)
		}
		if n := p.srv.Stats().ConcurrentExecutions; n != 0 {
			t.Fatalf("case %d: %d slots still in use after every handler returned", i, n)
		}
		if running.Load() != 0 {
			t.Fatalf("case %d: handlers still running after the session's Wait", i)
		}
		maxSeenAll = max(maxSeenAll, int(maxSeen.Load()))
	}
	// The cases must have exercised the limit, not just stayed under it.
	if outcomes["work "+string(core.CodeResourceExhausted)] == 0 || outcomes["work_to "+string(core.CodeTimeout)] == 0 {
		t.Fatalf("the bursts never hit the limit or a timeout: %v", outcomes)
	}
	t.Logf("%d cases; most handlers at once %d; outcomes %v", tpConcCases, maxSeenAll, outcomes)
}

// ---------------------------------------------------------------------------
// 5. Exactly one final completion record per call.

const (
	tpRecSeed  = 7005
	tpRecCases = 300
	tpRecLimit = 1024
)

// tpRecCall is one call of a records case.
type tpRecCall struct {
	kind   string // ok, fail, boom, typed, typed_bad, nope, huge, slow, block, shape
	args   string
	cancel int // -1: not cancelled; else how many later calls are sent before the cancellation
}

// tpRecCase is one session's calls; with disconnect, blocking calls that
// are not cancelled are still running when the session closes.
type tpRecCase struct {
	calls      []tpRecCall
	disconnect bool
}

func tpRecGen(rc *tpRecCase, c fuzz.Continue) {
	*rc = tpRecCase{disconnect: c.Intn(3) == 0}
	kinds := []string{"ok", "ok", "fail", "boom", "typed", "typed_bad", "nope", "huge", "slow", "slow", "slow", "block", "shape"}
	for range 1 + c.Intn(20) {
		call := tpRecCall{kind: kinds[c.Intn(len(kinds))], cancel: -1}
		switch call.kind {
		case "typed":
			call.args = `{"n":` + strconv.Itoa(c.Intn(100)) + `}`
		case "typed_bad":
			call.args = []string{`{}`, `{"n":"x"}`, `{"n":1,"m":2}`}[c.Intn(3)]
		case "huge":
			call.args = `{"s":"` + strings.Repeat("h", tpRecLimit) + `"}`
		case "slow":
			call.args = `{"ms":` + strconv.Itoa(c.Intn(8)) + `,"ignoreCancel":` + strconv.FormatBool(c.RandBool()) + `}`
		case "shape":
			call.args = tpNonObject(c)
		default:
			if c.RandBool() {
				call.args = tpJSONObject(c, 2)
			}
		}
		if call.kind == "block" && !rc.disconnect || c.Intn(4) == 0 {
			call.cancel = c.Intn(3)
		}
		rc.calls = append(rc.calls, call)
	}
}

// tpRecFinals are the outcomes of final records.
var tpRecFinals = map[string]bool{OutcomeSuccess: true, OutcomeToolError: true, OutcomeLateCompleted: true,
	OutcomeAborted: true, OutcomeDisconnectedCompleted: true, OutcomeProtocolError: true}

func TestPropertyCompletionRecords(t *testing.T) {
	f := fuzz.NewWithSeed(tpRecSeed).NilChance(0).Funcs(tpRecGen)
	var started sync.Map // correlation ids of running block handlers
	slow := func(ctx context.Context, args json.RawMessage) (any, error) {
		var in struct {
			Ms           int  `json:"ms"`
			IgnoreCancel bool `json:"ignoreCancel"`
		}
		_ = json.Unmarshal(args, &in)
		if in.IgnoreCancel {
			time.Sleep(time.Duration(in.Ms) * time.Millisecond)
			return map[string]any{"slept": in.Ms}, nil
		}
		select {
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			return map[string]any{"slept": in.Ms}, nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	setup := func(s *Server) {
		for _, tl := range []Tool{
			{Name: "ok", Handler: tpNoop},
			{Name: "fail", Handler: func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("no luck") }},
			{Name: "boom", Handler: func(context.Context, json.RawMessage) (any, error) { panic("boom") }},
			{Name: "typed", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`),
				Handler: tpNoop},
			{Name: "slow", Timeout: 3 * time.Millisecond, Handler: slow},
			{Name: "block", Handler: func(ctx context.Context, _ json.RawMessage) (any, error) {
				started.Store(CorrelationID(ctx), true)
				select {
				case <-ctx.Done():
					return nil, context.Cause(ctx)
				case <-time.After(5 * time.Second): // never reached by a passing test
					return nil, errors.New("block was neither cancelled nor disconnected")
				}
			}},
		} {
			if err := s.AddTool(tl); err != nil {
				t.Fatal(err)
			}
		}
	}
	outcomes := map[string]int{}
	total := 0
	for i := range tpRecCases {
		var rc tpRecCase
		f.Fuzz(&rc)
		cfg := testConfig()
		cfg.Tools.MaxPayloadBytes = tpRecLimit
		cfg.Resources.MaxConcurrentExecutions = 64
		p := newTPConn(t, cfg, Options{}, setup, Version20251125)
		cid := func(k int) string { return "c" + strconv.Itoa(i) + "-" + strconv.Itoa(k) }
		pending := make([]tpPending, len(rc.calls))
		cancelAt := map[int][]int{} // after sending call k, cancel these
		for k, call := range rc.calls {
			name := call.kind
			switch call.kind {
			case "typed_bad":
				name = "typed"
			case "huge", "shape":
				name = "ok"
			}
			pending[k] = p.request(MethodToolsCall, tpParams(name, call.args, cid(k)))
			if call.cancel >= 0 {
				at := min(k+call.cancel, len(rc.calls)-1)
				cancelAt[at] = append(cancelAt[at], k)
			}
			for _, j := range cancelAt[k] {
				p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + pending[j].id +
					`,"reason":"property test"}}`)
			}
		}
		responses := make([]map[string]json.RawMessage, len(rc.calls))
		for k, call := range rc.calls {
			if call.cancel < 0 && call.kind != "block" {
				responses[k] = p.await(pending[k])
			}
		}
		if rc.disconnect {
			for k, call := range rc.calls {
				if call.kind == "block" && call.cancel < 0 {
					waitFor(t, func() bool { _, ok := started.Load(cid(k)); return ok })
				}
			}
		}
		p.finish() // closes the session; every handler has returned and written its record
		for k := range rc.calls {
			select {
			case line := <-pending[k].ch: // a cancelled call that was answered anyway
				_ = json.Unmarshal(line, &responses[k])
			default:
			}
		}
		// Group the records by correlation id, in log order.
		byCID := map[string][]map[string]any{}
		for _, r := range p.logs.records() {
			c, _ := r["correlationId"].(string)
			byCID[c] = append(byCID[c], r)
		}
		for k, call := range rc.calls {
			total++
			what := "case " + strconv.Itoa(i) + " call " + strconv.Itoa(k) + " (" + call.kind + " " + clip(call.args, 80) +
				", cancel " + strconv.Itoa(call.cancel) + ", disconnect " + strconv.FormatBool(rc.disconnect) + ")"
			recs := byCID[cid(k)]
			var final map[string]any
			finalAt, timeoutAt, timeouts := -1, -1, 0
			for n, r := range recs {
				switch outcome, _ := r["outcome"].(string); {
				case outcome == OutcomeTimeout:
					timeouts, timeoutAt = timeouts+1, n
				case tpRecFinals[outcome]:
					if final != nil {
						t.Fatalf("%s: two final records: %v and %v", what, final, r)
					}
					final, finalAt = r, n
				default:
					t.Fatalf("%s: record with outcome %q: %v", what, outcome, r)
				}
				if _, has := r["arguments"]; has {
					t.Fatalf("%s: the record holds the arguments: %v", what, r)
				}
			}
			if final == nil {
				t.Fatalf("%s: no final completion record; records %v", what, recs)
			}
			outcome, _ := final["outcome"].(string)
			code, _ := final["errorCode"].(string)
			outcomes[outcome]++
			if timeouts > 1 || (timeouts == 1) != (outcome == OutcomeLateCompleted) || timeoutAt > finalAt {
				t.Fatalf("%s: records %v: a timeout record must come once, before late_completed, and only then", what, recs)
			}
			runID, _ := recs[0]["runId"].(string)
			for _, r := range recs {
				if r["runId"] != recs[0]["runId"] {
					t.Fatalf("%s: records of one call with different runIds: %v", what, recs)
				}
			}
			if (runID == "") != (outcome == OutcomeProtocolError) {
				t.Fatalf("%s: runId %q with outcome %s", what, runID, outcome)
			}
			if outcome != OutcomeProtocolError {
				want := core.CompactLen([]byte(call.args))
				if call.args == "" {
					want = 2
				}
				if pb, _ := final["payloadBytes"].(float64); int(pb) != want {
					t.Fatalf("%s: payloadBytes %v, want %d", what, final["payloadBytes"], want)
				}
			}
			// The outcomes each kind may end with.
			allowed := map[string]string{ // outcome -> errorCode
				"ok":        OutcomeSuccess,
				"typed":     OutcomeSuccess,
				"fail":      OutcomeToolError + " " + string(core.CodeInternal),
				"boom":      OutcomeToolError + " " + string(core.CodeInternal),
				"typed_bad": OutcomeToolError + " " + string(core.CodeInvalidArgument),
				"nope":      OutcomeToolError + " " + string(core.CodeNotFound),
				"huge":      OutcomeToolError + " " + string(core.CodeResourceExhausted),
				"shape":     OutcomeProtocolError,
				"slow":      OutcomeSuccess + "|" + OutcomeLateCompleted,
				"block":     OutcomeDisconnectedCompleted,
			}[call.kind]
			if call.kind == "block" && call.cancel >= 0 {
				allowed = OutcomeAborted
			} else if call.cancel >= 0 && !strings.HasPrefix(allowed, OutcomeToolError+" "+string(core.CodeNotFound)) &&
				!strings.HasPrefix(allowed, OutcomeToolError+" "+string(core.CodeResourceExhausted)) &&
				allowed != OutcomeProtocolError && call.kind != "typed_bad" {
				allowed += "|" + OutcomeAborted // cancelled while running
			}
			got := strings.TrimSpace(outcome + " " + code)
			if outcome == OutcomeLateCompleted || outcome == OutcomeAborted || outcome == OutcomeDisconnectedCompleted {
				got = outcome // the code is the handler's, if any
			}
			if !slices.Contains(strings.Split(allowed, "|"), got) {
				t.Fatalf("%s: final record %q, want one of %q; records %v", what, got, allowed, recs)
			}
			// The response, if any, agrees with the records.
			resp := responses[k]
			switch {
			case resp == nil && call.cancel < 0 && call.kind != "block":
				t.Fatalf("%s: no response", what)
			case resp != nil && (call.kind == "block" || outcome == OutcomeAborted || outcome == OutcomeDisconnectedCompleted):
				t.Fatalf("%s: a cancelled or disconnected call (%s) was answered: %s", what, outcome, tpString(resp))
			case resp == nil:
			case outcome == OutcomeProtocolError:
				if o := tpDecode(t, what, resp); o.rpcCode != -32602 {
					t.Fatalf("%s: protocol_error record for response %s", what, tpString(resp))
				}
			default:
				o := tpDecode(t, what, resp)
				wantResp := map[string]string{OutcomeSuccess: "", OutcomeToolError: code,
					OutcomeLateCompleted: string(core.CodeTimeout)}[outcome]
				if o.rpcCode != 0 || o.code != wantResp || o.isError && o.run != runID {
					t.Fatalf("%s: response %s disagrees with the final record %v", what, tpString(resp), final)
				}
			}
		}
	}
	t.Logf("%d cases, %d calls; final outcomes %v", tpRecCases, total, outcomes)
}
