package fuzz

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcprt/mcprt/jsonrpc"
)

// The kinds of refMessage.
const (
	refParseError   = "parse-error"     // -32700
	refInvalid      = "invalid-request" // -32600
	refRequest      = "request"
	refNotification = "notification"
	refResponse     = "response"
)

// refMessage is what the reference classifier makes of one line.
type refMessage struct {
	Kind string
	// Echo is the id text an invalid message's error echoes ("" for null):
	// set when the envelope has exactly one "id" of a valid type.
	Echo string
	// ID, Method, Params, Result are the members of a valid message (raw
	// JSON text; Params nil when absent).
	ID     string
	Method string
	Params json.RawMessage
	Result json.RawMessage
	// HasError, ErrCode, ErrMessage, ErrData describe an error response.
	HasError   bool
	ErrCode    int64
	ErrMessage string
	ErrData    json.RawMessage
	// ParamsCount is how many "params" members the envelope has.
	ParamsCount int
}

var envelopeNames = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// refClassify classifies line per the contract without sharing code with
// jsonrpc: map[string]json.RawMessage for the members' values, and a
// json.Decoder.Token walk for how often each top-level key occurs.
func refClassify(line []byte) refMessage {
	if !utf8.Valid(line) || !json.Valid(line) {
		return refMessage{Kind: refParseError}
	}
	if bytes.TrimLeft(line, " \t\r\n")[0] != '{' {
		return refMessage{Kind: refInvalid}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(line, &top); err != nil {
		panic("valid JSON object did not unmarshal into a map: " + err.Error())
	}
	counts := topLevelKeyCounts(line)
	m := refMessage{Kind: refInvalid, ParamsCount: counts["params"]}
	if counts["id"] == 1 && validID(top["id"]) {
		m.Echo = string(top["id"])
	}
	for key, n := range counts {
		if slicesContains(envelopeNames, key) {
			if n > 1 {
				return m // duplicate envelope member
			}
			continue
		}
		for _, name := range envelopeNames {
			if strings.EqualFold(key, name) {
				return m // case variant of an envelope member
			}
		}
	}
	if v, ok := jsonString(top["jsonrpc"]); !ok || v != "2.0" {
		return m
	}
	idRaw, hasID := top["id"]
	if hasID && !validID(idRaw) {
		return m
	}
	params, hasParams := top["params"]
	if hasParams && !isObjectOrArray(params) {
		return m
	}
	_, hasResult := top["result"]
	errRaw, hasError := top["error"]
	if methodRaw, ok := top["method"]; ok {
		method, isString := jsonString(methodRaw)
		if !isString || hasResult || hasError {
			return m
		}
		kind := refRequest
		if !hasID {
			kind = refNotification
		}
		return refMessage{Kind: kind, ID: string(idRaw), Method: method, Params: params, ParamsCount: 1}
	}
	if hasResult == hasError || !hasID || hasParams {
		return m
	}
	if hasResult {
		return refMessage{Kind: refResponse, ID: string(idRaw), Result: top["result"]}
	}
	var e map[string]json.RawMessage
	if errRaw[0] != '{' || json.Unmarshal(errRaw, &e) != nil {
		return m
	}
	code, ok := jsonInteger(e["code"])
	if !ok {
		return m
	}
	msg, ok := jsonString(e["message"])
	if !ok {
		return m
	}
	return refMessage{Kind: refResponse, ID: string(idRaw), HasError: true, ErrCode: code, ErrMessage: msg,
		ErrData: e["data"]}
}

// topLevelKeyCounts counts the keys of the top-level object of a valid JSON
// line, walking it token by token.
func topLevelKeyCounts(line []byte) map[string]int {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber() // 1e999 is valid JSON but no float64
	counts := map[string]int{}
	if _, err := dec.Token(); err != nil { // '{'
		panic(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			panic(err)
		}
		counts[tok.(string)]++
		depth := 0
		for {
			tok, err := dec.Token()
			if err != nil {
				panic(err)
			}
			switch tok {
			case json.Delim('{'), json.Delim('['):
				depth++
			case json.Delim('}'), json.Delim(']'):
				depth--
			}
			if depth == 0 {
				break
			}
		}
	}
	return counts
}

func slicesContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// decodeAny decodes a JSON value, keeping numbers as json.Number (1e999 is
// valid JSON but no float64).
func decodeAny(raw json.RawMessage) (any, bool) {
	if raw == nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	return v, dec.Decode(&v) == nil
}

// validID reports whether raw is a string, a number or null.
func validID(raw json.RawMessage) bool {
	v, ok := decodeAny(raw)
	if !ok {
		return false
	}
	switch v.(type) {
	case string, json.Number, nil:
		return true
	}
	return false
}

// jsonString returns the value of raw if it is a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	v, _ := decodeAny(raw)
	s, ok := v.(string)
	return s, ok
}

// jsonInteger returns the value of raw if it is a JSON number written as
// an integer that fits in an int64.
func jsonInteger(raw json.RawMessage) (int64, bool) {
	v, _ := decodeAny(raw)
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	return i, err == nil
}

func isObjectOrArray(raw json.RawMessage) bool {
	v, _ := decodeAny(raw)
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// startsArray reports whether the first non-whitespace byte is '['.
func startsArray(line []byte) bool {
	t := bytes.TrimLeft(line, " \t\r\n")
	return len(t) > 0 && t[0] == '['
}

// checkDecoded compares Decode's answer for line with the reference.
func checkDecoded(t *testing.T, line []byte, msg jsonrpc.Message, derr *jsonrpc.DecodeError, want refMessage) {
	t.Helper()
	if (msg == nil) == (derr == nil) {
		t.Fatalf("Decode(%q) = %#v, %#v: want exactly one of message and error", line, msg, derr)
	}
	if derr != nil {
		if derr.Err == nil || derr.Err.Message == "" {
			t.Fatalf("Decode(%q): DecodeError without an error message: %#v", line, derr)
		}
		switch code := derr.Err.Code; {
		case want.Kind == refParseError && code == jsonrpc.CodeParseError:
			if !derr.ID.IsZero() || derr.Params != nil {
				t.Fatalf("Decode(%q): parse error with id %s, params %q", line, derr.ID, derr.Params)
			}
		case want.Kind == refInvalid && code == jsonrpc.CodeInvalidRequest:
			if want.Echo == "" && !derr.ID.IsZero() {
				t.Fatalf("Decode(%q): invalid request echoes id %s; want none", line, derr.ID)
			}
			if want.Echo != "" && (derr.ID.IsZero() || derr.ID.String() != want.Echo) {
				t.Fatalf("Decode(%q): invalid request echoes id %q; want %q", line, derr.ID.String(), want.Echo)
			}
			switch {
			case derr.Params == nil:
			case want.ParamsCount == 0:
				t.Fatalf("Decode(%q): params %q from a message without params", line, derr.Params)
			case !json.Valid(derr.Params) || !bytes.Contains(line, derr.Params):
				t.Fatalf("Decode(%q): params %q are not a value of the message", line, derr.Params)
			}
		default:
			t.Fatalf("Decode(%q) = error %d %q; want %s", line, code, derr.Err.Message, want.Kind)
		}
		return
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if want.Kind != refRequest || m.Method != want.Method || !sameRaw(m.Params, want.Params) {
			t.Fatalf("Decode(%q) = request %q params %q; want %+v", line, m.Method, m.Params, want)
		}
		checkID(t, line, m.ID, want.ID)
	case *jsonrpc.Notification:
		if want.Kind != refNotification || m.Method != want.Method || !sameRaw(m.Params, want.Params) {
			t.Fatalf("Decode(%q) = notification %q params %q; want %+v", line, m.Method, m.Params, want)
		}
	case *jsonrpc.Response:
		if want.Kind != refResponse || (m.Error != nil) != want.HasError || !sameRaw(m.Result, want.Result) {
			t.Fatalf("Decode(%q) = response %+v; want %+v", line, m, want)
		}
		if want.HasError {
			data, _ := m.Error.Data.(json.RawMessage)
			if m.Error.Code != want.ErrCode || m.Error.Message != want.ErrMessage || !sameRaw(data, want.ErrData) ||
				(m.Error.Data == nil) != (want.ErrData == nil) {
				t.Fatalf("Decode(%q) = error response %+v; want %+v", line, m.Error, want)
			}
		}
		checkID(t, line, m.ID, want.ID)
	default:
		t.Fatalf("Decode(%q) = %T", line, msg)
	}
}

// checkID checks that id is kept byte for byte: by MarshalJSON, and inside
// a value encoded the way the engine encodes results (no HTML escaping;
// json.Marshal would escape the "&" of an id "&" to \u0026 whatever
// MarshalJSON returns).
func checkID(t *testing.T, line []byte, id jsonrpc.ID, want string) {
	t.Helper()
	enc, err := id.MarshalJSON()
	if err != nil || string(enc) != want || id.String() != want || id.IsZero() || !bytes.Contains(line, enc) {
		t.Fatalf("Decode(%q): id encodes as %q (%v), String %q; want %q byte for byte", line, enc, err, id.String(), want)
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode([]jsonrpc.ID{id}); err != nil || buf.String() != "["+want+"]\n" {
		t.Fatalf("Decode(%q): id inside an array encodes as %q (%v); want [%s]", line, buf.String(), err, want)
	}
}

func sameRaw(a, b json.RawMessage) bool {
	return bytes.Equal(a, b) && (a == nil) == (b == nil)
}

func FuzzDecode(f *testing.F) {
	for _, s := range decodeSeeds() {
		f.Add(s.data)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, derr := jsonrpc.Decode(line)
		checkDecoded(t, line, msg, derr, refClassify(line))
		if !startsArray(line) {
			return
		}
		elems, derr := jsonrpc.DecodeBatch(line)
		if !utf8.Valid(line) || !json.Valid(line) {
			if derr == nil || derr.Err.Code != jsonrpc.CodeParseError || elems != nil {
				t.Fatalf("DecodeBatch(%q) = %q, %+v; want -32700", line, elems, derr)
			}
			return
		}
		if derr != nil {
			t.Fatalf("DecodeBatch(%q): %+v; want the elements of a valid array", line, derr.Err)
		}
		var want []json.RawMessage
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("reference: %v", err)
		}
		if len(elems) != len(want) {
			t.Fatalf("DecodeBatch(%q) = %d elements; want %d", line, len(elems), len(want))
		}
		for i, e := range elems {
			if !bytes.Equal(e, want[i]) {
				t.Fatalf("DecodeBatch(%q): element %d is %q; want %q", line, i, e, want[i])
			}
			ref := refClassify(e)
			if e[0] != '{' {
				ref = refMessage{Kind: refInvalid}
			}
			msg, derr := jsonrpc.DecodeElement(e)
			checkDecoded(t, e, msg, derr, ref)
		}
	})
}

// TestRefClassify pins the reference classifier on the cases the contract names.
func TestRefClassify(t *testing.T) {
	tests := []struct {
		in   string
		kind string
		echo string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, refRequest, ""},
		{`{"jsonrpc":"2.0","method":"ping"}`, refNotification, ""},
		{`{"jsonrpc":"2.0","id":1,"result":null}`, refResponse, ""},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":""}}`, refResponse, ""},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":""}}`, refInvalid, "1"},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1.0,"message":""}}`, refInvalid, "1"},
		{`{"jsonrpc":"2.0","id":1,"error":{"Code":1,"message":""}}`, refInvalid, "1"},
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, refInvalid, ""},
		{`{"jsonrpc":"2.0","id":1,"Method":"ping"}`, refInvalid, "1"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","x":1,"x":2}`, refRequest, ""},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, refInvalid, ""},
		{`{"jsonrpc":"2.0","id":"x","method":"ping","params":1}`, refInvalid, `"x"`},
		{`{"jsonrpc":2.0,"id":1.0,"method":"ping"}`, refInvalid, "1.0"},
		{`[1]`, refInvalid, ""},
		{`{"jsonrpc":"2.0","method":"p` + "\xff" + `"}`, refParseError, ""},
		{`{"jsonrpc":"2.0","method":"ping"} {}`, refParseError, ""},
	}
	for _, tt := range tests {
		got := refClassify([]byte(tt.in))
		if got.Kind != tt.kind || got.Echo != tt.echo {
			t.Errorf("refClassify(%q) = %s echo %q; want %s echo %q", tt.in, got.Kind, got.Echo, tt.kind, tt.echo)
		}
	}
}

// decodeSeeds are single lines for FuzzDecode (and, with a newline, for the
// other targets).
func decodeSeeds() []seed {
	deepArray := strings.Repeat("[", 400) + strings.Repeat("]", 400)
	deepParams := `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":` + strings.Repeat(`{"a":`, 300) + "1" +
		strings.Repeat("}", 301) + "}"
	return []seed{
		{"request", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		{"request-params", []byte(`{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"correlationId":"c-1"}}}`)},
		{"notification", []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)},
		{"response-result", []byte(`{"jsonrpc":"2.0","id":"mcprt-1","result":{"ok":true}}`)},
		{"response-error", []byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no","data":{"x":[1]}}}`)},
		{"response-error-string-code", []byte(`{"jsonrpc":"2.0","id":2,"error":{"code":"-32601","message":"no"}}`)},
		{"response-error-case-variant", []byte(`{"jsonrpc":"2.0","id":2,"error":{"Code":-32601,"Message":"no"}}`)},
		{"batch", []byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},1,"x",null,[]]`)},
		{"batch-empty", []byte(`[]`)},
		{"batch-notifications", []byte(` [{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b","params":[]}]`)},
		{"id-big", []byte(`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`)},
		{"id-float", []byte(`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`)},
		{"id-negative-zero", []byte(`{"jsonrpc":"2.0","id":-0,"method":"ping"}`)},
		{"id-string", []byte(`{"jsonrpc":"2.0","id":"x","method":"ping"}`)},
		{"id-html-characters", []byte(`{"jsonrpc":"2.0","id":"<&>\u2028","result":{}}`)},
		{"id-escaped-string", []byte(`{"jsonrpc":"2.0","id":"\u0078\n\"","method":"ping"}`)},
		{"id-huge-number", []byte(`{"jsonrpc":"2.0","id":1e999,"method":"ping"}`)},
		{"id-null", []byte(`{"jsonrpc":"2.0","id":null,"method":"ping"}`)},
		{"id-true", []byte(`{"jsonrpc":"2.0","id":true,"method":"ping"}`)},
		{"id-array", []byte(`{"jsonrpc":"2.0","id":[1],"method":"ping"}`)},
		{"id-object", []byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`)},
		{"duplicate-id", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","id":2}`)},
		{"duplicate-method", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","method":"shutdown"}`)},
		{"duplicate-unknown", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","x":1,"x":2}`)},
		{"case-variant-method", []byte(`{"jsonrpc":"2.0","id":1,"Method":"ping"}`)},
		{"case-variant-id", []byte(`{"jsonrpc":"2.0","ID":1,"method":"ping"}`)},
		{"case-variant-unicode", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","paramſ":{}}`)},
		{"escaped-key", []byte(`{"jsonrpc":"2.0","\u0069d":1,"method":"ping"}`)},
		{"jsonrpc-number", []byte(`{"jsonrpc":2.0,"id":1,"method":"ping"}`)},
		{"jsonrpc-escaped", []byte(`{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`)},
		{"params-string", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`)},
		{"method-number", []byte(`{"jsonrpc":"2.0","id":1,"method":1}`)},
		{"response-with-params", []byte(`{"jsonrpc":"2.0","id":1,"result":{},"params":{"_meta":{"correlationId":"c"}}}`)},
		{"response-without-id", []byte(`{"jsonrpc":"2.0","result":{}}`)},
		{"response-error-not-object", []byte(`{"jsonrpc":"2.0","id":1,"error":[-1,"m"]}`)},
		{"response-error-float-code", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-1.5,"message":"m","data":null}}`)},
		{"request-with-result", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","result":1}`)},
		{"missing-jsonrpc", []byte(`{"id":1,"method":"ping"}`)},
		{"jsonrpc-1.0", []byte(`{"jsonrpc":"1.0","id":1,"method":"ping"}`)},
		{"neither-method-nor-result", []byte(`{"jsonrpc":"2.0","id":1}`)},
		{"result-and-error", []byte(`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}`)},
		{"invalid-utf8", []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}")},
		{"invalid-utf8-key", []byte("{\"jsonrpc\":\"2.0\",\"\xc3\x28\":1,\"method\":\"ping\"}")},
		{"nul-raw", []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\x00\"}")},
		{"nul-escaped", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping\u0000"}`)},
		{"nul-alone", []byte("\x00")},
		{"deep-params", []byte(deepParams)},
		{"deep-array", []byte(deepArray)},
		{"deep-object", []byte(strings.Repeat(`{"a":`, 400) + "1" + strings.Repeat("}", 400))},
		{"trailing-data", []byte(`{"jsonrpc":"2.0","method":"ping"} {}`)},
		{"truncated", []byte(`{"jsonrpc":"2.0","id":1,"meth`)},
		{"not-object", []byte(`"hello"`)},
		{"top-level-huge-number", []byte(`1e700`)}, // once -32700: Token made it a float64
		{"top-level-number", []byte(` -0.5e-3 `)},
		{"whitespace", []byte(" \t\r\n {\"jsonrpc\":\"2.0\",\r\n\"method\":\"ping\"} \n")},
	}
}

// TestWriteSeedCorpus rewrites testdata/fuzz/ from the seeds in code when
// MCPRT_WRITE_FUZZ_CORPUS=1; otherwise it is skipped.
func TestWriteSeedCorpus(t *testing.T) {
	if os.Getenv("MCPRT_WRITE_FUZZ_CORPUS") != "1" {
		t.Skip("set MCPRT_WRITE_FUZZ_CORPUS=1 to rewrite testdata/fuzz from the seeds in code")
	}
	writeCorpus(t, "FuzzFramer", framerSeeds())
	writeCorpus(t, "FuzzDecode", decodeSeeds())
	writeCorpus(t, "FuzzSession", sessionSeeds())
}
