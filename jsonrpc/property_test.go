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
)

// This file checks properties of a Conn over random traffic generated with
// a seeded math/rand/v2 generator (property_gen_test.go): every request gets
// exactly one response (matched by id text), notifications and responses
// get none, every error carries data.correlationId (the request's
// params._meta.correlationId when it has one, the connection's otherwise),
// and every output line is compact JSON. The expected answers come from a
// model of the wire rules and of the test dispatcher run over the generated
// envelopes, not over their bytes.

const (
	propSeed       = 20260101
	propConns      = 40
	propLines      = 120 // per connection; a batch line holds up to 4 messages
	propMaxMessage = 1024
)

// propExpect is one response the model expects.
type propExpect struct {
	id      string          // id text; "null" when none can be echoed
	code    int64           // 0 for a result
	cids    map[string]bool // allowed data.correlationId of an error
	inBatch bool
}

// propModel is the connection as the wire rules and propDisp make it.
type propModel struct {
	connCID  string
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

// request is the dispatcher's decision for a valid request.
func (m *propModel) request(id *propMember, method, clientCID string, inBatch bool) []propExpect {
	dispatched := false
	var code int64
	switch method {
	case "echo", "slow", "work":
		dispatched = true
	case "fail":
		dispatched, code = true, CodeInvalidParams
	case "boom":
		dispatched, code = true, CodeInternalError
	case "denied":
		code = propDenied
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
	return []propExpect{{id: id.raw, code: code, cids: m.cidSet(clientCID), inBatch: inBatch}}
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

// propDenied is the code of the dispatcher's refusal.
const propDenied = -32002

// propDisp routes methods inline and not, failing, panicking and refused.
func propDisp(batching bool) *testDisp {
	d := &testDisp{routes: map[string]Route{}, batches: batching}
	d.handle("echo", inline(func(_ context.Context, req *Request) (any, error) { return req.Params, nil }))
	d.handle("slow", Route{Handler: HandlerFunc(func(ctx context.Context, _ *Request) (any, error) {
		d := time.Duration(rand.N(2000)) * time.Microsecond
		select {
		case <-time.After(d):
			return "slow", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})})
	d.handle("work", Route{Handler: HandlerFunc(func(context.Context, *Request) (any, error) { return "done", nil })})
	d.handle("fail", inline(func(context.Context, *Request) (any, error) {
		return nil, NewError(CodeInvalidParams, "Invalid params: no")
	}))
	d.handle("boom", Route{Handler: HandlerFunc(func(context.Context, *Request) (any, error) { panic("boom") })})
	d.handle("denied", Route{Err: NewError(propDenied, "Not now")})
	return d
}

// TestPropertyConnResponses runs propConns connections over generated
// traffic and checks every response against the model.
func TestPropertyConnResponses(t *testing.T) {
	r := newPropRand(propSeed)
	messages, responses := 0, 0
	codes := map[int64]int{} // what the model expected, to show the coverage
	for k := range propConns {
		lines := make([]propLine, propLines)
		for i := range lines {
			propGen{r}.line(&lines[i])
			messages++
			messages += max(0, len(lines[i].elems)-1)
		}
		responses += propRunConn(t, k, k%2 == 0, lines, codes)
		if t.Failed() {
			return
		}
	}
	t.Logf("%d connections, %d messages, %d responses checked; responses by code %v",
		propConns, messages, responses, codes)
}

// propRunConn serves lines on one connection and checks its output against
// the model; it returns the number of responses.
func propRunConn(t *testing.T, k int, batching bool, lines []propLine, codes map[int64]int) int {
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

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := NewConn(NewLine(inR, outW, LineOptions{MaxMessageBytes: propMaxMessage}), propDisp(batching),
		Options{ErrorData: cidErrorData(m.connCID)})
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
