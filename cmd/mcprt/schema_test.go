package main

// Every message the server writes in the lifecycle must validate against
// the official JSON schema of the negotiated MCP revision. The schemas are
// published data vendored into testdata/mcp-schema/<rev>/schema.json, so
// these checks run in every clone.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kaptinlin/jsonschema"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// schemaDir returns the official schemas vendored into testdata/mcp-schema
// at the module root. They are part of the module, so their absence is a
// broken checkout and fails the test.
func schemaDir(t *testing.T) string {
	t.Helper()
	root, err := wiretest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "testdata", "mcp-schema")
	if _, err := os.Stat(filepath.Join(dir, latestRevision, "schema.json")); err != nil {
		t.Fatalf("the official MCP schemas vendored in %s are missing: %v", dir, err)
	}
	return dir
}

// mcpSchema validates JSON values against the definitions of one revision's
// schema.json.
type mcpSchema struct {
	rev      string
	base     string // the URI the document was compiled under
	defsKey  string // "definitions" (draft-07) or "$defs" (2020-12)
	dialect  string
	compiler *jsonschema.Compiler
	defs     map[string]json.RawMessage

	mu    sync.Mutex
	cache map[string]*jsonschema.Schema
}

// errNoNetwork is what any attempt to load a remote schema gets.
var errNoNetwork = errors.New("schema tests never fetch anything: every $ref must resolve inside schema.json")

func loadSchema(t *testing.T, dir, rev string) *mcpSchema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rev, "schema.json"))
	if err != nil {
		t.Fatalf("revision %s: %v", rev, err)
	}
	var top struct {
		Schema      string                     `json:"$schema"`
		Defs        map[string]json.RawMessage `json:"$defs"`
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatalf("revision %s: %v", rev, err)
	}
	s := &mcpSchema{rev: rev, dialect: top.Schema, cache: map[string]*jsonschema.Schema{},
		base: "urn:mcprt-test:mcp-schema:" + rev}
	switch {
	case top.Defs != nil:
		s.defsKey, s.defs = "$defs", top.Defs
	case top.Definitions != nil:
		s.defsKey, s.defs = "definitions", top.Definitions
	default:
		t.Fatalf("revision %s: schema.json has neither $defs nor definitions", rev)
	}
	c := jsonschema.NewCompiler()
	deny := func(url string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("%w (asked for %s)", errNoNetwork, url)
	}
	for _, scheme := range []string{"http", "https", "file", "urn", "ftp"} {
		c.RegisterLoader(scheme, deny)
	}
	c.SetAssertFormat(true)
	if _, err := c.Compile(data, s.base); err != nil {
		t.Fatalf("revision %s: compiling schema.json: %v", rev, err)
	}
	s.compiler = c
	return s
}

// schemaFor returns the compiled definition name.
func (s *mcpSchema) schemaFor(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.cache[name]; ok {
		return sch
	}
	if _, ok := s.defs[name]; !ok {
		t.Fatalf("revision %s has no definition %q", s.rev, name)
	}
	wrapper := `{"$schema":` + jsonString(s.dialect) + `,"$ref":` + jsonString(s.base+"#/"+s.defsKey+"/"+name) + `}`
	sch, err := s.compiler.Compile([]byte(wrapper))
	if err != nil {
		t.Fatalf("revision %s: compiling %s: %v", s.rev, name, err)
	}
	s.cache[name] = sch
	return sch
}

// validate reports whether value (JSON text) is valid against definition
// name, with the validator's explanation when it is not.
func (s *mcpSchema) validate(t *testing.T, name string, value []byte) error {
	t.Helper()
	res := s.schemaFor(t, name).ValidateJSON(value)
	if res.IsValid() {
		return nil
	}
	details := res.DetailedErrors()
	paths := make([]string, 0, len(details))
	for path := range details {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	var b strings.Builder
	for _, path := range paths {
		fmt.Fprintf(&b, "%s: %s; ", path, details[path])
	}
	return fmt.Errorf("%s %s: %s", s.rev, name, b.String())
}

// firstDef returns the first of names that the revision defines.
func (s *mcpSchema) firstDef(names ...string) string {
	for _, n := range names {
		if _, ok := s.defs[n]; ok {
			return n
		}
	}
	return ""
}

// checkLine validates one stdout line of a session under this revision.
// resultDefs maps a request id (JSON text) to the definition its result
// must satisfy.
func (s *mcpSchema) checkLine(t *testing.T, line string, resultDefs map[string]string) {
	t.Helper()
	if strings.HasPrefix(line, "[") {
		batchDef := s.firstDef("JSONRPCBatchResponse")
		if batchDef == "" {
			t.Errorf("%s: a batch answer in a revision without batches: %s", s.rev, line)
			return
		}
		if err := s.validate(t, batchDef, []byte(line)); err != nil {
			t.Errorf("%v\n%s", err, line)
		}
		var elems []json.RawMessage
		if err := json.Unmarshal([]byte(line), &elems); err != nil {
			t.Fatal(err)
		}
		for _, e := range elems {
			s.checkLine(t, string(e), resultDefs)
		}
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not an object: %s", line)
	}
	msg := []byte(line)
	if string(m["id"]) == "null" {
		// JSON-RPC 2.0 answers a message whose id cannot be read with
		// "id": null; the MCP schemas type RequestId as string|integer (and
		// 2025-11-25 makes it optional). Validate everything else.
		m["id"] = json.RawMessage(`0`)
		msg, _ = json.Marshal(m)
	}
	if err := s.validate(t, "JSONRPCMessage", msg); err != nil {
		t.Errorf("%v\n%s", err, line)
	}
	switch {
	case m["error"] != nil:
		if err := s.validate(t, s.firstDef("JSONRPCErrorResponse", "JSONRPCError"), msg); err != nil {
			t.Errorf("%v\n%s", err, line)
		}
	case m["result"] != nil:
		if err := s.validate(t, s.firstDef("JSONRPCResultResponse", "JSONRPCResponse"), msg); err != nil {
			t.Errorf("%v\n%s", err, line)
		}
		def, ok := resultDefs[string(m["id"])]
		if !ok {
			t.Fatalf("no result definition for id %s", m["id"])
		}
		if err := s.validate(t, def, m["result"]); err != nil {
			t.Errorf("%v\n%s", err, line)
		}
		if err := s.validate(t, "ServerResult", m["result"]); err != nil {
			t.Errorf("%v\n%s", err, line)
		}
	default:
		t.Errorf("%s: neither result nor error: %s", s.rev, line)
	}
}

// lifecycleScript is what the client sends in the schema test: every
// lifecycle answer the server gives, and which result definition each
// successful answer must satisfy.
func lifecycleScript(rev string) (lines []string, resultDefs map[string]string) {
	resultDefs = map[string]string{
		`1`: "EmptyResult", `"s-1"`: "EmptyResult", `7`: "InitializeResult",
		`9`: "EmptyResult", `20`: "EmptyResult", `21`: "EmptyResult", `99`: "EmptyResult",
	}
	lines = []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,                   // STARTING: {}
		`{"jsonrpc":"2.0","id":"s-1","method":"ping"}`,               // string id
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,             // -32002
		`{"jsonrpc":"2.0","id":3,"method":"initialize"}`,             // -32602
		`{"jsonrpc":"2.0","id":4,"method":"initialize","params":[]}`, // -32602
		`{"jsonrpc":"2.0","id":5,"method":5}`,                        // -32600 with an id
		`{"jsonrpc":"2.0","id":6,"method":"ping"`,                    // -32700, id null
		`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":` + jsonString(rev) +
			`,"capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"schema-test","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":` + jsonString(rev) + `}}`, // -32600
		`{"jsonrpc":"2.0","id":9,"method":"ping"}`,                                                            // INITIALIZING: {}
		`{"jsonrpc":"2.0","id":10,"method":"resources/list"}`,                                                 // -32002
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":11,"method":"no/such/method","params":{"_meta":{"correlationId":"abc"}}}`, // -32601
		`[{"jsonrpc":"2.0","id":20,"method":"ping"},{"jsonrpc":"2.0","id":21,"method":"ping"},{"jsonrpc":"2.0","id":22,"method":"nope"}]`,
		`[]`,
		`{"jsonrpc":"2.0","id":99,"method":"shutdown"}`,
	}
	return lines, resultDefs
}

func TestMessagesValidateAgainstOfficialSchema(t *testing.T) {
	dir := schemaDir(t)
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			s := loadSchema(t, dir, rev)
			lines, resultDefs := lifecycleScript(rev)
			p := start(t, "MCPRT_SERVER_NAME=schema-test", "MCPRT_SERVER_VERSION=1.0.0",
				"MCPRT_SERVER_INSTRUCTIONS=Use the tools.")
			var got []string
			for _, l := range lines {
				p.Send(l)
				if strings.Contains(l, `"notifications/`) {
					continue
				}
				got = append(got, p.Expect(t))
			}
			if code := p.Wait(t); code != 0 {
				t.Fatalf("exit code %d after shutdown", code)
			}
			for _, line := range got {
				s.checkLine(t, line, resultDefs)
			}
			// The messages must cover what the test means to check.
			var sawInit, sawBatch bool
			for _, line := range got {
				sawInit = sawInit || strings.Contains(line, `"serverInfo"`)
				sawBatch = sawBatch || strings.HasPrefix(line, "[")
			}
			if !sawInit || sawBatch != (rev == "2025-03-26") {
				t.Fatalf("unexpected transcript (initialize seen %v, batch answer seen %v):\n%s",
					sawInit, sawBatch, strings.Join(got, "\n"))
			}
		})
	}
}

// TestSchemaValidatorRejects keeps the validation above honest: messages
// that break the schema must fail it (a validator that silently accepted
// everything, e.g. because a $ref did not resolve, would fail here).
func TestSchemaValidatorRejects(t *testing.T) {
	dir := schemaDir(t)
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			s := loadSchema(t, dir, rev)
			resp := s.firstDef("JSONRPCResultResponse", "JSONRPCResponse")
			errDef := s.firstDef("JSONRPCErrorResponse", "JSONRPCError")
			bad := []struct{ def, value string }{
				{resp, `{"jsonrpc":"2.0","id":1,"result":5}`},
				{resp, `{"jsonrpc":"1.0","id":1,"result":{}}`},
				{resp, `{"jsonrpc":"2.0","id":true,"result":{}}`},
				{resp, `{"jsonrpc":"2.0","id":1.5,"result":{}}`},
				{errDef, `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`},
				{errDef, `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`},
				{"InitializeResult", `{"protocolVersion":"2025-11-25","capabilities":{}}`},
				{"InitializeResult", `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":1,"version":"1"}}`},
				{"InitializeResult", `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":"yes"}},"serverInfo":{"name":"a","version":"1"}}`},
				{"EmptyResult", `[]`},
			}
			for _, b := range bad {
				if err := s.validate(t, b.def, []byte(b.value)); err == nil {
					t.Errorf("%s accepted %s", b.def, b.value)
				}
			}
			good := []struct{ def, value string }{
				{resp, `{"jsonrpc":"2.0","id":1,"result":{}}`},
				{errDef, `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"m","data":{"a":1}}}`},
				{"InitializeResult", `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"a","version":"1"}}`},
			}
			for _, g := range good {
				if err := s.validate(t, g.def, []byte(g.value)); err != nil {
					t.Errorf("%s rejected %s: %v", g.def, g.value, err)
				}
			}
		})
	}
}

// TestSchemaRefsStayLocal checks that compiling and using a revision's
// schema never tries to load anything: a $ref outside the document would
// reach the refusing loaders and fail to compile.
func TestSchemaRefsStayLocal(t *testing.T) {
	dir := schemaDir(t)
	for _, rev := range revisions {
		data, err := os.ReadFile(filepath.Join(dir, rev, "schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", rev, err)
			}
			if tok == "$ref" {
				ref, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				if s, _ := ref.(string); !strings.HasPrefix(s, "#") {
					t.Errorf("%s: non-local $ref %v", rev, ref)
				}
			}
		}
	}
}

// TestModernExamplesKeepTheServerServing feeds the official example
// messages of revision 2026-07-28 (the stateless era, not served yet) to the
// server, each compacted to one line: every request gets exactly one answer
// with its id, notifications and responses get none, and the server keeps
// serving. Answers are validated against the 2025-11-25 schema, the
// revision the session negotiates.
func TestModernExamplesKeepTheServerServing(t *testing.T) {
	dir := schemaDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "2026-07-28", "examples", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no 2026-07-28 examples under %s (%v)", dir, err)
	}
	type example struct {
		name, line, id string
		request        bool
	}
	var examples []example
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil || m["jsonrpc"] == nil {
			continue // a bare type, not a message
		}
		if string(m["method"]) == `"subscriptions/listen"` {
			continue // a long-lived request in that era: its answer may never come
		}
		var b bytes.Buffer
		if err := json.Compact(&b, data); err != nil {
			t.Fatal(err)
		}
		_, hasMethod := m["method"]
		_, hasID := m["id"]
		examples = append(examples, example{name: filepath.Base(f), line: b.String(), id: string(m["id"]),
			request: hasMethod && hasID})
	}
	s := loadSchema(t, dir, latestRevision)
	play := func(t *testing.T, p *wiretest.Proc) {
		for i, ex := range examples {
			p.Send(ex.line)
			if ex.request {
				line := p.Expect(t)
				var m map[string]json.RawMessage
				if err := json.Unmarshal([]byte(line), &m); err != nil || string(m["id"]) != ex.id {
					t.Fatalf("%s: answer %s does not carry id %s", ex.name, clip(line), ex.id)
				}
				if err := s.validate(t, "JSONRPCMessage", []byte(line)); err != nil {
					t.Errorf("%s: %v\n%s", ex.name, err, clip(line))
				}
			}
			pingOK(t, p, fmt.Sprintf(`"after-%d"`, i))
		}
	}
	t.Run("STARTING", func(t *testing.T) {
		t.Parallel()
		p := start(t)
		play(t, p)
		finish(t, p)
	})
	t.Run("RUNNING", func(t *testing.T) {
		t.Parallel()
		p := running(t, latestRevision)
		play(t, p)
		finish(t, p)
	})
}
