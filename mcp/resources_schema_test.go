package mcp

// Results of resources, prompts and completion are checked against the
// official JSON schema of the negotiated revision. The schemas are published
// data vendored into testdata/mcp-schema/<rev>/schema.json at the module
// root, so the checks run in every clone; their absence fails the tests.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kaptinlin/jsonschema"
	"github.com/yosida95/uritemplate/v3"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// revisionSchema validates JSON values against the definitions of one
// revision's schema.json.
type revisionSchema struct {
	rev      string
	base     string
	defsKey  string
	dialect  string
	compiler *jsonschema.Compiler
	defs     map[string]json.RawMessage

	mu    sync.Mutex
	cache map[string]*jsonschema.Schema
}

// officialSchemas loads the schemas once per test binary: compiling them
// is the slow part, and they never change.
var officialSchemas = sync.OnceValues(loadOfficialSchemas)

func loadOfficialSchemas() (map[string]*revisionSchema, error) {
	root, err := wiretest.ModuleRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "testdata", "mcp-schema")
	if _, err := os.Stat(filepath.Join(dir, LatestVersion, "schema.json")); err != nil {
		return nil, fmt.Errorf("the official MCP schemas vendored in %s are missing: %w", dir, err)
	}
	out := map[string]*revisionSchema{}
	for _, rev := range SupportedVersions() {
		s, err := loadRevisionSchema(dir, rev)
		if err != nil {
			return nil, err
		}
		out[rev] = s
	}
	return out, nil
}

func loadRevisionSchema(dir, rev string) (*revisionSchema, error) {
	data, err := os.ReadFile(filepath.Join(dir, rev, "schema.json"))
	if err != nil {
		return nil, err
	}
	var top struct {
		Schema      string                     `json:"$schema"`
		Defs        map[string]json.RawMessage `json:"$defs"`
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("revision %s: %v", rev, err)
	}
	s := &revisionSchema{rev: rev, dialect: top.Schema, cache: map[string]*jsonschema.Schema{},
		base: "urn:mcprt-test:mcp-schema:" + rev}
	switch {
	case top.Defs != nil:
		s.defsKey, s.defs = "$defs", top.Defs
	case top.Definitions != nil:
		s.defsKey, s.defs = "definitions", top.Definitions
	default:
		return nil, fmt.Errorf("revision %s: schema.json has neither $defs nor definitions", rev)
	}
	c := jsonschema.NewCompiler()
	deny := func(url string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("schema checks never fetch anything (asked for %s)", url)
	}
	for _, scheme := range []string{"http", "https", "file", "urn", "ftp"} {
		c.RegisterLoader(scheme, deny)
	}
	c.SetAssertFormat(true)
	// Two formats the validator does not check as the MCP schemas mean
	// them: "byte" (base64 data) it does not know, and its "uri-template"
	// refuses valid RFC 6570 templates with an expression in the host
	// (db://{table}/...). Both are checked with real parsers instead.
	c.RegisterFormat("byte", func(v any) bool {
		str, ok := v.(string)
		if !ok {
			return true
		}
		_, err := base64.StdEncoding.DecodeString(str)
		return err == nil
	}, "string")
	c.RegisterFormat("uri-template", func(v any) bool {
		str, ok := v.(string)
		if !ok {
			return true
		}
		_, err := uritemplate.New(str)
		return err == nil
	}, "string")
	if _, err := c.Compile(data, s.base); err != nil {
		return nil, fmt.Errorf("revision %s: compiling schema.json: %v", rev, err)
	}
	s.compiler = c
	return s, nil
}

// definition returns the compiled definition name, or an error when the
// revision has none.
func (s *revisionSchema) definition(name string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.cache[name]; ok {
		return sch, nil
	}
	if _, ok := s.defs[name]; !ok {
		return nil, fmt.Errorf("revision %s has no definition %q", s.rev, name)
	}
	dialect, _ := json.Marshal(s.dialect)
	ref, _ := json.Marshal(s.base + "#/" + s.defsKey + "/" + name)
	sch, err := s.compiler.Compile([]byte(`{"$schema":` + string(dialect) + `,"$ref":` + string(ref) + `}`))
	if err != nil {
		return nil, fmt.Errorf("revision %s: compiling %s: %v", s.rev, name, err)
	}
	s.cache[name] = sch
	return sch, nil
}

// validate reports whether value is valid against definition name, with
// the validator's explanation when it is not.
func (s *revisionSchema) validate(name string, value []byte) error {
	sch, err := s.definition(name)
	if err != nil {
		return err
	}
	res := sch.ValidateJSON(value)
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

// checkSchema fails t when value (JSON text) does not validate against the
// definition def of revision rev.
func checkSchema(t *testing.T, rev, def string, value []byte) {
	t.Helper()
	schemas, err := officialSchemas()
	if err != nil {
		t.Fatal(err)
	}
	s, ok := schemas[rev]
	if !ok {
		t.Fatalf("no schema for revision %q", rev)
	}
	if err := s.validate(def, value); err != nil {
		t.Errorf("%v\nvalue: %s", err, clip(string(value), 2000))
	}
}

// TestSchemaCheckRejects shows that checkSchema is not vacuous: results
// that break the schema of a revision are caught.
func TestSchemaCheckRejectsResourceAndPromptShapes(t *testing.T) {
	schemas, err := officialSchemas()
	if err != nil {
		t.Fatal(err)
	}
	bad := []struct{ rev, def, value string }{
		{Version20251125, "ReadResourceResult", `{"contents":[{"uri":"file:///a"}]}`},   // neither text nor blob
		{Version20251125, "ListResourcesResult", `{"resources":[{"uri":"file:///a"}]}`}, // no name
		{Version20241105, "GetPromptResult", `{"messages":[{"role":"user","content":{"type":"audio","data":"AA==","mimeType":"audio/wav"}}]}`},
		{Version20250326, "GetPromptResult", `{"messages":[{"role":"user","content":{"type":"resource_link","uri":"file:///a","name":"a"}}]}`},
		{Version20251125, "GetPromptResult", `{"messages":[{"role":"system","content":{"type":"text","text":"x"}}]}`},
		{Version20251125, "CompleteResult", `{"completion":{"values":[1]}}`},
		{Version20251125, "ListPromptsResult", `{"prompts":[{"name":"p","icons":[{"src":"x y"}]}]}`},
		{Version20251125, "ReadResourceResult", `{"contents":[{"uri":"file:///a","blob":"not base64"}]}`},
		{Version20251125, "ListResourceTemplatesResult", `{"resourceTemplates":[{"uriTemplate":"file:///{x","name":"t"}]}`},
	}
	for _, b := range bad {
		if err := schemas[b.rev].validate(b.def, []byte(b.value)); err == nil {
			t.Errorf("%s %s accepted %s", b.rev, b.def, b.value)
		}
	}
}
