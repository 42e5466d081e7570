package jsonrpc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestGoldenWire feeds bytes to a Conn over a Line transport and compares
// the bytes it writes: framing, decoding, classification, id echo,
// handler outcomes, notifications and batches.
func TestGoldenWire(t *testing.T) {
	cid := func(id, code string) string { return errLine(id, code, testCID) }
	tests := []struct {
		name  string
		batch bool
		in    string
		want  string
	}{
		// Framing.
		{"blank lines ignored", false, "\n  \t \n\r\n", ""},
		{"crlf tolerated", false, `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r\n", okLine("1")},
		{"no newline at end is a fragment", false, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, ""},
		{"answered in order", false, req("1", "ping") + req("2", "echo") + req("3", "ping"),
			okLine("1") + `{"jsonrpc":"2.0","id":2,"result":null}` + "\n" + okLine("3")},
		// Parse errors.
		{"not json", false, "{\n", cid("null", "-32700")},
		{"trailing garbage", false, `{"jsonrpc":"2.0","id":1,"method":"ping"} x` + "\n", cid("null", "-32700")},
		{"two objects", false, `{} {}` + "\n", cid("null", "-32700")},
		{"invalid utf8", false, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}\n", cid("null", "-32700")},
		{"nul byte", false, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\x00ng\"}\n", cid("null", "-32700")},
		{"too deep", false, `{"jsonrpc":"2.0","id":1,"method":"echo","params":[` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "]}\n", cid("null", "-32700")},
		// Invalid requests.
		{"scalar", false, "42\n", cid("null", "-32600")},
		{"string", false, `"x"` + "\n", cid("null", "-32600")},
		{"huge number", false, "1e700\n", cid("null", "-32600")},
		{"missing jsonrpc", false, `{"id":1,"method":"ping"}` + "\n", cid("1", "-32600")},
		{"wrong jsonrpc", false, `{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\n", cid("1", "-32600")},
		{"jsonrpc number", false, `{"jsonrpc":2,"id":1,"method":"ping"}` + "\n", cid("1", "-32600")},
		{"escaped jsonrpc ok", false, `{"jsonrpc":"2\u002e0","id":1,"method":"ping"}` + "\n", okLine("1")},
		{"method not string", false, `{"jsonrpc":"2.0","id":1,"method":1}` + "\n", cid("1", "-32600")},
		{"id object", false, `{"jsonrpc":"2.0","id":{},"method":"ping"}` + "\n", cid("null", "-32600")},
		{"id array", false, `{"jsonrpc":"2.0","id":[1],"method":"ping"}` + "\n", cid("null", "-32600")},
		{"id bool", false, `{"jsonrpc":"2.0","id":true,"method":"ping"}` + "\n", cid("null", "-32600")},
		{"params string", false, `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}` + "\n", cid("1", "-32600")},
		{"params null", false, `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}` + "\n", cid("1", "-32600")},
		{"duplicate id", false, `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}` + "\n", cid("null", "-32600")},
		{"duplicate method", false, `{"jsonrpc":"2.0","id":7,"method":"ping","method":"ping"}` + "\n", cid("7", "-32600")},
		{"case variant Method", false, `{"jsonrpc":"2.0","id":7,"Method":"ping"}` + "\n", cid("7", "-32600")},
		{"case variant ID", false, `{"jsonrpc":"2.0","ID":7,"method":"ping"}` + "\n", cid("null", "-32600")},
		{"case variant beside exact", false, `{"jsonrpc":"2.0","id":7,"method":"ping","METHOD":"x"}` + "\n", cid("7", "-32600")},
		{"unknown member ignored", false, `{"jsonrpc":"2.0","id":7,"method":"ping","extra":{"a":[1]}}` + "\n", okLine("7")},
		{"request with result", false, `{"jsonrpc":"2.0","id":7,"method":"ping","result":{}}` + "\n", cid("7", "-32600")},
		{"neither method nor result", false, `{"jsonrpc":"2.0","id":7}` + "\n", cid("7", "-32600")},
		{"response with both", false, `{"jsonrpc":"2.0","id":7,"result":1,"error":{"code":1,"message":"x"}}` + "\n", cid("7", "-32600")},
		{"response with bad error", false, `{"jsonrpc":"2.0","id":7,"error":{"code":"1","message":"x"}}` + "\n", cid("7", "-32600")},
		{"invalid request keeps client correlation", false, `{"jsonrpc":"1","id":7,"method":"ping","params":{"_meta":{"correlationId":"c-1"}}}` + "\n", errLine("7", "-32600", "c-1")},
		// Id echo, byte for byte.
		{"id big", false, `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}` + "\n", okLine("9007199254740993")},
		{"id 1.0", false, `{"jsonrpc":"2.0","id":1.0,"method":"ping"}` + "\n", okLine("1.0")},
		{"id -0", false, `{"jsonrpc":"2.0","id":-0,"method":"ping"}` + "\n", okLine("-0")},
		{"id exponent", false, `{"jsonrpc":"2.0","id":1e400,"method":"ping"}` + "\n", okLine("1e400")},
		{"id string", false, `{"jsonrpc":"2.0","id":"x","method":"ping"}` + "\n", okLine(`"x"`)},
		{"id escaped string", false, `{"jsonrpc":"2.0","id":"a\u0041\"","method":"ping"}` + "\n", okLine(`"a\u0041\""`)},
		{"id long string", false, `{"jsonrpc":"2.0","id":"` + strings.Repeat("z", 5000) + `","method":"ping"}` + "\n", okLine(`"` + strings.Repeat("z", 5000) + `"`)},
		{"id null", false, `{"jsonrpc":"2.0","id":null,"method":"ping"}` + "\n", okLine("null")},
		// Methods and handler outcomes.
		{"unknown method", false, `{"jsonrpc":"2.0","id":1,"method":"nope"}` + "\n", cid("1", "-32601")},
		{"unknown method client cid", false, `{"jsonrpc":"2.0","id":1,"method":"nope","params":{"_meta":{"correlationId":"c-2"}}}` + "\n", errLine("1", "-32601", "c-2")},
		{"method names are case-sensitive", false, `{"jsonrpc":"2.0","id":1,"method":"Ping"}` + "\n", cid("1", "-32601")},
		{"invalid params", false, `{"jsonrpc":"2.0","id":1,"method":"badparams"}` + "\n", cid("1", "-32602")},
		{"handler error", false, `{"jsonrpc":"2.0","id":1,"method":"fail"}` + "\n", cid("1", "-32603")},
		{"error code zero is never sent", false, req("1", "codezero"), cid("1", "-32603")},
		{"panic then serve", false, req("1", "panic") + req("2", "ping"), cid("1", "-32603") + okLine("2")},
		{"unencodable result", false, `{"jsonrpc":"2.0","id":1,"method":"unencodable"}` + "\n", cid("1", "-32603")},
		{"compact result sent as is", false, `{"jsonrpc":"2.0","id":1,"method":"compact"}` + "\n", `{"jsonrpc":"2.0","id":1,"result":{"a":[1,"x y"]}}` + "\n"},
		{"no html escaping", false, req("1", "html"), `{"jsonrpc":"2.0","id":1,"result":{"s":"<a&b>"}}` + "\n"},
		{"no response", false, `{"jsonrpc":"2.0","id":1,"method":"silent"}` + "\n", ""},
		{"params echoed compact", false, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{ "a" : [ 1, 2 ] }}` + "\n", `{"jsonrpc":"2.0","id":1,"result":{"a":[1,2]}}` + "\n"},
		// The dispatcher's decisions.
		{"dispatcher refusal", false, req("1", "denied"), cid("1", "-32002")},
		{"dispatcher refusal client cid", false, `{"jsonrpc":"2.0","id":1,"method":"denied","params":{"_meta":{"correlationId":"c-3"}}}` + "\n", errLine("1", "-32002", "c-3")},
		{"close after the response", false, req("1", "ping") + req("2", "bye") + req("3", "ping"),
			okLine("1") + `{"jsonrpc":"2.0","id":2,"result":"bye"}` + "\n"},
		// Notifications never get a response.
		{"notification", false, `{"jsonrpc":"2.0","method":"ping"}` + "\n", ""},
		{"unknown notification", false, `{"jsonrpc":"2.0","method":"nope","params":[1]}` + "\n", ""},
		{"notification panic then serve", false, `{"jsonrpc":"2.0","method":"panic"}` + "\n" + req("2", "ping"), okLine("2")},
		{"unmatched response dropped", false, `{"jsonrpc":"2.0","id":99,"result":{}}` + "\n", ""},
		{"unmatched error response dropped", false, `{"jsonrpc":"2.0","id":99,"error":{"code":-1,"message":"m"}}` + "\n", ""},
		// Batches.
		{"batch refused", false, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n", cid("null", "-32600")},
		{"batch invalid json", true, `[{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", cid("null", "-32700")},
		{"batch invalid json even when refused", false, `[{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", cid("null", "-32700")},
		{"batch empty", true, "[]\n", cid("null", "-32600")},
		{"batch mixed", true,
			`[{"jsonrpc":"2.0","id":1,"method":"ping"},1,{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","id":2,"method":"nope"}]` + "\n",
			`[{"jsonrpc":"2.0","id":1,"result":{}},` + strings.TrimSuffix(cid("null", "-32600"), "\n") + "," +
				strings.TrimSuffix(cid("2", "-32601"), "\n") + "]\n"},
		{"batch element keeps client cid", true,
			`[{"jsonrpc":"2.0","id":1,"method":"nope","params":{"_meta":{"correlationId":"c-4"}}}]` + "\n",
			"[" + strings.TrimSuffix(errLine("1", "-32601", "c-4"), "\n") + "]\n"},
		{"batch of notifications", true, `[{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","method":"x"}]` + "\n", ""},
		{"batch of silent requests", true, `[{"jsonrpc":"2.0","id":1,"method":"silent"}]` + "\n", ""},
		{"batch duplicate id inside", true, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n",
			`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":1,"result":{}}]` + "\n"},
		{"batch close after", true, `[{"jsonrpc":"2.0","id":1,"method":"bye"},{"jsonrpc":"2.0","id":2,"method":"ping"}]` + "\n" + req("3", "ping"),
			`[{"jsonrpc":"2.0","id":1,"result":"bye"},{"jsonrpc":"2.0","id":2,"result":{}}]` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := serveAll(t, newTestDisp(tt.batch), Options{}, LineOptions{}, tt.in)
			if !golden(tt.want).MatchString(got) {
				t.Errorf("input %.200q\n got: %.400s\nwant: %.400s", tt.in, got, tt.want)
			}
			for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				if line != "" && !json.Valid([]byte(line)) {
					t.Errorf("output line is not valid JSON: %q", line)
				}
			}
		})
	}
}

// TestNotificationsReachTheDispatcherInOrder: notifications, valid ones
// only, reach Notification in arrival order; a panic in one is recovered.
func TestNotificationsReachTheDispatcherInOrder(t *testing.T) {
	d := newTestDisp(true)
	in := `{"jsonrpc":"2.0","method":"a"}` + "\n" +
		`{"jsonrpc":"2.0","method":"panic"}` + "\n" +
		`{"jsonrpc":"2.0","Method":"bad"}` + "\n" +
		`[{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","method":"c","params":{}}]` + "\n" +
		`{"jsonrpc":"2.0","method":"d","params":[1]}` + "\n"
	serveAll(t, d, Options{}, LineOptions{}, in)
	if got := strings.Join(d.notifications(), ","); got != "a,b,c,d" {
		t.Fatalf("notifications %s, want a,b,c,d", got)
	}
}

func TestLineTooLong(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"echo","params":["` + strings.Repeat("a", 300) + `"]}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	got := serveAll(t, newTestDisp(false), Options{}, LineOptions{MaxMessageBytes: 100}, in)
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"M","data":{"correlationId":"conn-cid","maxMessageBytes":100}}}` + "\n" +
		okLine("2")
	if !golden(want).MatchString(got) {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestErrorDataDefault: without Options.ErrorData, an error carries the
// data it has, and no other.
func TestErrorDataDefault(t *testing.T) {
	in := req("1", "nope") + `{"jsonrpc":"2.0","id":2,"method":"echo","params":["` + strings.Repeat("a", 300) + `"]}` + "\n"
	var out syncBuffer
	c := NewConn(NewLine(strings.NewReader(in), &out, LineOptions{MaxMessageBytes: 100}), newTestDisp(false), Options{})
	if err := c.Serve(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"M"}}` + "\n" +
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"M","data":{"maxMessageBytes":100}}}` + "\n"
	if got := out.String(); !golden(want).MatchString(got) {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
