package jsonrpc

import (
	"encoding/json"
	"strconv"
	"strings"
)

// This file generates the traffic of the property test (property_test.go):
// envelopes with members valid most of the time, duplicated, in other
// cases, or unknown, and lines holding one, a batch of them, invalid JSON,
// an over-long message or nothing.

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
	propMethods = []string{"denied", "echo", "slow", "work", "fail", "boom", "ready", "note", "nope", "", "Echo", "rpc.x"}
	propValidID = []string{"0", "1", "2", "7", "42", "-1", "9007199254740993", "1.0", "-0", "1e3", "0.5", "1E+2",
		`"x"`, `"\u0078"`, `""`, "null"}
	propBadID = []string{"true", "false", "{}", "[]", "[1]", `{"a":1}`}
)

// propGen generates envelopes and lines from a seeded math/rand/v2 source (propgen_test.go).
type propGen struct{ c *propRand }

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
