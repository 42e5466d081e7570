package mcp

import (
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
)

// The official MCP schemas are published data vendored into
// testdata/mcp-schema/<rev>/schema.json at the module root, so the checks
// that use them run in every clone.

// officialSchemaDir returns the schemas' folder; their absence is a broken
// checkout and fails the test.
func officialSchemaDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "testdata", "mcp-schema")
	if _, err := os.Stat(filepath.Join(dir, LatestVersion, "schema.json")); err != nil {
		t.Fatalf("the official MCP schemas vendored in %s are missing: %v", dir, err)
	}
	return dir
}

// officialSchema validates JSON values against the definitions of one
// revision's schema.json, and tells which members a definition has.
type officialSchema struct {
	rev      string
	base     string
	defsKey  string
	dialect  string
	compiler *jsonschema.Compiler
	defs     map[string]json.RawMessage

	mu    sync.Mutex
	cache map[string]*jsonschema.Schema
}

var errSchemaNetwork = errors.New("schema tests never fetch: every $ref must resolve inside schema.json")

// loadOfficialSchema compiles a revision's schema.json.
func loadOfficialSchema(t *testing.T, dir, rev string) *officialSchema {
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
	s := &officialSchema{rev: rev, dialect: top.Schema, cache: map[string]*jsonschema.Schema{},
		base: "urn:mcprt-mcp-test:schema:" + rev}
	s.defsKey, s.defs = "definitions", top.Definitions
	if top.Defs != nil {
		s.defsKey, s.defs = "$defs", top.Defs
	}
	c := jsonschema.NewCompiler()
	for _, scheme := range []string{"http", "https", "file", "urn", "ftp"} {
		c.RegisterLoader(scheme, func(url string) (io.ReadCloser, error) {
			return nil, fmt.Errorf("%w (asked for %s)", errSchemaNetwork, url)
		})
	}
	if _, err := c.Compile(data, s.base); err != nil {
		t.Fatalf("revision %s: compiling schema.json: %v", rev, err)
	}
	s.compiler = c
	return s
}

// validate checks value (JSON text) against the definition name.
func (s *officialSchema) validate(t *testing.T, name string, value []byte) error {
	t.Helper()
	s.mu.Lock()
	sch, ok := s.cache[name]
	if !ok {
		if _, known := s.defs[name]; !known {
			s.mu.Unlock()
			t.Fatalf("revision %s has no definition %q", s.rev, name)
		}
		wrapper := fmt.Sprintf(`{"$schema":%q,"$ref":%q}`, s.dialect, s.base+"#/"+s.defsKey+"/"+name)
		var err error
		if sch, err = s.compiler.Compile([]byte(wrapper)); err != nil {
			s.mu.Unlock()
			t.Fatalf("revision %s: compiling %s: %v", s.rev, name, err)
		}
		s.cache[name] = sch
	}
	s.mu.Unlock()
	res := sch.ValidateJSON(value)
	if res.IsValid() {
		return nil
	}
	var msgs []string
	for path, msg := range res.DetailedErrors() {
		msgs = append(msgs, path+": "+msg)
	}
	slices.Sort(msgs)
	return fmt.Errorf("%s %s: %s", s.rev, name, strings.Join(msgs, "; "))
}

// node is a piece of a schema.
type node map[string]json.RawMessage

// resolve follows a local $ref to its definition.
func (s *officialSchema) resolve(raw json.RawMessage) node {
	var n node
	_ = json.Unmarshal(raw, &n)
	if ref, ok := n["$ref"]; ok {
		var r string
		_ = json.Unmarshal(ref, &r)
		return s.resolve(s.defs[r[strings.LastIndex(r, "/")+1:]])
	}
	return n
}

// members returns the property names of a schema node.
func (n node) members() []string {
	var props map[string]json.RawMessage
	_ = json.Unmarshal(n["properties"], &props)
	var out []string
	for k := range props {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// contentDefs names the definition of each content block type.
var contentDefs = map[string]string{"text": "TextContent", "image": "ImageContent", "audio": "AudioContent",
	"resource_link": "ResourceLink", "resource": "EmbeddedResource"}

// strictContent checks that a content block (JSON) has only the members
// its definition in this revision names, annotations included: the
// schemas allow extra members, so validation alone would not see a
// member newer than the revision.
func (s *officialSchema) strictContent(t *testing.T, block json.RawMessage) error {
	t.Helper()
	var b map[string]json.RawMessage
	if err := json.Unmarshal(block, &b); err != nil {
		return err
	}
	var typ string
	_ = json.Unmarshal(b["type"], &typ)
	def, ok := contentDefs[typ]
	if _, defined := s.defs[def]; !ok || !defined {
		return fmt.Errorf("%s: content type %q does not exist: %s", s.rev, typ, block)
	}
	n := s.resolve(s.defs[def])
	if err := onlyMembers(s.rev+" "+def, b, n.members()); err != nil {
		return err
	}
	if ann, ok := b["annotations"]; ok {
		var a map[string]json.RawMessage
		if err := json.Unmarshal(ann, &a); err != nil {
			return err
		}
		var props map[string]json.RawMessage
		_ = json.Unmarshal(n["properties"], &props)
		return onlyMembers(s.rev+" "+def+".annotations", a, s.resolve(props["annotations"]).members())
	}
	return nil
}

func onlyMembers(where string, obj map[string]json.RawMessage, allowed []string) error {
	for k := range obj {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("%s has no member %q (it has %v)", where, k, allowed)
		}
	}
	return nil
}
