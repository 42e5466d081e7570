package main

// Hostile input through the real binary: whatever arrives, the
// server answers what JSON-RPC says (or stays silent), never crashes, never
// writes anything but protocol, and keeps serving — every case ends with a
// ping that must be answered.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// hostileCase is one input line and what the server must answer.
type hostileCase struct {
	name string
	line string // sent followed by "\n" (unless raw)
	raw  bool   // send line as is, without adding "\n"
	// id is the raw id the error must carry ("null" for none), and code
	// its error code; code 0 means a success response; silent means no
	// response at all.
	id     string
	code   int
	silent bool
}

// runHostile sends each case to p, checks the answer, then checks that a
// ping is still answered.
func runHostile(t *testing.T, p *wiretest.Proc, cases []hostileCase) {
	t.Helper()
	for i, c := range cases {
		if c.raw {
			p.SendRaw([]byte(c.line))
		} else {
			p.Send(c.line)
		}
		switch {
		case c.silent:
		case c.code == 0:
			expectResult(t, p, c.id)
		default:
			line := p.Expect(t)
			if !strings.Contains(line, `"code":`+fmt.Sprint(c.code)) {
				t.Fatalf("%s: got %s, want error %d", c.name, clip(line), c.code)
			}
			checkError(t, line, c.id, c.code)
		}
		pingOK(t, p, fmt.Sprintf(`"after-%d"`, i))
	}
}

// hostileGroup runs cases on a fresh process in STARTING and in RUNNING.
func hostileGroup(t *testing.T, cases []hostileCase) {
	t.Helper()
	t.Run("STARTING", func(t *testing.T) {
		t.Parallel()
		p := start(t)
		runHostile(t, p, cases)
		finish(t, p)
	})
	t.Run("RUNNING", func(t *testing.T) {
		t.Parallel()
		p := running(t, latestRevision)
		runHostile(t, p, cases)
		finish(t, p)
	})
}

func TestHostileMalformedJSON(t *testing.T) {
	t.Parallel()
	var cases []hostileCase
	for _, line := range []string{
		`{`,
		`}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}garbage`,
		`{"jsonrpc":"2.0","id":1,"method":"ping",}`,
		`{'jsonrpc':'2.0','id':1,'method':'ping'}`,
		`{jsonrpc:"2.0",id:1,method:"ping"}`,
		`{"jsonrpc":"2.0","id":01,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":NaN,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping\x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"p` + "\t" + `ing"}`,
		`not json at all`,
		`[1,]`,
		`[`,
		`"unterminated`,
		`nul`,
		`--1`,
	} {
		cases = append(cases, hostileCase{name: line, line: line, id: "null", code: -32700})
	}
	hostileGroup(t, cases)
}

func TestHostileWrongTypes(t *testing.T) {
	t.Parallel()
	inv := func(line, id string) hostileCase {
		return hostileCase{name: line, line: line, id: id, code: -32600}
	}
	hostileGroup(t, []hostileCase{
		inv(`{"jsonrpc":2,"id":1,"method":"ping"}`, "1"),
		inv(`{"jsonrpc":"2.1","id":1,"method":"ping"}`, "1"),
		inv(`{"jsonrpc":"1.0","id":1,"method":"ping"}`, "1"),
		inv(`{"jsonrpc":null,"id":1,"method":"ping"}`, "1"),
		inv(`{"id":1,"method":"ping"}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"method":1}`, "1"),
		inv(`{"jsonrpc":"2.0","id":"a","method":null}`, `"a"`),
		inv(`{"jsonrpc":"2.0","id":1,"method":["ping"]}`, "1"),
		inv(`{"jsonrpc":"2.0","id":{},"method":"ping"}`, "null"),
		inv(`{"jsonrpc":"2.0","id":[],"method":"ping"}`, "null"),
		inv(`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, "null"),
		inv(`{"jsonrpc":"2.0","id":true,"method":"ping"}`, "null"),
		inv(`{"jsonrpc":"2.0","id":false,"method":"ping"}`, "null"),
		inv(`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"method":"ping","params":1}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"method":"ping","params":true}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1}`, "1"),
		inv(`{"jsonrpc":"2.0"}`, "null"),
		inv(`{}`, "null"),
		inv(`{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"error":"bad"}`, "1"),
		inv(`{"jsonrpc":"2.0","result":{}}`, "null"),
		inv(`1`, "null"),
		inv(`1e700`, "null"), // valid JSON, only too big for a float64
		inv(`-1e700`, "null"),
		inv(`{"jsonrpc":"2.0","id":1,"error":{"Code":-1,"message":"x"}}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"error":{"code":"-32601","message":"x"}}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`, "1"),
		inv(`"ping"`, "null"),
		inv(`null`, "null"),
		inv(`true`, "null"),
		// A notification (no id) with wrong types is an invalid request:
		// JSON-RPC answers it with id null.
		inv(`{"jsonrpc":"2.0","method":5}`, "null"),
	})
}

func TestHostileDuplicateAndCaseVariantKeys(t *testing.T) {
	t.Parallel()
	inv := func(line, id string) hostileCase {
		return hostileCase{name: line, line: line, id: id, code: -32600}
	}
	hostileGroup(t, []hostileCase{
		inv(`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, "null"),
		inv(`{"jsonrpc":"2.0","id":1,"id":1,"method":"ping"}`, "null"),
		inv(`{"jsonrpc":"2.0","id":1,"method":"ping","method":"ping"}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}`, "1"),
		inv(`{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{},"params":{}}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"Method":"ping"}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"method":"ping","Method":"shutdown"}`, "1"),
		inv(`{"jsonrpc":"2.0","ID":1,"method":"ping"}`, "null"),
		inv(`{"jsonrpc":"2.0","id":1,"ID":2,"method":"ping"}`, "1"),
		inv(`{"JSONRPC":"2.0","id":1,"method":"ping"}`, "1"),
		inv(`{"jsonrpc":"2.0","JSONRPC":"1.0","id":1,"method":"ping"}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"method":"ping","PARAMS":{}}`, "1"),
		inv(`{"jsonrpc":"2.0","id":1,"method":"ping","Result":{}}`, "1"),
		// Escapes spell the same key: still a duplicate.
		inv(`{"jsonrpc":"2.0","id":1,"\u006dethod":"ping","method":"ping"}`, "1"),
		// Unknown members that are not envelope names are ignored.
		{name: "unknown member", line: `{"jsonrpc":"2.0","id":1,"method":"ping","methods":"x","Id2":3}`, id: "1"},
	})
}

func TestHostileIDsEchoedByteForByte(t *testing.T) {
	t.Parallel()
	long := `"` + strings.Repeat("i", 10000) + `"`
	var cases []hostileCase
	for _, id := range []string{
		`1e400`,
		`-1e400`,
		`9007199254740993`,
		`123456789012345678901234567890`,
		`-123456789012345678901234567890.000000000000000001`,
		`1.0`,
		`1.50`,
		`1E2`,
		`-0`,
		`0`,
		`"x"`,
		`""`,
		`"\u0041\n\"\\"`,
		`"é😀"`,
		`"\ud83d\ude00"`,
		long,
	} {
		cases = append(cases, hostileCase{name: "id " + clip(id), line: `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`, id: id})
	}
	// Also in error responses.
	cases = append(cases,
		hostileCase{name: "1e400 error", line: `{"jsonrpc":"2.0","id":1e400,"method":7}`, id: "1e400", code: -32600},
		hostileCase{name: "1.0 error", line: `{"jsonrpc":"2.0","id":1.0,"method":"ping","params":7}`, id: "1.0", code: -32600},
	)
	hostileGroup(t, cases)

	// The same id in the error of an unknown method, in RUNNING.
	t.Run("unknown method", func(t *testing.T) {
		t.Parallel()
		p := running(t, latestRevision)
		runHostile(t, p, []hostileCase{
			{name: "big", line: `{"jsonrpc":"2.0","id":9007199254740993,"method":"x"}`, id: "9007199254740993", code: -32601},
			{name: "long", line: `{"jsonrpc":"2.0","id":` + long + `,"method":"x"}`, id: long, code: -32601},
		})
		finish(t, p)
	})
}

func TestHostileInvalidUTF8AndNUL(t *testing.T) {
	t.Parallel()
	parse := func(name, line string) hostileCase {
		return hostileCase{name: name, line: line, id: "null", code: -32700}
	}
	hostileGroup(t, []hostileCase{
		parse("0xff in a string", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"a`+"\xff"+`b"}}`),
		parse("0xff in the method", `{"jsonrpc":"2.0","id":1,"method":"pi`+"\xff"+`ng"}`),
		parse("0xff in a key", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"`+"\xff"+`":1}}`),
		parse("overlong NUL", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`+"\xc0\x80"+`"}}`),
		parse("surrogate half", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`+"\xed\xa0\x80"+`"}}`),
		parse("truncated sequence", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`+"\xe2\x82"+`"}}`),
		parse("0xff alone", "\xff"),
		parse("BOM", "\xef\xbb\xbf"+`{"jsonrpc":"2.0","id":1,"method":"ping"}`),
		parse("NUL in a string", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"a`+"\x00"+`b"}}`),
		parse("NUL between tokens", `{"jsonrpc":"2.0",`+"\x00"+`"id":1,"method":"ping"}`),
		parse("NUL after the object", `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\x00"),
		parse("NUL alone", "\x00"),
		parse("raw control character", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`+"\x1b[2J"+`"}}`),
		// Escaped, the same characters are fine.
		{name: "escaped NUL", line: `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"a\u0000b"}}`, id: "1"},
		{name: "escaped lone surrogate", line: `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}`, id: "1"},
	})
}

func TestHostileDeepNesting(t *testing.T) {
	t.Parallel()
	arrays := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	objects := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	tests := []struct {
		name string
		line string
	}{
		{"10,000 arrays in params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + arrays(10000) + `}`},
		{"10,000 objects in params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + objects(10000) + `}`},
		{"100,000 arrays in params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + arrays(100000) + `}`},
		{"10,000 arrays as the line", arrays(10000)},
		{"100,000 arrays as the line", arrays(100000)},
		{"1,000,000 unclosed arrays", strings.Repeat("[", 1000000)},
		{"100,000 objects as the line", objects(100000)},
		{"deep nesting in the id", `{"jsonrpc":"2.0","id":` + arrays(20000) + `,"method":"ping"}`},
		{"9,000 arrays in params (within the limit)", `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + arrays(9000) + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := start(t)
			p.Send(tt.line)
			// A parse error, an invalid request (a batch before initialize),
			// or a correct answer — never a crash or a hang.
			line := p.Expect(t)
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("answer is not one object: %s", clip(line))
			}
			switch {
			case m["result"] != nil:
				if _, err := wiretest.CheckResult(line, "1"); err != nil {
					t.Fatal(err)
				}
			case strings.Contains(line, `"code":-32700`):
				checkError(t, line, "null", -32700)
			case strings.Contains(line, `"code":-32600`):
				checkError(t, line, "null", -32600)
			default:
				t.Fatalf("unexpected answer: %s", clip(line))
			}
			pingOK(t, p, "2")
			finish(t, p)
		})
	}
}

func TestHostileOverLongLines(t *testing.T) {
	t.Parallel()
	checkLimit := func(t *testing.T, p *wiretest.Proc, limit int) {
		t.Helper()
		e := expectError(t, p, "null", -32600)
		if got := fmt.Sprint(errData(e)["maxMessageBytes"]); got != fmt.Sprint(limit) {
			t.Errorf("data.maxMessageBytes = %s, want %d", got, limit)
		}
		if msg := e["message"].(string); !strings.Contains(msg, fmt.Sprint(limit)) {
			t.Errorf("message %q does not name the limit %d", msg, limit)
		}
	}
	// padded returns a ping of exactly n bytes.
	padded := func(id string, n int) string {
		head := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":{"pad":"`
		const tail = `"}}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}

	t.Run("1024-byte limit", func(t *testing.T) {
		t.Parallel()
		p := start(t, "MCPRT_TRANSPORT_MAX_MESSAGE_BYTES=1024")
		p.Send(padded("1", 5000))
		checkLimit(t, p, 1024)
		pingOK(t, p, "2")
		// Exactly at the limit is accepted, one byte more is not; a CRLF
		// terminator does not count.
		p.Send(padded("3", 1024))
		expectResult(t, p, "3")
		p.SendRaw([]byte(padded("4", 1024) + "\r\n"))
		expectResult(t, p, "4")
		p.Send(padded("5", 1025))
		checkLimit(t, p, 1024)
		// Garbage over the limit is the same error (not a parse error).
		p.Send(strings.Repeat("\xff", 3000))
		checkLimit(t, p, 1024)
		// Several over-long lines in one write, then a good one.
		p.SendRaw([]byte(padded("6", 2000) + "\n" + padded("7", 70000) + "\n" + padded("8", 1000) + "\n"))
		checkLimit(t, p, 1024)
		checkLimit(t, p, 1024)
		expectResult(t, p, "8")
		pingOK(t, p, "9")
		finish(t, p)
	})
	t.Run("default 4 MiB limit", func(t *testing.T) {
		t.Parallel()
		p := start(t)
		p.Send(padded("1", 5<<20))
		checkLimit(t, p, 4<<20)
		pingOK(t, p, "2")
		p.Send(padded("3", 4<<20)) // exactly the limit
		expectResult(t, p, "3")
		pingOK(t, p, "4")
		finish(t, p)
	})
	t.Run("over-long line at EOF", func(t *testing.T) {
		t.Parallel()
		p := start(t, "MCPRT_TRANSPORT_MAX_MESSAGE_BYTES=1024")
		pingOK(t, p, "1")
		p.SendRaw([]byte(strings.Repeat("x", 4000))) // no newline
		p.CloseStdin()
		if code := p.Wait(t); code != 0 {
			t.Fatalf("exit code %d, want 0", code)
		}
		p.ExpectSilence(t, 0)
		checkLogs(t, p)
	})
}

func TestHostileLineEndingsAndBlankLines(t *testing.T) {
	t.Parallel()
	silent := func(name, raw string) hostileCase { return hostileCase{name: name, line: raw, raw: true, silent: true} }
	hostileGroup(t, []hostileCase{
		{name: "CRLF", line: `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r\n", raw: true, id: "1"},
		{name: "CRLF error", line: `{"jsonrpc":"2.0","id":2,"method":5}` + "\r\n", raw: true, id: "2", code: -32600},
		{name: "spaces around", line: "  \t" + `{"jsonrpc":"2.0","id":3,"method":"ping"}` + " \t \r\n", raw: true, id: "3"},
		silent("empty line", "\n"),
		silent("CRLF only", "\r\n"),
		silent("spaces", "     \n"),
		silent("tabs", "\t\t\n"),
		silent("spaces and tabs, CRLF", " \t \t\r\n"),
		silent("many blank lines", strings.Repeat("\n \n\t\n\r\n", 1000)),
		// A lone CR is not a line ending and not blank: a parse error.
		{name: "lone CR", line: "\r\r\n", raw: true, id: "null", code: -32700},
		// Vertical tab and form feed are not JSON whitespace.
		{name: "form feed", line: "\f\n", raw: true, id: "null", code: -32700},
		// Two messages on one line are one parse error.
		{name: "two messages", line: `{"jsonrpc":"2.0","id":4,"method":"ping"}{"jsonrpc":"2.0","id":5,"method":"ping"}` + "\n", raw: true, id: "null", code: -32700},
	})
}

func TestHostileFloodOfPings(t *testing.T) {
	t.Parallel()
	const n = 10000
	p := running(t, latestRevision)
	written := make(chan struct{})
	go func() {
		defer close(written)
		// Written from another goroutine while the test reads, in chunks,
		// as a client pipelining requests would.
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
			if b.Len() > 32<<10 {
				p.SendRaw([]byte(b.String()))
				b.Reset()
			}
		}
		p.SendRaw([]byte(b.String()))
	}()
	seen := make([]bool, n)
	for range n {
		line := p.Expect(t)
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.ID == nil || string(m.Result) != "{}" {
			t.Fatalf("not a ping answer: %s", clip(line))
		}
		if *m.ID < 0 || *m.ID >= n || seen[*m.ID] {
			t.Fatalf("id %d out of range or answered twice", *m.ID)
		}
		seen[*m.ID] = true
	}
	<-written
	pingOK(t, p, `"last"`)
	finish(t, p)
}

func TestHostileHalfWrittenLineAtEOF(t *testing.T) {
	t.Parallel()
	for _, tail := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"pi`,
		`{`,
		"\xff\x00",
	} {
		t.Run(clip(tail), func(t *testing.T) {
			t.Parallel()
			p := running(t, latestRevision)
			pingOK(t, p, "0")
			p.SendRaw([]byte(tail))
			p.CloseStdin()
			if code := p.Wait(t); code != 0 {
				t.Fatalf("exit code %d, want 0\nstderr:\n%s", code, p.Stderr())
			}
			p.ExpectSilence(t, 0) // nothing was written for the fragment
			checkLogs(t, p)
		})
	}
}

func TestHostileDuplicateInFlightID(t *testing.T) {
	t.Parallel()
	p := running(t, latestRevision, "MCPRT_SERVER_MODE=TEST")
	requireSleepFixture(t, p)
	p.Send(sleepCall("7", 60000, false))
	// A request for a served method reusing id 7 while it is in flight is
	// refused with that id. (An unknown method with that id is answered
	// -32601 by the router before the in-flight check; the engine's own
	// tests pin that order.)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		sleepCall("7", 1, false),
	} {
		p.Send(line)
		e := expectError(t, p, "7", -32600)
		if msg := e["message"].(string); !strings.Contains(msg, "in flight") {
			t.Errorf("message %q does not say the id is in flight", msg)
		}
	}
	// Ids are compared by their exact JSON text: these are other ids.
	for _, id := range []string{`"7"`, `7.0`, `70`, `-7`} {
		pingOK(t, p, id)
	}
	// Cancelled, the request gets no answer at all.
	p.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"test"}}`)
	pingOK(t, p, "8")
	p.ExpectSilence(t, 200*time.Millisecond)
	finish(t, p)
}
