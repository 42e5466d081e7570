package fuzz

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/fixtures"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// FuzzResourcesRead turns arbitrary bytes into the params of a
// resources/read sent to an in-process Session of a TEST-mode server with
// the demo resources (fixtures.DemoReadmeURI, DemoLogoURI, DemoCounterURI
// and the template DemoNoteTemplate, whose notes are alpha, beta and
// gamma).
//
// The input is data and split; split's low 14 bits choose how data
// becomes params: 0 — data is the params when it is valid JSON, else
// params is {"uri": <data as a JSON string>}; k > 0 — data is cut at byte
// k-1 into the uri (a JSON string) and _meta (embedded as is when valid
// JSON, else as a JSON string; omitted when empty). The top 2 bits choose
// the revision, as in FuzzToolCall.
//
// Properties: nothing panics or hangs; the request gets exactly one
// compact response and nothing else is written, and it is what an
// independent reference expects: -32602 for params that are not an object
// {uri: string of at most 8192 bytes, _meta?: object} (members matched
// exactly, each at most once, null meaning absent); else a result with one
// item of the right kind (text or base64 blob) and URI for a demo resource
// or a note's URI; else -32002 with data {code: NOT_FOUND, uri}. Every
// error carries data.correlationId: the client's when readable, else the
// connection's.
func FuzzResourcesRead(f *testing.F) {
	for _, s := range resourcesReadSeeds() {
		f.Add(s.data, s.split)
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		version := toolCallVersions[split>>14]
		line := oneRequestLine(mcp.MethodResourcesRead, "uri", "_meta", data, int(split&0x3fff))
		if len(line) > toolCallMaxLine {
			t.Skip("the line is over transport.maxMessageBytes")
		}
		resp, connCID := runOneRequest(t, line, version)
		req, ok := checkOneResponse(t, line, resp, connCID)
		if !ok {
			return
		}
		checkReadResponse(t, line, resp, refRead(req.Params))
	})
}

// refReadOutcome is what the reference expects of a resources/read.
type refReadOutcome struct {
	invalid bool   // -32602
	uri     string // the URI read, when valid
	found   bool   // a result, else -32002
	kind    string // "text" or "blob"
	text    string // the text a note must have ("" for any)
}

// refNotes are the demo notes, as the reference knows them.
var refNotes = map[string]string{"alpha": "The first note.", "beta": "The second note.", "gamma": "The third note."}

// refTemplateValue is what RFC 6570 simple string expansion produces:
// unreserved characters and percent-encoded octets.
var refTemplateValue = regexp.MustCompile(`^(?:[A-Za-z0-9\-._~]|%[0-9A-Fa-f]{2})+$`)

// refRead is the reference's reading of resources/read params.
func refRead(params json.RawMessage) refReadOutcome {
	members, ok := objectMembers(params)
	if len(params) == 0 {
		return refReadOutcome{invalid: true}
	}
	if !ok || len(members["uri"]) > 1 || len(members["_meta"]) > 1 {
		return refReadOutcome{invalid: true}
	}
	uriRaw := firstRaw(members["uri"])
	uri, isString := jsonString(uriRaw)
	if !isString || len(uri) > 8192 {
		return refReadOutcome{invalid: true}
	}
	if meta := firstRaw(members["_meta"]); meta != nil && string(meta) != "null" && meta[0] != '{' {
		return refReadOutcome{invalid: true}
	}
	out := refReadOutcome{uri: uri}
	switch uri {
	case fixtures.DemoReadmeURI, fixtures.DemoCounterURI:
		out.found, out.kind = true, "text"
	case fixtures.DemoLogoURI:
		out.found, out.kind = true, "blob"
	}
	if rest, ok := strings.CutPrefix(uri, "demo://notes/"); ok && refTemplateValue.MatchString(rest) {
		name, err := url.PathUnescape(rest)
		if note, ok := refNotes[name]; err == nil && ok {
			out.found, out.kind, out.text = true, "text", note
		}
	}
	return out
}

// checkReadResponse compares the response with the reference's outcome.
func checkReadResponse(t *testing.T, line, resp []byte, want refReadOutcome) {
	t.Helper()
	var m struct {
		Result *struct {
			Contents []struct {
				URI  string  `json:"uri"`
				Text *string `json:"text"`
				Blob *string `json:"blob"`
			} `json:"contents"`
		} `json:"result"`
		Error *struct {
			Code int64 `json:"code"`
			Data struct {
				Code string `json:"code"`
				URI  string `json:"uri"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp, &m); err != nil {
		t.Fatalf("response %q: %v", resp, err)
	}
	switch {
	case want.invalid:
		if m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("resources/read %q: want -32602, got %q", line, resp)
		}
	case !want.found:
		if m.Error == nil || m.Error.Code != mcp.CodeResourceNotFound || m.Error.Data.Code != "NOT_FOUND" {
			t.Fatalf("resources/read %q: want -32002 NOT_FOUND, got %q", line, resp)
		}
		if !strings.ContainsRune(want.uri, '\uFFFD') && m.Error.Data.URI != want.uri {
			t.Fatalf("resources/read %q: data.uri %q, want %q", line, m.Error.Data.URI, want.uri)
		}
	default:
		if m.Result == nil || len(m.Result.Contents) != 1 {
			t.Fatalf("resources/read %q: want a result with one item, got %q", line, resp)
		}
		c := m.Result.Contents[0]
		if c.URI != want.uri || (c.Text != nil) == (c.Blob != nil) {
			t.Fatalf("resources/read %q: want one item with uri %q and text or blob, got %q", line, want.uri, resp)
		}
		switch {
		case want.kind == "blob":
			if b, err := base64.StdEncoding.DecodeString(deref(c.Blob)); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
				t.Fatalf("resources/read %q: want the logo's PNG as base64, got %q", line, resp)
			}
		case c.Text == nil || want.text != "" && *c.Text != want.text:
			t.Fatalf("resources/read %q: want text %q, got %q", line, want.text, resp)
		case want.uri == fixtures.DemoCounterURI:
			if _, err := strconv.ParseUint(*c.Text, 10, 64); err != nil {
				t.Fatalf("resources/read %q: the counter is not a count: %q", line, resp)
			}
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// objectMembers returns the members of a JSON object by decoded name, each
// with its values in order (a name may appear more than once); ok is
// false when raw is not an object.
func objectMembers(raw json.RawMessage) (members map[string][]json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	members = map[string][]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		members[key] = append(members[key], v)
	}
	return members, true
}

// firstRaw returns the only value of a member, or nil when it is absent.
func firstRaw(values []json.RawMessage) json.RawMessage {
	if len(values) == 0 {
		return nil
	}
	return values[0]
}

// oneRequestLine builds a request line of method whose params come from
// data and pos: pos 0 — data is the params when it is valid JSON, else
// {first: <data as a JSON string>}; pos k > 0 — data is cut at byte k-1
// into first (a JSON string) and second (embedded as is when valid JSON,
// else as a JSON string; omitted when empty).
func oneRequestLine(method, first, second string, data []byte, pos int) []byte {
	var params []byte
	if pos == 0 && json.Valid(data) {
		params = oneLine(data)
	} else {
		k := len(data)
		if pos > 0 {
			k = min(pos-1, len(data))
		}
		params = append([]byte(`{"`+first+`":`), quoteBytes(data[:k])...)
		if rest := data[k:]; len(rest) > 0 {
			params = append(params, `,"`+second+`":`...)
			if json.Valid(rest) {
				params = append(params, oneLine(rest)...)
			} else {
				params = append(params, quoteBytes(rest)...)
			}
		}
		params = append(params, '}')
	}
	line := []byte(`{"jsonrpc":"2.0","id":` + toolCallID + `,"method":"` + method + `","params":`)
	return append(append(line, params...), '}')
}

// demoServer is the TEST-mode server the resources and prompts targets
// share: what they send changes nothing on it.
var demoServer = sync.OnceValues(func() (*mcp.Server, error) {
	cfg := config.DefaultBase("fuzz")
	cfg.Server.Mode = mcp.ModeTest
	cfg.Transport.MaxMessageBytes = toolCallMaxLine
	srv, err := mcp.NewServer(serverOptions(cfg, mcp.Options{Logger: core.NewLogger(io.Discard, core.LogOptions{})}))
	if err != nil {
		return nil, err
	}
	return srv, fixtures.Register(srv, fixtures.Options{})
})

// runOneRequest serves the handshake of version and line on a new session
// of demoServer, and returns the line's response (the one line written
// after the initialize result) and the connection's correlation id. It
// fails on a hang, on output after the response, and on handlers still
// running once the session has closed.
func runOneRequest(t *testing.T, line []byte, version string) (resp []byte, connCID string) {
	t.Helper()
	srv, err := demoServer()
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sess := srv.Connect(srv.Lines(inR, outW), nil)
	served := make(chan error, 1)
	go func() { served <- sess.Serve(context.Background()) }()
	lines := make(chan []byte, 8)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			lines <- bytes.Clone(sc.Bytes())
		}
		_, _ = io.Copy(io.Discard, outR)
	}()
	input := handshakeLines(version) + string(line) + "\n"
	go func() { _, _ = io.WriteString(inW, input) }()

	var out [][]byte
	timer := time.NewTimer(toolCallWait)
	defer timer.Stop()
	for len(out) < 2 {
		select {
		case l := <-lines:
			out = append(out, l)
		case <-timer.C:
			sess.Close()
			t.Fatalf("no response within %v to %q; output %q", toolCallWait, line, out)
		}
	}
	inW.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-timer.C:
		sess.Close()
		t.Fatalf("Serve did not return within %v of the input's end", toolCallWait)
	}
	ctx, cancel := context.WithTimeout(context.Background(), toolCallWait)
	defer cancel()
	if err := sess.Wait(ctx); err != nil {
		t.Fatalf("handlers still running %v after the session closed: %v", toolCallWait, err)
	}
	outW.Close()
	for l := range lines {
		t.Fatalf("output after the response: %q (request %q)", l, line)
	}
	if !bytes.HasPrefix(out[0], []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"`+version+`",`)) {
		t.Fatalf("first output line %q is not the initialize result", out[0])
	}
	return out[1], sess.CorrelationID()
}

// checkOneResponse checks that resp is one well-formed response to line:
// compact JSON-RPC, an error with data.correlationId (the client's when
// readable, else connCID). For a line that is not a valid request it
// checks that resp is the error jsonrpc.Decode gives it and reports false;
// otherwise it returns the request.
func checkOneResponse(t *testing.T, line, resp []byte, connCID string) (*jsonrpc.Request, bool) {
	t.Helper()
	checkWellFormed(t, line, resp)
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int64 `json:"code"`
			Data struct {
				CorrelationID string `json:"correlationId"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp, &m); err != nil {
		t.Fatalf("response %q: %v", resp, err)
	}
	msg, derr := jsonrpc.Decode(line)
	if derr != nil {
		if m.Error == nil || m.Error.Code != derr.Err.Code || string(m.ID) != derr.ID.String() {
			t.Fatalf("line %q is not a valid request (%d, id %s); response %q", line, derr.Err.Code, derr.ID.String(), resp)
		}
		return nil, false
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || string(m.ID) != toolCallID {
		t.Fatalf("response %q to %q does not carry the request's id %s", resp, line, toolCallID)
	}
	if m.Error != nil {
		want := refCorrelationID(req.Params)
		if want == "" {
			want = connCID
		}
		if m.Error.Data.CorrelationID != want {
			t.Fatalf("%q: error %q; want correlationId %q", line, resp, want)
		}
	}
	return req, true
}

// checkWellFormed checks that resp is one compact JSON-RPC response
// object: valid UTF-8, "jsonrpc":"2.0", an id, exactly one of result and
// error, each member once; an error has an integer code, a non-empty
// message and a data object with a non-empty correlationId. (The
// session's checkResponseLine takes every -32002 for "Not initialized";
// here it is also "Resource not found".)
func checkWellFormed(t *testing.T, line, resp []byte) {
	t.Helper()
	if !utf8.Valid(resp) || !json.Valid(resp) || resp[0] != '{' {
		t.Fatalf("response to %q is not a valid UTF-8 JSON object: %q", line, resp)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, resp); err != nil || !bytes.Equal(compact.Bytes(), resp) {
		t.Fatalf("response to %q is not compact JSON: %q", line, resp)
	}
	counts := topLevelKeyCounts(resp)
	for key, n := range counts {
		if n != 1 || !slicesContains([]string{"jsonrpc", "id", "result", "error"}, key) {
			t.Fatalf("response has member %q %d times: %q", key, n, resp)
		}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(resp, &m); err != nil || string(m["jsonrpc"]) != `"2.0"` || m["id"] == nil ||
		(m["result"] == nil) == (m["error"] == nil) {
		t.Fatalf("response to %q is not a JSON-RPC 2.0 response with an id and one of result and error: %q", line, resp)
	}
	if m["error"] == nil {
		if m["result"][0] != '{' {
			t.Fatalf("result is not an object: %q", resp)
		}
		return
	}
	var e map[string]json.RawMessage
	if json.Unmarshal(m["error"], &e) != nil || m["error"][0] != '{' {
		t.Fatalf("error is not an object: %q", resp)
	}
	_, codeOK := jsonInteger(e["code"])
	msg, msgOK := jsonString(e["message"])
	var data map[string]json.RawMessage
	if !codeOK || !msgOK || msg == "" || e["data"] == nil || e["data"][0] != '{' || json.Unmarshal(e["data"], &data) != nil {
		t.Fatalf("error without an integer code, a message and a data object: %q", resp)
	}
	if cid, ok := jsonString(data["correlationId"]); !ok || cid == "" {
		t.Fatalf("error data.correlationId is not a non-empty string: %q", resp)
	}
}

// fuzzSeed is a seed input of FuzzResourcesRead and FuzzPromptsGet.
type fuzzSeed struct {
	name  string
	data  []byte
	split uint16
}

// wholeSeed and cutSeed make seeds for each way of building params.
func wholeSeed(name, params string) fuzzSeed { return fuzzSeed{name, []byte(params), 0} }

func cutSeed(name, first, second string) fuzzSeed {
	return fuzzSeed{name, []byte(first + second), uint16(len(first) + 1)}
}

// resourcesReadSeeds: every demo resource and note, unknown URIs and
// notes, percent-encoding, bad shapes, _meta, every revision.
func resourcesReadSeeds() []fuzzSeed {
	s := []fuzzSeed{
		wholeSeed("readme", `{"uri":"demo://static/readme"}`),
		wholeSeed("logo", `{"uri":"demo://static/logo"}`),
		wholeSeed("counter", `{"uri":"demo://counter"}`),
		wholeSeed("note", `{"uri":"demo://notes/alpha"}`),
		wholeSeed("note-encoded", `{"uri":"demo://notes/%62eta"}`),
		wholeSeed("note-escaped", `{"uri":"demo://notes/\u0067amma"}`),
		wholeSeed("note-unknown", `{"uri":"demo://notes/delta"}`),
		wholeSeed("note-empty", `{"uri":"demo://notes/"}`),
		wholeSeed("note-slash", `{"uri":"demo://notes/alpha/beta"}`),
		wholeSeed("note-query", `{"uri":"demo://notes/alpha?x=1"}`),
		wholeSeed("note-bad-percent", `{"uri":"demo://notes/%zz"}`),
		wholeSeed("unknown", `{"uri":"demo://nothing"}`),
		wholeSeed("case", `{"uri":"DEMO://static/readme"}`),
		wholeSeed("empty-uri", `{"uri":""}`),
		wholeSeed("uri-null", `{"uri":null}`),
		wholeSeed("uri-number", `{"uri":1}`),
		wholeSeed("uri-twice", `{"uri":"demo://counter","uri":"demo://counter"}`),
		wholeSeed("uri-case", `{"URI":"demo://counter"}`),
		wholeSeed("no-params", `{}`),
		wholeSeed("params-array", `["demo://counter"]`),
		wholeSeed("meta", `{"uri":"demo://counter","_meta":{"correlationId":"fuzz-cid-r","progressToken":1}}`),
		wholeSeed("meta-error", `{"uri":"demo://nothing","_meta":{"correlationId":"fuzz-cid-r2"}}`),
		wholeSeed("meta-not-object", `{"uri":"demo://counter","_meta":[]}`),
		wholeSeed("meta-null", `{"uri":"demo://counter","_meta":null}`),
		wholeSeed("long-uri", `{"uri":"demo://`+strings.Repeat("x", 8200)+`"}`),
		wholeSeed("invalid-utf8", "{\"uri\":\"demo://notes/\xff\"}"),
		wholeSeed("lone-surrogate", `{"uri":"demo://notes/\ud800"}`),
		wholeSeed("not-json", `demo://static/readme`),
		cutSeed("cut-readme", "demo://static/readme", ``),
		cutSeed("cut-note-meta", "demo://notes/beta", `{"correlationId":"fuzz-cid-c"}`),
		cutSeed("cut-meta-string", "demo://counter", `not json`),
	}
	for i, v := range toolCallVersions[1:] {
		s = append(s, fuzzSeed{"note-" + v, []byte(`{"uri":"demo://notes/gamma"}`), uint16(i+1) << 14})
	}
	return s
}

// TestWriteResourcesSeedCorpus rewrites testdata/fuzz/FuzzResourcesRead
// and testdata/fuzz/FuzzPromptsGet from the seeds in code when
// MCPRT_WRITE_FUZZ_CORPUS=1; otherwise it is skipped.
func TestWriteResourcesSeedCorpus(t *testing.T) {
	if os.Getenv("MCPRT_WRITE_FUZZ_CORPUS") != "1" {
		t.Skip("set MCPRT_WRITE_FUZZ_CORPUS=1 to rewrite testdata/fuzz from the seeds in code")
	}
	for target, seeds := range map[string][]fuzzSeed{"FuzzResourcesRead": resourcesReadSeeds(), "FuzzPromptsGet": promptsGetSeeds()} {
		dir := "testdata/fuzz/" + target
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, s := range seeds {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nuint16(%d)\n", s.data, s.split)
			if err := os.WriteFile(dir+"/seed-"+s.name, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
