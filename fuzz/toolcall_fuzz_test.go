package fuzz

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/fixtures"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/tools/builtin"
)

// FuzzToolCall sends one tools/call, built from the fuzz input, to an
// in-process Session of a TEST-mode server with the built-in and fixture
// tools, with small limits: tools.maxPayloadBytes 4096,
// tools.maxResultBytes 8192, tools.defaultTimeoutMs 200.
//
// The input is data and split. The low 14 bits of split choose how data
// becomes params: 0 — data is the params when it is valid JSON, else
// params is {"name": <data as a JSON string>}; k > 0 — data is cut at
// byte k-1 into the tool's name (as a JSON string) and its arguments
// (embedded as is when valid JSON, else as a JSON string; omitted when
// empty). The top 2 bits choose the negotiated revision: 0 2025-11-25,
// 1 2025-06-18, 2 2025-03-26, 3 2024-11-05.
//
// Properties: nothing panics or hangs; the call gets exactly one
// well-formed response and nothing else is written: a JSON-RPC error
// -32602 (or, when the line itself is not a valid request, the -32600 or
// -32700 jsonrpc.Decode gives it) carrying data.correlationId — the
// client's params._meta.correlationId when readable, else the
// connection's — or a result with a content array and a boolean isError,
// where a tool error's first block is text holding a StructuredError
// {code, message, retryable, correlationId, runId} and a success is within
// tools.maxResultBytes, with structuredContent exactly when the revision
// has it and the result is an object. The call writes exactly one final
// completion record (protocol_error for a -32602), plus a timeout record
// before a late_completed one.
//
// Inputs that would make the sleep fixture sleep longer than twice the
// default timeout, or big_result build more than four times
// maxResultBytes, are skipped: they only cost time and memory.
func FuzzToolCall(f *testing.F) {
	for _, s := range toolCallSeeds() {
		f.Add(s.data, s.split)
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		version := toolCallVersions[split>>14]
		line := toolCallLine(data, int(split&0x3fff))
		if len(line) > toolCallMaxLine {
			t.Skip("the line is over transport.maxMessageBytes") // FuzzSession covers that path
		}
		if toolCallTooCostly(line) {
			t.Skip("the call would sleep or allocate too much")
		}
		runToolCall(t, line, version)
	})
}

const (
	toolCallMaxPayload = 4096
	toolCallMaxResult  = 8192
	toolCallTimeoutMs  = 200
	toolCallMaxLine    = 4 << 20 // transport.maxMessageBytes, the default
	toolCallID         = `"fz"`
	toolCallWait       = 10 * time.Second // longer means a hang
)

// toolCallVersions are the revisions split's top 2 bits select.
var toolCallVersions = [4]string{mcp.Version20251125, mcp.Version20250618, mcp.Version20250326, mcp.Version20241105}

// toolCallLine builds the tools/call line for data and pos (see
// FuzzToolCall). The envelope stays valid but for what data itself
// carries: bytes that are not valid UTF-8 inside valid JSON, nesting past
// the decoder's limit, or params that are neither an object nor an array.
func toolCallLine(data []byte, pos int) []byte {
	var params []byte
	if pos == 0 {
		if json.Valid(data) {
			params = oneLine(data)
		} else {
			params = append(append([]byte(`{"name":`), quoteBytes(data)...), '}')
		}
	} else {
		k := min(pos-1, len(data))
		params = append([]byte(`{"name":`), quoteBytes(data[:k])...)
		if args := data[k:]; len(args) > 0 {
			params = append(params, `,"arguments":`...)
			if json.Valid(args) {
				params = append(params, oneLine(args)...)
			} else {
				params = append(params, quoteBytes(args)...)
			}
		}
		params = append(params, '}')
	}
	line := []byte(`{"jsonrpc":"2.0","id":` + toolCallID + `,"method":"tools/call","params":`)
	return append(append(line, params...), '}')
}

// oneLine turns the line breaks of valid JSON, which can only be
// insignificant whitespace, into spaces.
func oneLine(js []byte) []byte {
	out := bytes.ReplaceAll(js, []byte{'\n'}, []byte{' '})
	return bytes.ReplaceAll(out, []byte{'\r'}, []byte{' '})
}

// quoteBytes encodes b as a JSON string (invalid UTF-8 becomes U+FFFD).
func quoteBytes(b []byte) []byte {
	out, _ := json.Marshal(string(b))
	return out
}

// toolCallTooCostly reports whether the call would run the sleep fixture
// for more than twice the default timeout, or make big_result build a
// string of more than four times maxResultBytes. It reads the params as
// tools/call does (encoding/json into a struct) and the arguments as the
// input schemas do (exact member names): a call these readings miss fails
// validation before its handler runs.
func toolCallTooCostly(line []byte) bool {
	msg, derr := jsonrpc.Decode(line)
	req, ok := msg.(*jsonrpc.Request)
	if derr != nil || !ok {
		return false
	}
	var p struct {
		Name      json.RawMessage `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	var name string
	if json.Unmarshal(req.Params, &p) != nil || json.Unmarshal(p.Name, &name) != nil {
		return false
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(p.Arguments, &args) != nil {
		return false
	}
	var n float64
	switch name {
	case "sleep":
		return json.Unmarshal(args["ms"], &n) == nil && n > 2*toolCallTimeoutMs
	}
	return false
}

// runToolCall serves the handshake and line on a fresh server and checks
// the output and the completion records.
func runToolCall(t *testing.T, line []byte, version string) {
	cfg := config.DefaultBase("fuzz")
	cfg.Server.Mode = mcp.ModeTest
	cfg.Tools.MaxPayloadBytes = toolCallMaxPayload
	cfg.Tools.MaxResultBytes = toolCallMaxResult
	cfg.Tools.DefaultTimeout = toolCallTimeoutMs * time.Millisecond
	cfg.Transport.MaxMessageBytes = toolCallMaxLine
	var logs lockedBuffer
	srv, err := mcp.NewServer(serverOptions(cfg, mcp.Options{IDs: &core.SequenceGenerator{},
		Logger: core.NewLogger(&logs, core.LogOptions{Level: slog.LevelInfo})}))
	if err != nil {
		t.Fatal(err)
	}
	agents := aacp.NewCoordinator(aacp.Options{MaxPayloadBytes: cfg.Tools.MaxPayloadBytes})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), toolCallWait)
		defer cancel()
		if err := agents.Close(ctx); err != nil {
			t.Errorf("agents still busy after the session: %v", err)
		}
	}()
	if err := builtin.Register(srv, builtin.Options{Agents: agents}); err != nil {
		t.Fatal(err)
	}
	if err := fixtures.Register(srv, fixtures.Options{Agents: agents}); err != nil {
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
	go func() { _, _ = io.WriteString(inW, input) }() // the reader takes it line by line

	// The initialize result, then the call's response: nothing else may
	// come before.
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
		t.Fatalf("output after the call's response: %q (call %q)", l, line)
	}

	if !bytes.HasPrefix(out[0], []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"`+version+`",`)) {
		t.Fatalf("first output line %q is not the initialize result", out[0])
	}
	reached := checkToolCallResponse(t, line, out[1], version, sess.CorrelationID())
	checkToolCallRecords(t, line, logs.Bytes(), reached)
}

// checkToolCallResponse checks the call's response line; it reports
// whether the call reached tools/call (anything but an invalid line).
func checkToolCallResponse(t *testing.T, line, resp []byte, version, connCID string) bool {
	t.Helper()
	checkResponseLine(t, resp, line, connCID) // compact JSON-RPC, error data with a correlationId
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
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
	if derr != nil { // the line broke the envelope
		wantID := derr.ID.String() // "null" when no id could be read
		if m.Error == nil || m.Error.Code != derr.Err.Code || string(m.ID) != wantID {
			t.Fatalf("line %q is not a valid request (%d, id %s); response %q", line, derr.Err.Code, wantID, resp)
		}
		return false
	}
	if _, ok := msg.(*jsonrpc.Request); !ok || string(m.ID) != toolCallID {
		t.Fatalf("response %q to %q does not carry the request's id %s", resp, line, toolCallID)
	}
	cid := refCorrelationID(msg.(*jsonrpc.Request).Params)
	if m.Error != nil {
		want := cid
		if want == "" {
			want = connCID
		}
		if m.Error.Code != jsonrpc.CodeInvalidParams || m.Error.Data.CorrelationID != want {
			t.Fatalf("tools/call %q: error %q; want -32602 with correlationId %q", line, resp, want)
		}
		return true
	}
	var r struct {
		Content []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		} `json:"content"`
		IsError           *bool           `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || r.Content == nil || r.IsError == nil {
		t.Fatalf("tools/call %q: result %q lacks a content array or a boolean isError", line, resp)
	}
	if !*r.IsError {
		if len(m.Result) > toolCallMaxResult {
			t.Fatalf("tools/call %q: a result of %d bytes, over tools.maxResultBytes", line, len(m.Result))
		}
		if len(r.Content) == 1 && r.Content[0].Type == "text" && r.Content[0].Text != nil {
			// A JSON object result is its text and (from 2025-06-18) its
			// structuredContent; a string result (big_result) is its text,
			// unquoted, without structuredContent.
			text := []byte(*r.Content[0].Text)
			wantStructured := version >= mcp.Version20250618 && json.Valid(text) && len(text) > 0 && text[0] == '{'
			if wantStructured != (r.StructuredContent != nil) ||
				wantStructured && !bytes.Equal(text, r.StructuredContent) {
				t.Fatalf("tools/call %q (%s): text and structuredContent disagree: %q", line, version, resp)
			}
		}
		return true
	}
	if len(r.Content) == 0 || r.Content[0].Type != "text" || r.Content[0].Text == nil {
		t.Fatalf("tools/call %q: tool error without a first text block: %q", line, resp)
	}
	var se map[string]json.RawMessage
	if err := json.Unmarshal([]byte(*r.Content[0].Text), &se); err != nil {
		t.Fatalf("tools/call %q: tool error text is not a JSON object: %q", line, resp)
	}
	code, ok1 := jsonString(se["code"])
	msgText, ok2 := jsonString(se["message"])
	seCID, ok3 := jsonString(se["correlationId"])
	runID, ok4 := jsonString(se["runId"])
	var retryable bool
	if !ok1 || !ok2 || !ok3 || !ok4 || code == "" || msgText == "" || seCID == "" || runID == "" ||
		json.Unmarshal(se["retryable"], &retryable) != nil {
		t.Fatalf("tools/call %q: incomplete StructuredError %q", line, *r.Content[0].Text)
	}
	if strings.ToUpper(code) != code || strings.ContainsAny(code, " -") {
		t.Fatalf("tools/call %q: code %q is not UPPER_SNAKE_CASE", line, code)
	}
	var details struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(se["details"], &details)
	if retryable != refRetryable(code, details.Reason) {
		t.Fatalf("tools/call %q: %s (reason %q) with retryable %v", line, code, details.Reason, retryable)
	}
	if cid != "" && seCID != cid {
		t.Fatalf("tools/call %q: correlationId %q, want the client's %q", line, seCID, cid)
	}
	return true
}

// refRetryable says whether a tool error with this code and
// details.reason must be retryable (whether the same call can succeed
// again): a timeout, a busy slot and a refused audit can pass, a panic may
// not recur; an oversized payload, a handler's own error and a bad result
// will recur.
func refRetryable(code, reason string) bool {
	switch code {
	case "TIMEOUT", "AUDIT_ENTER_FAILED":
		return true
	case "RESOURCE_EXHAUSTED":
		return reason != "payload_too_large"
	case "INTERNAL":
		return reason == "panic"
	}
	return false
}

// refCorrelationID is the client correlation id:
// params._meta.correlationId when it is a non-empty string of at most 128
// bytes (member names matched exactly), else "".
func refCorrelationID(params json.RawMessage) string {
	var top map[string]json.RawMessage
	if len(params) == 0 || params[0] != '{' || json.Unmarshal(params, &top) != nil {
		return ""
	}
	var meta map[string]json.RawMessage
	if raw := top["_meta"]; len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &meta) != nil {
		return ""
	}
	cid, ok := jsonString(meta["correlationId"])
	if !ok || cid == "" || len(cid) > 128 {
		return ""
	}
	return cid
}

// checkToolCallRecords checks the completion records: none for a line
// that never reached tools/call; else exactly one final record, and a
// timeout record exactly when the final one is late_completed, before it.
func checkToolCallRecords(t *testing.T, line, logs []byte, reached bool) {
	t.Helper()
	var outcomes []string
	for l := range bytes.SplitSeq(logs, []byte{'\n'}) {
		var rec struct {
			Msg     string `json:"msg"`
			Outcome string `json:"outcome"`
		}
		if json.Unmarshal(l, &rec) == nil && rec.Msg == "tool call completed" {
			outcomes = append(outcomes, rec.Outcome)
		}
	}
	switch {
	case !reached && len(outcomes) == 0:
	case !reached:
		t.Fatalf("line %q never reached tools/call, yet has completion records %q", line, outcomes)
	case len(outcomes) == 1 && outcomes[0] != mcp.OutcomeTimeout && outcomes[0] != mcp.OutcomeLateCompleted:
	case len(outcomes) == 2 && outcomes[0] == mcp.OutcomeTimeout && outcomes[1] == mcp.OutcomeLateCompleted:
	default:
		t.Fatalf("tools/call %q: completion records %q; want one final record (or timeout, late_completed)", line, outcomes)
	}
}

// toolCallSeed is a seed input of FuzzToolCall.
type toolCallSeed struct {
	name  string
	data  []byte
	split uint16
}

// toolCallSeeds: every fixture with good and bad arguments, unknown tools,
// non-object arguments, _meta, a huge and a deeply nested argument, both
// ways of building params, and every revision.
func toolCallSeeds() []toolCallSeed {
	whole := func(name, params string) toolCallSeed { return toolCallSeed{name, []byte(params), 0} }
	cut := func(name, tool, args string) toolCallSeed {
		return toolCallSeed{name, []byte(tool + args), uint16(len(tool) + 1)}
	}
	deep := strings.Repeat(`{"a":`, 300) + "1" + strings.Repeat("}", 300)
	s := []toolCallSeed{
		whole("noop", `{"name":"noop","arguments":{}}`),
		whole("noop-no-arguments", `{"name":"noop"}`),
		whole("noop-bad", `{"name":"noop","arguments":{"x":1}}`),
		whole("echo", `{"name":"echo","arguments":{"message":"hi"}}`),
		whole("echo-bad", `{"name":"echo","arguments":{"message":1}}`),
		whole("echo-missing", `{"name":"echo","arguments":{}}`),
		whole("sleep", `{"name":"sleep","arguments":{"ms":1}}`),
		whole("sleep-ignore-cancel", `{"name":"sleep","arguments":{"ms":2,"ignoreCancel":true}}`),
		whole("sleep-timeout", `{"name":"sleep","arguments":{"ms":250}}`),
		whole("sleep-late", `{"name":"sleep","arguments":{"ms":210,"ignoreCancel":true}}`),
		whole("sleep-bad", `{"name":"sleep","arguments":{"ms":-1}}`),
		whole("sleep-float", `{"name":"sleep","arguments":{"ms":1.0}}`),
		whole("fail", `{"name":"fail","arguments":{"message":"on purpose"}}`),
		whole("fail-bad", `{"name":"fail"}`),
		whole("panic", `{"name":"panic","arguments":{}}`),
		whole("panic-bad", `{"name":"panic","arguments":{"why":"not"}}`),
		whole("big-result", `{"name":"big_result","arguments":{"bytes":10}}`),
		whole("big-result-too-large", `{"name":"big_result","arguments":{"bytes":8193}}`),
		whole("big-result-bad", `{"name":"big_result","arguments":{"bytes":"x"}}`),
		whole("unserializable", `{"name":"unserializable"}`),
		whole("unserializable-bad", `{"name":"unserializable","arguments":{"a":[]}}`),
		whole("server-ping", `{"name":"server_ping","arguments":{}}`),
		whole("health", `{"name":"health"}`),
		whole("agent-echo", `{"name":"agent_send_message","arguments":{"targetAgentId":"echo","message":{"type":"t","payload":[1]}}}`),
		whole("agent-counter", `{"name":"agent_send_message","arguments":{"targetAgentId":"counter","message":{"type":"inc","payload":{"ms":1}}}}`),
		whole("agent-unknown", `{"name":"agent_send_message","arguments":{"targetAgentId":"nobody","message":{"type":"t"}}}`),
		whole("agent-list", `{"name":"agent_list"}`),
		whole("agent-state", `{"name":"agent_get_state","arguments":{"agentId":"counter"}}`),
		whole("unknown-tool", `{"name":"no_such_tool","arguments":{}}`),
		whole("name-not-string", `{"name":1}`),
		whole("name-escaped", `{"name":"\u0065cho","arguments":{"message":"e"}}`),
		whole("arguments-array", `{"name":"echo","arguments":[1,2]}`),
		whole("arguments-string", `{"name":"echo","arguments":"hi"}`),
		whole("arguments-null", `{"name":"echo","arguments":null}`),
		whole("arguments-number", `{"name":"noop","arguments":1e3}`),
		whole("meta-correlation-id", `{"name":"echo","arguments":{"message":"m"},"_meta":{"correlationId":"fuzz-cid-1","progressToken":1}}`),
		whole("meta-correlation-id-error", `{"name":"echo","arguments":[],"_meta":{"correlationId":"fuzz-cid-2"}}`),
		whole("meta-not-object", `{"name":"noop","_meta":"x"}`),
		whole("meta-in-arguments", `{"name":"echo","arguments":{"message":"m","_meta":{"correlationId":"inner"}}}`),
		whole("huge-argument", `{"name":"echo","arguments":{"message":"`+strings.Repeat("x", toolCallMaxPayload)+`"}}`),
		whole("deep-arguments", `{"name":"noop","arguments":`+deep+`}`),
		whole("deep-arguments-echo", `{"name":"echo","arguments":{"message":"d","n":`+deep+`}}`),
		whole("case-variant-keys", `{"Name":"noop","ARGUMENTS":{}}`),
		whole("duplicate-keys", `{"name":"noop","name":"echo","arguments":{"message":"d"}}`),
		whole("params-array", `["echo",{"message":"m"}]`),
		whole("params-number", `1`),
		whole("not-json", `echo {"message":`),
		whole("invalid-utf8", "{\"name\":\"echo\",\"arguments\":{\"message\":\"\xff\"}}"),
		cut("cut-echo", "echo", `{"message":"split"}`),
		cut("cut-noop", "noop", ``),
		cut("cut-sleep", "sleep", `{"ms":3}`),
		cut("cut-big-result", "big_result", `{"bytes":100}`),
		cut("cut-not-json", "echo", `{"message":`),
		cut("cut-bad-name", "\xffecho", `{"message":"x"}`),
	}
	for i, v := range toolCallVersions[1:] {
		s = append(s, toolCallSeed{"echo-" + v, []byte(`{"name":"echo","arguments":{"message":"v"}}`), uint16(i+1) << 14})
	}
	return s
}

// TestWriteToolCallSeedCorpus rewrites testdata/fuzz/FuzzToolCall from the
// seeds in code when MCPRT_WRITE_FUZZ_CORPUS=1; otherwise it is skipped.
func TestWriteToolCallSeedCorpus(t *testing.T) {
	if os.Getenv("MCPRT_WRITE_FUZZ_CORPUS") != "1" {
		t.Skip("set MCPRT_WRITE_FUZZ_CORPUS=1 to rewrite testdata/fuzz from the seeds in code")
	}
	dir := "testdata/fuzz/FuzzToolCall"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range toolCallSeeds() {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nuint16(%d)\n", s.data, s.split)
		if err := os.WriteFile(dir+"/seed-"+s.name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
