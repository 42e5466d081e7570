package main

// Correlation ids in the error data of protocol errors.

import (
	"fmt"
	"strings"
	"testing"
)

// --- correlation ids in error data -------------------------------

func TestErrorCorrelationID(t *testing.T) {
	t.Parallel()
	p := running(t, latestRevision)
	cid := connCID(t, p)
	max := strings.Repeat("c", 128)
	multi := strings.Repeat("é", 64) // 128 bytes
	tests := []struct {
		name, params, want string
	}{
		{"client id", `{"_meta":{"correlationId":"abc"}}`, "abc"},
		{"128 bytes", `{"_meta":{"correlationId":"` + max + `"}}`, max},
		{"128 bytes of UTF-8", `{"_meta":{"correlationId":"` + multi + `"}}`, multi},
		{"129 bytes", `{"_meta":{"correlationId":"` + max + `d"}}`, cid},
		{"130 bytes of UTF-8", `{"_meta":{"correlationId":"` + multi + `é"}}`, cid},
		{"empty", `{"_meta":{"correlationId":""}}`, cid},
		{"number", `{"_meta":{"correlationId":42}}`, cid},
		{"null", `{"_meta":{"correlationId":null}}`, cid},
		{"object", `{"_meta":{"correlationId":{"a":"b"}}}`, cid},
		{"meta not an object", `{"_meta":"abc"}`, cid},
		{"case variant key", `{"_meta":{"CorrelationId":"abc"}}`, cid},
		{"no meta", `{"x":1}`, cid},
		{"params array", `["abc"]`, cid},
		{"no params", ``, cid},
	}
	for i, tt := range tests {
		id := fmt.Sprint(i + 1)
		params := ""
		if tt.params != "" {
			params = `,"params":` + tt.params
		}
		p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"no/such/method"` + params + `}`)
		e := expectError(t, p, id, -32601)
		if got := errData(e)["correlationId"]; got != tt.want {
			t.Errorf("%s: correlationId %q, want %q", tt.name, got, tt.want)
		}
	}
	// Other protocol errors read the client's id too, when the message
	// has params: an invalid request, initialize again.
	p.Send(`{"jsonrpc":"2.0","id":50,"method":7,"params":{"_meta":{"correlationId":"abc"}}}`)
	if got := errData(expectError(t, p, "50", -32600))["correlationId"]; got != "abc" {
		t.Errorf("invalid request: correlationId %q, want abc", got)
	}
	p.Send(`{"jsonrpc":"2.0","id":51,"method":"initialize","params":{"protocolVersion":"2025-11-25","_meta":{"correlationId":"abc"}}}`)
	if got := errData(expectError(t, p, "51", -32600))["correlationId"]; got != "abc" {
		t.Errorf("initialize again: correlationId %q, want abc", got)
	}
	// A parse error has no readable params: the connection's id.
	p.Send(`{"jsonrpc":"2.0","id":52,"method":"x","params":{"_meta":{"correlationId":"abc"}}`)
	if got := errData(expectError(t, p, "null", -32700))["correlationId"]; got != cid {
		t.Errorf("parse error: correlationId %q, want the connection's %q", got, cid)
	}
	finish(t, p)
}
