package main

// Batches, and the messages that get no answer: notifications and client responses.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// --- batches -----------------------------------------------------

func TestBatchesRejectedOutside20250326(t *testing.T) {
	t.Parallel()
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`
	check := func(t *testing.T, p *wiretest.Proc) {
		t.Helper()
		for _, b := range []string{batch, `[]`, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`} {
			p.Send(b)
			e := expectError(t, p, "null", -32600) // one object, not an array
			if msg := e["message"].(string); !strings.Contains(msg, "batch") {
				t.Errorf("message %q does not say batches are not allowed", msg)
			}
		}
	}
	t.Run("before initialize", func(t *testing.T) {
		t.Parallel()
		p := start(t)
		check(t, p)
		// Still STARTING: the rejected batch did not run its elements.
		p.Send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		expectError(t, p, "3", -32002)
		finish(t, p)
	})
	t.Run("INITIALIZING under 2025-03-26", func(t *testing.T) {
		t.Parallel()
		p := start(t)
		initialize(t, p, "1", "2025-03-26")
		// The revision allows batches as soon as it is negotiated.
		p.Send(batch)
		if err := wiretest.Match(`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`, p.Expect(t)); err != nil {
			t.Fatal(err)
		}
		finish(t, p)
	})
	for _, rev := range []string{"2024-11-05", "2025-06-18", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			p := running(t, rev)
			check(t, p)
			finish(t, p)
		})
	}
}

func TestBatchesUnder20250326(t *testing.T) {
	t.Parallel()
	p := running(t, "2025-03-26")

	// Requests, a notification and an invalid element.
	p.Send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},` +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},` +
		`5,` +
		`{"jsonrpc":"2.0","id":"two","method":"no/such/method"},` +
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-03-26"}},` +
		`{"jsonrpc":"2.0","id":4,"method":"ping","params":"x"},` +
		`{"jsonrpc":"2.0","id":5,"method":"ping"}]`)
	line := p.Expect(t)
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(line), &elems); err != nil {
		t.Fatalf("batch response is not an array: %s", line)
	}
	got := map[string]int{} // id → code (0 for a result)
	for _, raw := range elems {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("batch element is not an object: %s", raw)
		}
		code := 0
		if _, ok := m["error"]; ok {
			code = errCode(t, raw)
			checkError(t, string(raw), string(m["id"]), code)
		}
		id := string(m["id"])
		if _, dup := got[id]; dup {
			t.Fatalf("id %s answered twice: %s", id, line)
		}
		got[id] = code
	}
	want := map[string]int{"1": 0, "null": -32600, `"two"`: -32601, "3": -32600, "4": -32600, "5": 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("batch answers %v, want %v\n%s", got, want, line)
	}

	// Only notifications: no response at all (the ping answers next).
	p.Send(`[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},{"jsonrpc":"2.0","method":"x/y"}]`)
	pingOK(t, p, "6")

	// An empty batch: one -32600, not an array.
	p.Send(`[]`)
	expectError(t, p, "null", -32600)

	// A batch of invalid elements: an array of errors.
	p.Send(`[1,"x",null]`)
	if err := wiretest.Match(`[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"*","data":"*"}},`+
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"*","data":"*"}},`+
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"*","data":"*"}}]`, p.Expect(t)); err != nil {
		t.Fatal(err)
	}

	// A batch that is not valid JSON is one parse error.
	p.Send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},`)
	expectError(t, p, "null", -32700)
	finish(t, p)
}

func errCode(t *testing.T, raw []byte) int {
	t.Helper()
	var m struct {
		Error struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("bad error element: %s", raw)
	}
	return m.Error.Code
}

// --- notifications and client responses get no answer ------------

func TestNotificationsNeverAnswered(t *testing.T) {
	t.Parallel()
	silent := []string{
		`{"jsonrpc":"2.0","method":"no/such/notification"}`,
		`{"jsonrpc":"2.0","method":"no/such/notification","params":{"a":[1,2]}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope","reason":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":5}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":[]}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
		`{"jsonrpc":"2.0","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","method":"tools/list"}`,
		// Responses that match no request the server sent: logged, dropped.
		`{"jsonrpc":"2.0","id":77,"result":{}}`,
		`{"jsonrpc":"2.0","id":"s-1","error":{"code":-32601,"message":"no"}}`,
	}
	run := func(t *testing.T, p *wiretest.Proc) {
		for i, line := range silent {
			p.Send(line)
			pingOK(t, p, fmt.Sprint(1000+i)) // the next line must be the ping's answer
		}
	}
	t.Run("STARTING", func(t *testing.T) {
		t.Parallel()
		p := start(t)
		run(t, p)
		// The initialize notification did not initialize anything.
		p.Send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		expectError(t, p, "1", -32002)
		finish(t, p)
	})
	t.Run("RUNNING", func(t *testing.T) {
		t.Parallel()
		p := running(t, latestRevision)
		run(t, p)
		finish(t, p)
	})
}
