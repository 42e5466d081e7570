package mcp

// Property 2: tools/call never compiles a schema; with the schema and instance generators.

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
)

// ---------------------------------------------------------------------------
// 2. No schema is compiled during a call.

const (
	tpCompileSeed    = 7002
	tpCompileServers = 12
	tpCompileCalls   = 300 // per server
	tpCompileLimit   = 8192
)

// tpNode is a generated schema with the knowledge to make valid and
// invalid instances of it.
type tpNode struct {
	kind     string // string, integer, number, boolean, array, object, anyOf, ref
	lo, hi   int    // integer bounds; string length bounds
	pattern  bool   // string: "^[a-z]*$"
	enum     []string
	items    *tpNode
	maxItems int // 0 for none
	props    []tpProp
	closed   bool // additionalProperties: false
	patternX bool // patternProperties {"^x_": integer}
	ref      string
}

type tpProp struct {
	name     string
	node     *tpNode
	required bool
}

// tpSchema is a generated tool schema: an object root, definitions.
type tpSchema struct {
	root    *tpNode
	defs    map[string]*tpNode
	draft07 bool
}

var tpPropNames = []string{"a", "b", "count", "name", "tags", "x y", "é", "nested", "flag", "n1", "_meta"}

func tpGenNode(c *propRand, s *tpSchema, depth int) *tpNode {
	k := c.Intn(9)
	if depth <= 0 && (k == 4 || k == 5) {
		k = c.Intn(4)
	}
	switch k {
	case 0:
		n := &tpNode{kind: "string", lo: c.Intn(3)}
		n.hi = n.lo + c.Intn(6)
		n.pattern = c.Intn(3) == 0
		if c.Intn(5) == 0 {
			n.enum = []string{"red", "green", "blue"}[:1+c.Intn(3)]
		}
		return n
	case 1:
		lo := c.Intn(200) - 100
		return &tpNode{kind: "integer", lo: lo, hi: lo + c.Intn(1000)}
	case 2:
		return &tpNode{kind: "number"}
	case 3:
		return &tpNode{kind: "boolean"}
	case 4:
		n := &tpNode{kind: "array", items: tpGenNode(c, s, depth-1)}
		if c.RandBool() {
			n.maxItems = 1 + c.Intn(4)
		}
		return n
	case 5:
		return tpGenObject(c, s, depth-1)
	case 6:
		return &tpNode{kind: "anyOf"}
	case 7:
		name := "d" + strconv.Itoa(len(s.defs))
		if depth > 0 && len(s.defs) < 3 {
			s.defs[name] = nil // reserve the name: the definition may hold more
			s.defs[name] = tpGenNode(c, s, depth-1)
			return &tpNode{kind: "ref", ref: name}
		}
	}
	return &tpNode{kind: "string", hi: 8}
}

func tpGenObject(c *propRand, s *tpSchema, depth int) *tpNode {
	n := &tpNode{kind: "object", closed: c.Intn(3) == 0, patternX: c.Intn(4) == 0}
	names := slices.Clone(tpPropNames)
	c.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for _, name := range names[:1+c.Intn(5)] {
		n.props = append(n.props, tpProp{name: name, node: tpGenNode(c, s, depth), required: c.RandBool()})
	}
	return n
}

// json writes the node's schema.
func (n *tpNode) json(s *tpSchema) string {
	switch n.kind {
	case "string":
		parts := []string{`"type":"string"`, `"minLength":` + strconv.Itoa(n.lo), `"maxLength":` + strconv.Itoa(n.hi)}
		if n.pattern {
			parts = append(parts, `"pattern":"^[a-z]*$"`)
		}
		if n.enum != nil {
			e, _ := json.Marshal(n.enum)
			parts = []string{`"type":"string"`, `"enum":` + string(e)}
		}
		return "{" + strings.Join(parts, ",") + "}"
	case "integer":
		return `{"type":"integer","minimum":` + strconv.Itoa(n.lo) + `,"maximum":` + strconv.Itoa(n.hi) + `}`
	case "number", "boolean":
		return `{"type":"` + n.kind + `"}`
	case "array":
		out := `{"type":"array","items":` + n.items.json(s)
		if n.maxItems > 0 {
			out += `,"maxItems":` + strconv.Itoa(n.maxItems)
		}
		return out + "}"
	case "anyOf":
		return `{"anyOf":[{"type":"string"},{"type":"integer"}]}`
	case "ref":
		if s.draft07 {
			return `{"$ref":"#/definitions/` + n.ref + `"}`
		}
		return `{"$ref":"#/$defs/` + n.ref + `"}`
	}
	var props, req []string
	for _, p := range n.props {
		props = append(props, quoteString(p.name)+":"+p.node.json(s))
		if p.required {
			req = append(req, quoteString(p.name))
		}
	}
	out := `{"type":"object","properties":{` + strings.Join(props, ",") + `}`
	if len(req) > 0 {
		out += `,"required":[` + strings.Join(req, ",") + `]`
	}
	if n.closed {
		out += `,"additionalProperties":false`
	}
	if n.patternX {
		out += `,"patternProperties":{"^x_":{"type":"integer"}}`
	}
	return out + "}"
}

// schema writes the whole tool schema.
func (s *tpSchema) schema() string {
	root := s.root.json(s)
	var extra []string
	if s.draft07 {
		extra = append(extra, `"$schema":"http://json-schema.org/draft-07/schema#"`)
	}
	if len(s.defs) > 0 {
		var defs []string
		for _, name := range slices.Sorted(maps.Keys(s.defs)) {
			defs = append(defs, quoteString(name)+":"+s.defs[name].json(s))
		}
		key := `"$defs"`
		if s.draft07 {
			key = `"definitions"`
		}
		extra = append(extra, key+":{"+strings.Join(defs, ",")+"}")
	}
	if len(extra) == 0 {
		return root
	}
	return "{" + strings.Join(extra, ",") + "," + root[1:]
}

// valid returns an instance of n.
func (n *tpNode) valid(c *propRand, s *tpSchema) string {
	switch n.kind {
	case "string":
		if n.enum != nil {
			return quoteString(n.enum[c.Intn(len(n.enum))])
		}
		b := make([]byte, n.lo+c.Intn(n.hi-n.lo+1))
		for i := range b {
			b[i] = byte('a' + c.Intn(26))
		}
		return quoteString(string(b))
	case "integer":
		return strconv.Itoa(n.lo + c.Intn(n.hi-n.lo+1))
	case "number":
		return []string{"0", "-1.5", "3", "2.5e3", "1e-3"}[c.Intn(5)]
	case "boolean":
		return []string{"true", "false"}[c.Intn(2)]
	case "array":
		k := c.Intn(4)
		if n.maxItems > 0 {
			k = min(k, n.maxItems)
		}
		items := make([]string, k)
		for i := range items {
			items[i] = n.items.valid(c, s)
		}
		return "[" + strings.Join(items, ",") + "]"
	case "anyOf":
		if c.RandBool() {
			return `"either"`
		}
		return "42"
	case "ref":
		return s.defs[n.ref].valid(c, s)
	}
	var members []string
	for _, p := range n.props {
		if p.required || c.RandBool() {
			members = append(members, quoteString(p.name)+":"+p.node.valid(c, s))
		}
	}
	if !n.closed && c.Intn(3) == 0 {
		members = append(members, `"extra_k":[1,{"z":null}]`)
	}
	if n.patternX && c.Intn(3) == 0 {
		members = append(members, `"x_1":7`)
	}
	c.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	return "{" + strings.Join(members, ",") + "}"
}

// wrong returns a value of a JSON type n does not accept.
func (n *tpNode) wrong(s *tpSchema) string {
	if n.kind == "ref" {
		return s.defs[n.ref].wrong(s)
	}
	if n.kind == "boolean" {
		return `"nope"`
	}
	return "true"
}

// invalid returns an object that does not match the object node n, or ""
// when the generator knows no way to break it.
func (n *tpNode) invalid(c *propRand, s *tpSchema) string {
	var ways []func() string
	for i, p := range n.props {
		if !p.required {
			continue
		}
		ways = append(ways, func() string { // a required member of the wrong type
			return n.with(c, s, i, p.node.wrong(s), "")
		}, func() string { // a required member missing
			return n.with(c, s, i, "", "")
		})
		if p.node.kind == "integer" {
			ways = append(ways, func() string { return n.with(c, s, i, strconv.Itoa(p.node.hi+1), "") })
		}
	}
	if n.closed {
		ways = append(ways, func() string { return n.with(c, s, -1, "", `"not_declared":1`) })
	}
	if n.patternX {
		ways = append(ways, func() string { return n.with(c, s, -1, "", `"x_9":"not an integer"`) })
	}
	if len(ways) == 0 {
		return ""
	}
	return ways[c.Intn(len(ways))]()
}

// with returns a valid instance of n in which member i (if i >= 0) has the
// value v ("" drops it), plus the extra member, if any.
func (n *tpNode) with(c *propRand, s *tpSchema, i int, v, extra string) string {
	var members []string
	for j, p := range n.props {
		switch {
		case j == i && v != "":
			members = append(members, quoteString(p.name)+":"+v)
		case j == i:
		case p.required || c.RandBool():
			members = append(members, quoteString(p.name)+":"+p.node.valid(c, s))
		}
	}
	if extra != "" {
		members = append(members, extra)
	}
	return "{" + strings.Join(members, ",") + "}"
}

// emptyValid reports whether {} matches the object node n.
func (n *tpNode) emptyValid() bool {
	for _, p := range n.props {
		if p.required {
			return false
		}
	}
	return true
}

// tpCompileCall is one generated request and what it must get.
type tpCompileCall struct {
	method string // tools/call or tools/list
	params string
	want   string // "ok", a StructuredError code, or "-32602"
}

// tpCompileCase is a server's tools and the calls made to it.
type tpCompileCase struct {
	schemas []*tpSchema
	calls   []tpCompileCall
	bursts  []int // sizes of the pipelined bursts the calls are sent in
}

func tpCompileGen(cc *tpCompileCase, c *propRand) {
	*cc = tpCompileCase{}
	for range 6 + c.Intn(6) {
		s := &tpSchema{defs: map[string]*tpNode{}, draft07: c.Intn(4) == 0}
		s.root = tpGenObject(c, s, 2)
		cc.schemas = append(cc.schemas, s)
	}
	for len(cc.calls) < tpCompileCalls {
		ti := c.Intn(len(cc.schemas))
		s := cc.schemas[ti]
		name := "t" + strconv.Itoa(ti)
		call := tpCompileCall{method: MethodToolsCall, want: "ok"}
		switch c.Intn(10) {
		case 0, 1, 2: // valid
			call.params = tpParams(name, s.root.valid(c, s), "")
		case 3, 4: // invalid
			if bad := s.root.invalid(c, s); bad != "" {
				call.params, call.want = tpParams(name, bad, ""), string(core.CodeInvalidArgument)
			} else {
				call.params = tpParams(name, s.root.valid(c, s), "")
			}
		case 5: // {} or no arguments
			call.params = tpParams(name, []string{"{}", "", " { } "}[c.Intn(3)], "")
			if !s.root.emptyValid() {
				call.want = string(core.CodeInvalidArgument)
			}
		case 6: // unknown tool
			call.params, call.want = tpParams("nope"+name, s.root.valid(c, s), ""), string(core.CodeNotFound)
		case 7: // over the payload limit (of any tool, known or not)
			if c.RandBool() {
				name = "nope"
			}
			call.params = tpParams(name, `{"big":"`+strings.Repeat("é", tpCompileLimit/2+c.Intn(1000))+`"}`, "")
			call.want = string(core.CodeResourceExhausted)
		case 8: // big, under the limit
			big := `"` + strings.Repeat("z", tpCompileLimit-1500-c.Intn(2000)) + `"`
			if s.root.closed {
				call.params, call.want = tpParams(name, `{"huge_extra":`+big+`}`, ""), string(core.CodeInvalidArgument)
			} else {
				call.params = tpParams(name, s.root.with(c, s, -1, "", `"huge_extra":`+big), "")
			}
		default: // not an object, or tools/list
			if c.RandBool() {
				call = tpCompileCall{method: MethodToolsList, want: "ok"}
			} else {
				call.params, call.want = tpParams(name, tpNonObject(c), ""), "-32602"
			}
		}
		cc.calls = append(cc.calls, call)
	}
	for n := 0; n < len(cc.calls); {
		b := min(1+c.Intn(8), len(cc.calls)-n)
		cc.bursts = append(cc.bursts, b)
		n += b
	}
}

func TestPropertyNoCompileDuringCall(t *testing.T) {
	forEachTransport(t, testPropertyNoCompileDuringCall)
}

func testPropertyNoCompileDuringCall(t *testing.T, tr transportKind) {
	r := newPropRand(propSeed(tpCompileSeed, tr))
	outcomes := map[string]int{}
	for i := range propShare(tpCompileServers) {
		var cc tpCompileCase
		tpCompileGen(&cc, r)
		cfg := testConfig()
		cfg.Limits.MaxPayloadBytes = tpCompileLimit
		cfg.Limits.MaxConcurrentExecutions = 64
		p := newTPConn(t, tr, cfg, Options{}, func(srv *Server) {
			for ti, s := range cc.schemas {
				tool := Tool{Name: "t" + strconv.Itoa(ti), InputSchema: json.RawMessage(s.schema()), Handler: tpNoop}
				if ti%3 == 0 {
					tool.OutputSchema = json.RawMessage(`{"type":"object","additionalProperties":false}`)
				}
				if err := srv.AddTool(tool); err != nil {
					t.Fatalf("server %d: registering %s: %v", i, tool.InputSchema, err)
				}
			}
		}, Version20251125)
		before := p.srv.schemas.compilations()
		if before < int64(len(cc.schemas)) {
			t.Fatalf("server %d: %d compilations for %d tools: the counter does not count", i, before, len(cc.schemas))
		}
		next := 0
		for _, b := range cc.bursts {
			pending := make([]tpPending, b)
			for k := range b {
				call := cc.calls[next+k]
				pending[k] = p.request(call.method, call.params)
			}
			for k := range b {
				call := cc.calls[next+k]
				resp := p.await(pending[k])
				if call.method == MethodToolsList {
					if resp["result"] == nil {
						t.Fatalf("server %d: tools/list: %s", i, tpString(resp))
					}
					continue
				}
				o := tpDecode(t, clip(call.params, 300), resp)
				got := "ok"
				switch {
				case o.rpcCode != 0:
					got = strconv.FormatInt(o.rpcCode, 10)
				case o.isError:
					got = o.code
				}
				if got != call.want {
					t.Fatalf("server %d: %s %s: got %s, want %s: %s", i, call.method, clip(call.params, 400), got, call.want,
						tpString(resp))
				}
				outcomes[got]++
			}
			next += b
			if n := p.srv.schemas.compilations(); n != before {
				t.Fatalf("server %d: %d schema compilations during calls (%d before, %d after)", i, n-before, before, n)
			}
		}
		p.finish()
		if n := p.srv.schemas.compilations(); n != before {
			t.Fatalf("server %d: %d schema compilations during calls", i, n-before)
		}
	}
	t.Logf("%d servers, outcomes %v", propShare(tpCompileServers), outcomes)
}
