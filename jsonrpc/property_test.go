package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	fuzz "github.com/google/gofuzz"
)

// This file checks properties of a Conn over random traffic generated with
// gofuzz from a fixed seed: every request gets exactly one response (matched
// by id text), notifications and responses get none, every error carries
// data.correlationId (the request's params._meta.correlationId when it has
// one, the connection's otherwise, and always the connection's for -32002),
// and every output line is compact JSON. The expected answers come from a
// model of SPEC §3-4 run over the generated envelopes, not over their bytes.

const (
	propSeed       = 20260101
	propConns      = 40
	propLines      = 120 // per connection; a batch line holds up to 4 messages
	propMaxMessage = 1024
)

// propMember is one member of a generated envelope.
type propMember struct {
	key   string // as written
	name  string // the envelope member it is ("" for others); case variants included
	raw   string // the value's JSON text
	valid bool   // the value has the type the member requires
	cid   string // for params: the client correlation id it carries ("" for none)
}

// propEnvelope is a generated top-level message object.
type propEnvelope struct {
	members []propMember
	variant bool // holds a key equal to a member name only when case is ignored
}

// propLine is one generated input line.
type propLine struct {
	kind  string // "object", "batch", "raw", "long", "blank"
	env   propEnvelope
	elems []propElement // batch
	raw   string        // raw, long, blank
	code  int64         // raw: -32700 or -32600 expected
}

// propElement is a batch element: an envelope, or a non-object value.
type propElement struct {
	env    *propEnvelope
	scalar string
}

var (
	propMethods = []string{"hello", "echo", "slow", "work", "fail", "boom", "ready", "note", "nope", "", "Echo", "rpc.x"}
	propValidID = []string{"0", "1", "2", "7", "42", "-1", "9007199254740993", "1.0", "-0", "1e3", "0.5", "1E+2",
		`"x"`, `"\u0078"`, `""`, "null"}
	propBadID = []string{"true", "false", "{}", "[]", "[1]", `{"a":1}`}
)

// propGen generates envelopes and lines from gofuzz's random source.
type propGen struct{ c fuzz.Continue }

// str is a random string as JSON.
func (g propGen) str() string {
	b, _ := json.Marshal(g.c.RandString())
	return string(b)
}

// member generates one member, valid most of the time.
func (g propGen) member(name string) propMember {
	c, str := g.c, g.str
	m := propMember{key: name, name: name, valid: true}
	switch name {
	case "jsonrpc":
		m.raw = `"2.0"`
		if c.Intn(20) == 0 {
			m.raw, m.valid = []string{`"1.0"`, `2.0`, `null`, `"2.0 "`}[c.Intn(4)], false
		} else if c.Intn(10) == 0 {
			m.raw = `"2\u002e0"`
		}
	case "id":
		if c.Intn(12) == 0 {
			m.raw, m.valid = propBadID[c.Intn(len(propBadID))], false
		} else if c.Intn(4) == 0 {
			m.raw = str()
		} else {
			m.raw = propValidID[c.Intn(len(propValidID))]
		}
	case "method":
		switch c.Intn(12) {
		case 0:
			m.raw, m.valid = []string{`1`, `null`, `{}`, `["echo"]`}[c.Intn(4)], false
		case 1:
			m.raw = str()
		default:
			b, _ := json.Marshal(propMethods[c.Intn(len(propMethods))])
			m.raw = string(b)
			if m.raw == `"echo"` && c.Intn(3) == 0 {
				m.raw = `"\u0065cho"`
			}
		}
	case "params":
		switch c.Intn(14) {
		case 0:
			m.raw, m.valid = []string{`"x"`, `1`, `null`, `true`}[c.Intn(4)], false
		case 1:
			m.raw = `[1,"a",{}]`
		case 2:
			m.raw = `{}`
		case 3:
			m.raw = `{"_meta":{"correlationId":""}}`
		case 4:
			m.raw = []string{`{"_meta":{"correlationId":5}}`, `{"_meta":"x"}`, `{"_META":{"correlationId":"c"}}`}[c.Intn(3)]
		default:
			m.cid = c.RandString()
			if m.cid == "" {
				m.cid = "cid"
			}
			b, _ := json.Marshal(m.cid)
			m.raw = `{"a":` + str() + `,"_meta":{"progressToken":1,"correlationId":` + string(b) + `}}`
		}
	case "result":
		m.raw = []string{`{}`, `null`, `[1]`, `"r"`, `0`}[c.Intn(5)]
	case "error":
		m.raw = `{"code":-32000,"message":"m"}`
		if c.Intn(4) == 0 {
			m.raw, m.valid = []string{`"e"`, `{"code":"1","message":"m"}`, `{"code":1.5,"message":"m"}`, `{"message":"m"}`}[c.Intn(4)], false
		}
	}
	return m
}

// envelope generates a message object.
func (g propGen) envelope(e *propEnvelope) {
	c, str, member := g.c, g.str, g.member
	*e = propEnvelope{}
	// Mostly well-formed requests and notifications, then responses,
	// then random subsets of the members.
	var names []string
	switch r := c.Intn(20); {
	case r < 10:
		names = []string{"jsonrpc", "id", "method", "params"}
	case r < 14:
		names = []string{"jsonrpc", "method", "params"}
	case r < 16:
		names = []string{"jsonrpc", "id", []string{"result", "error"}[c.Intn(2)]}
	default:
		for _, n := range []string{"jsonrpc", "id", "method", "params", "result", "error"} {
			if c.RandBool() {
				names = append(names, n)
			}
		}
	}
	if len(names) > 0 && names[len(names)-1] == "params" && c.Intn(3) == 0 {
		names = names[:len(names)-1]
	}
	for _, n := range names {
		e.members = append(e.members, member(n))
	}
	if c.Intn(15) == 0 && len(names) > 0 { // a duplicate
		e.members = append(e.members, member(names[c.Intn(len(names))]))
	}
	if c.Intn(15) == 0 { // a case variant
		n := []string{"Method", "ID", "JSONRPC", "Params", "Result", "errOr"}[c.Intn(6)]
		e.members = append(e.members, propMember{key: n, raw: "1", valid: true})
		e.variant = true
	}
	if c.Intn(8) == 0 { // an unknown member, sometimes twice
		e.members = append(e.members, propMember{key: "x", raw: str(), valid: true})
		if c.RandBool() {
			e.members = append(e.members, propMember{key: "x", raw: "2", valid: true})
		}
	}
	c.Shuffle(len(e.members), func(i, j int) { e.members[i], e.members[j] = e.members[j], e.members[i] })
}

// line generates an input line.
func (g propGen) line(l *propLine) {
	c, envelope := g.c, g.envelope
	*l = propLine{}
	switch r := c.Intn(40); {
	case r < 30:
		l.kind = "object"
		envelope(&l.env)
	case r < 35:
		l.kind = "batch"
		for range c.Intn(5) {
			if c.Intn(8) == 0 {
				l.elems = append(l.elems, propElement{scalar: []string{"1", `"x"`, "null", "[]"}[c.Intn(4)]})
				continue
			}
			var e propEnvelope
			envelope(&e)
			l.elems = append(l.elems, propElement{env: &e})
		}
	case r < 36:
		l.kind, l.code = "raw", CodeParseError
		l.raw = []string{`{"jsonrpc":"2.0","id":1,"meth`, "\xff\xfe", `{"jsonrpc":"2.0","method":"echo"} {}`, "\x00",
			`{"jsonrpc":"2.0","id":1,"method":"echo","params":` + strings.Repeat("[", 400) + strings.Repeat("]", 399) + "}"}[c.Intn(5)]
	case r < 37:
		l.kind, l.code = "raw", CodeInvalidRequest
		l.raw = []string{`42`, `"x"`, `null`, `true`, ` 1e700 `}[c.Intn(5)]
	case r < 38:
		l.kind = "long"
		l.raw = `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"pad":"` + strings.Repeat("p", propMaxMessage) + `"}}`
	default:
		l.kind = "blank"
		l.raw = []string{"", " ", "\t \t", "\r"}[c.Intn(4)]
	}
}

// bytes renders the envelope.
func (e *propEnvelope) bytes() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range e.members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(m.key))
		b.WriteByte(':')
		b.WriteString(m.raw)
	}
	b.WriteByte('}')
	return b.String()
}

func (l *propLine) bytes() string {
	switch l.kind {
	case "object":
		return l.env.bytes()
	case "batch":
		parts := make([]string, len(l.elems))
		for i, e := range l.elems {
			if e.env != nil {
				parts[i] = e.env.bytes()
			} else {
				parts[i] = e.scalar
			}
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return l.raw
}

// propExpect is one response the model expects.
type propExpect struct {
	id      string          // id text; "null" when none can be echoed
	code    int64           // 0 for a result
	cids    map[string]bool // allowed data.correlationId of an error
	inBatch bool
}

// propModel is the connection as SPEC §3-4 describe it.
type propModel struct {
	connCID  string
	state    State
	batching bool
	used     map[string]bool // ids of requests dispatched so far
	async    map[string]bool // ids of requests dispatched to their own goroutine
	fresh    int
}

var propAsync = map[string]bool{"slow": true, "work": true, "boom": true}

func (m *propModel) cidSet(cids ...string) map[string]bool {
	set := map[string]bool{}
	for _, c := range cids {
		if c == "" {
			c = m.connCID
		}
		set[c] = true
	}
	return set
}

// envelope classifies e (rewriting its id when it would collide with a
// request still in flight) and returns the responses it calls for.
func (m *propModel) envelope(e *propEnvelope, inBatch bool) []propExpect {
	count := map[string]int{}
	first := map[string]*propMember{}
	var paramsCIDs []string
	for i := range e.members {
		mem := &e.members[i]
		if mem.name == "" {
			continue
		}
		count[mem.name]++
		if first[mem.name] == nil {
			first[mem.name] = mem
		}
		if mem.name == "params" {
			paramsCIDs = append(paramsCIDs, mem.cid)
		}
	}
	if len(paramsCIDs) == 0 {
		paramsCIDs = []string{""}
	}
	echo := "null"
	if count["id"] == 1 && first["id"].valid {
		echo = first["id"].raw
	}
	invalid := []propExpect{{id: echo, code: CodeInvalidRequest, cids: m.cidSet(paramsCIDs...), inBatch: inBatch}}
	dup := false
	for _, n := range count {
		dup = dup || n > 1
	}
	bad := func(name string) bool { return count[name] == 1 && !first[name].valid }
	if dup || e.variant || count["jsonrpc"] == 0 || bad("jsonrpc") || bad("id") || bad("params") {
		return invalid
	}
	if count["method"] == 1 {
		if bad("method") || count["result"]+count["error"] > 0 {
			return invalid
		}
		var method string
		if err := json.Unmarshal([]byte(first["method"].raw), &method); err != nil {
			panic(err)
		}
		if count["id"] == 0 {
			if method == "ready" && m.state == StateInitializing {
				m.state = StateRunning
			}
			return nil
		}
		return m.request(first["id"], method, paramsCIDs[0], inBatch)
	}
	if count["result"]+count["error"] != 1 || count["id"] == 0 || count["params"] > 0 {
		return invalid
	}
	if bad("error") {
		return []propExpect{{id: echo, code: CodeInvalidRequest, cids: m.cidSet(""), inBatch: inBatch}}
	}
	return nil // a response to nothing the server sent: dropped
}

// request is the router's decision for a valid request.
func (m *propModel) request(id *propMember, method, clientCID string, inBatch bool) []propExpect {
	st := m.state
	dispatched := false
	var code int64
	cid := clientCID
	switch {
	case method == "echo" || method == "slow":
		dispatched = true
	case method == "fail":
		dispatched, code = true, CodeInvalidParams
	case method == "hello" && st == StateStarting:
		dispatched = true
		m.state = StateInitializing
	case method == "hello":
		code = CodeInvalidRequest
	case st != StateRunning:
		code, cid = CodeNotInitialized, ""
	case method == "work":
		dispatched = true
	case method == "boom":
		dispatched, code = true, CodeInternalError
	default:
		code = CodeMethodNotFound
	}
	// Keep the model deterministic: a request never reuses the id of one
	// that may still be in flight (that would be -32600 or not depending on
	// timing).
	if (dispatched && propAsync[method] && m.used[id.raw]) || m.async[id.raw] {
		m.fresh++
		id.raw = `"fresh-` + strconv.Itoa(m.fresh) + `"`
	}
	if dispatched {
		m.used[id.raw] = true
		if propAsync[method] {
			m.async[id.raw] = true
		}
	}
	return []propExpect{{id: id.raw, code: code, cids: m.cidSet(cid), inBatch: inBatch}}
}

// line returns the responses a line calls for.
func (m *propModel) line(l *propLine) []propExpect {
	conn := m.cidSet("")
	switch l.kind {
	case "object":
		return m.envelope(&l.env, false)
	case "batch":
		if !m.batching || len(l.elems) == 0 {
			return []propExpect{{id: "null", code: CodeInvalidRequest, cids: conn}}
		}
		var out []propExpect
		for _, e := range l.elems {
			if e.env == nil {
				out = append(out, propExpect{id: "null", code: CodeInvalidRequest, cids: conn, inBatch: true})
				continue
			}
			out = append(out, m.envelope(e.env, true)...)
		}
		return out
	case "raw":
		return []propExpect{{id: "null", code: l.code, cids: conn}}
	case "long":
		return []propExpect{{id: "null", code: CodeInvalidRequest, cids: conn}}
	}
	return nil
}

// propGot is one response object read from the output.
type propGot struct {
	id      string
	code    int64
	cid     string
	inBatch bool
	line    string
	problem string // a broken wire rule
}

// propRouter has methods of every phase, inline and not.
func propRouter() *Router {
	r := NewRouter(RouterConfig{Initialized: "ready"})
	h := func(f func(ctx context.Context, req *Request) (any, error)) Handler { return HandlerFunc(f) }
	result := func(v any) func(context.Context, *Request) (any, error) {
		return func(context.Context, *Request) (any, error) { return v, nil }
	}
	r.Handle("hello", Method{Phase: PhaseHandshake, Inline: true, Handler: h(result(map[string]bool{"hello": true}))})
	r.Handle("echo", Method{Phase: PhaseAlways, Inline: true, Handler: h(
		func(_ context.Context, req *Request) (any, error) { return req.Params, nil })})
	r.Handle("slow", Method{Phase: PhaseAlways, Handler: h(func(ctx context.Context, _ *Request) (any, error) {
		d := time.Duration(rand.N(2000)) * time.Microsecond
		select {
		case <-time.After(d):
			return "slow", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})})
	r.Handle("work", Method{Handler: h(result("done"))})
	r.Handle("fail", Method{Phase: PhaseAlways, Inline: true, Handler: h(
		func(context.Context, *Request) (any, error) {
			return nil, NewError(CodeInvalidParams, "Invalid params: no")
		})})
	r.Handle("boom", Method{Handler: h(func(context.Context, *Request) (any, error) { panic("boom") })})
	r.HandleNotification("note", Notify{Handler: NotificationFunc(func(context.Context, *Notification) {})})
	return r
}

// propClientCID reads params._meta.correlationId with exact member names.
func propClientCID(params json.RawMessage) string {
	var p map[string]json.RawMessage
	var meta map[string]json.RawMessage
	var cid string
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p["_meta"], &meta) != nil ||
		json.Unmarshal(meta["correlationId"], &cid) != nil {
		return ""
	}
	return cid
}

// TestPropertyConnResponses runs propConns connections over generated
// traffic and checks every response against the model.
func TestPropertyConnResponses(t *testing.T) {
	f := fuzz.NewWithSeed(propSeed).NilChance(0).Funcs(func(l *propLine, c fuzz.Continue) { propGen{c}.line(l) })
	messages, responses := 0, 0
	codes := map[int64]int{} // what the model expected, to show the coverage
	states := map[State]int{}
	for k := range propConns {
		lines := make([]propLine, propLines)
		for i := range lines {
			f.Fuzz(&lines[i])
			messages++
			messages += max(0, len(lines[i].elems)-1)
		}
		responses += propRunConn(t, k, k%2 == 0, lines, codes, states)
		if t.Failed() {
			return
		}
	}
	t.Logf("%d connections, %d messages, %d responses checked; responses by code %v; final states %v",
		propConns, messages, responses, codes, states)
}

// propRunConn serves lines on one connection and checks its output against
// the model; it returns the number of responses.
func propRunConn(t *testing.T, k int, batching bool, lines []propLine, codes map[int64]int, states map[State]int) int {
	t.Helper()
	m := &propModel{connCID: fmt.Sprintf("conn-%d", k), batching: batching, used: map[string]bool{}, async: map[string]bool{}}
	var input strings.Builder
	var want []propExpect
	for i := range lines {
		if l := &lines[i]; l.kind != "long" && len(l.bytes()) > propMaxMessage-64 {
			// Over the limit, whatever it holds (64 bytes spare for ids the
			// model rewrites).
			*l = propLine{kind: "long", raw: strings.Repeat(" ", propMaxMessage) + l.bytes()}
		}
		want = append(want, m.line(&lines[i])...) // may rewrite an id: render after
		input.WriteString(lines[i].bytes())
		if i%7 == 3 && !strings.HasSuffix(lines[i].raw, "\r") { // "\r\r\n" would be the line "\r", not blank
			input.WriteByte('\r')
		}
		input.WriteByte('\n')
	}
	input.WriteString(`{"jsonrpc":"2.0","id":"sentinel","method":"echo"}` + "\n")
	want = append(want, propExpect{id: `"sentinel"`})
	for _, w := range want {
		codes[w.code]++
	}
	states[m.state]++

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := NewConn(inR, outW, propRouter(), Options{MaxMessageBytes: propMaxMessage, CorrelationID: m.connCID,
		RequestCorrelationID: propClientCID})
	c.SetBatching(batching)
	defer func() { c.Close(); inW.Close(); outW.Close() }() // also on Fatal
	served := make(chan error, 1)
	go func() { served <- c.Serve(context.Background()) }()
	go func() { _, _ = io.WriteString(inW, input.String()) }()
	gotc := make(chan propGot, 64)
	go func() {
		defer close(gotc)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			for _, g := range propParseLine(sc.Text()) {
				gotc <- g
			}
		}
	}()

	var got []propGot
	timeout := time.After(20 * time.Second)
	for len(got) < len(want) {
		select {
		case g, ok := <-gotc:
			if !ok {
				t.Fatalf("conn %d: output ended after %d of %d responses", k, len(got), len(want))
			}
			got = append(got, g)
		case <-timeout:
			t.Fatalf("conn %d: %d of %d responses after 20s", k, len(got), len(want))
		}
	}
	if st := c.State(); st != m.state {
		t.Errorf("conn %d: state %v; the model says %v", k, st, m.state)
	}
	inW.Close()
	if err := <-served; err != nil {
		t.Errorf("conn %d: Serve: %v", k, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Wait(ctx); err != nil {
		t.Errorf("conn %d: Wait: %v", k, err)
	}
	outW.Close()
	for g := range gotc {
		got = append(got, g) // an extra response
	}
	propMatch(t, k, want, got)
	return len(got)
}

// propParseLine checks one output line and returns its response objects;
// a line or object that breaks the wire rules comes back as a propGot with
// a problem.
func propParseLine(line string) []propGot {
	bad := func(format string, args ...any) []propGot {
		return []propGot{{problem: fmt.Sprintf(format, args...), line: line}}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(line)); err != nil || buf.String() != line {
		return bad("output line is not compact JSON (%v)", err)
	}
	objs := []json.RawMessage{json.RawMessage(line)}
	inBatch := line[0] == '['
	if inBatch && (json.Unmarshal([]byte(line), &objs) != nil || len(objs) == 0) {
		return bad("output batch is not a non-empty array")
	}
	var out []propGot
	for _, o := range objs {
		var m map[string]json.RawMessage
		if o[0] != '{' || json.Unmarshal(o, &m) != nil {
			return bad("response %s is not an object", o)
		}
		_, hasResult := m["result"]
		errRaw, hasError := m["error"]
		if string(m["jsonrpc"]) != `"2.0"` || m["id"] == nil || hasResult == hasError || len(m) != 3 {
			return bad("response %s is not {jsonrpc, id, result|error}", o)
		}
		g := propGot{id: string(m["id"]), inBatch: inBatch, line: line}
		if hasError {
			var e map[string]json.RawMessage
			var data map[string]json.RawMessage
			var msg string
			code, err := int64(0), json.Unmarshal(errRaw, &e)
			if err == nil {
				code, err = strconv.ParseInt(string(e["code"]), 10, 64)
			}
			if err == nil {
				err = json.Unmarshal(e["message"], &msg)
			}
			if err == nil {
				err = json.Unmarshal(e["data"], &data)
			}
			if err == nil {
				err = json.Unmarshal(data["correlationId"], &g.cid)
			}
			if err != nil || msg == "" || g.cid == "" || code == 0 {
				return bad("error %s lacks an integer code, a message or data.correlationId (%v)", o, err)
			}
			g.code = code
		}
		out = append(out, g)
	}
	return out
}

// propMatch pairs every response with one expectation of the same id text,
// code, batch-ness and allowed correlation id: a maximum bipartite matching
// by augmenting paths, since one response may fit several expectations.
func propMatch(t *testing.T, k int, want []propExpect, got []propGot) {
	t.Helper()
	fits := func(w propExpect, g propGot) bool {
		return w.id == g.id && w.code == g.code && w.inBatch == g.inBatch && (g.code == 0 || w.cids[g.cid])
	}
	owner := make([]int, len(want)) // want index -> got index+1
	var try func(gi int, seen []bool) bool
	try = func(gi int, seen []bool) bool {
		for wi, w := range want {
			if seen[wi] || !fits(w, got[gi]) {
				continue
			}
			seen[wi] = true
			if owner[wi] == 0 || try(owner[wi]-1, seen) {
				owner[wi] = gi + 1
				return true
			}
		}
		return false
	}
	for gi, g := range got {
		if g.problem != "" {
			t.Errorf("conn %d: %s: %s", k, g.problem, g.line)
			continue
		}
		if !try(gi, make([]bool, len(want))) {
			t.Errorf("conn %d: unexpected response id %s code %d cid %q batch %v in line %s", k, g.id, g.code, g.cid, g.inBatch, g.line)
		}
	}
	for wi, w := range want {
		if owner[wi] == 0 {
			t.Errorf("conn %d: no response for id %s code %d (cids %v, batch %v)", k, w.id, w.code, w.cids, w.inBatch)
		}
	}
}
