package workflow

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
)

func TestSchemaCopyIsPublished(t *testing.T) {
	published, err := os.ReadFile(filepath.Join("..", "..", "docs", "workflow.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(published, SchemaJSON) {
		t.Fatal("docs/workflow.schema.json differs from domain/workflow/workflow.schema.json; copy one over the other")
	}
	if _, err := definitionSchema(); err != nil {
		t.Fatal(err)
	}
}

func TestBundledWorkflows(t *testing.T) {
	defs, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range defs {
		ids = append(ids, d.ID)
		if d.Source != SourceBundled || d.Status != StatusActive || d.input == nil || d.output == nil {
			t.Errorf("bundled %s: %+v", d.ID, d)
		}
	}
	if strings.Join(ids, ",") != "check-change,remember-and-recall" {
		t.Fatalf("bundled ids %v", ids)
	}
}

// def is a minimal valid definition with steps replaced.
func def(steps string) string {
	return `{"id":"w","name":"W","steps":` + steps + `}`
}

func TestParseRejects(t *testing.T) {
	deep := `{"id":"w","name":"W","steps":[{"id":"a","tool":"t","input":{"x":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}}]}`
	huge := `{"id":"w","name":"W","description":"` + strings.Repeat("x", MaxDefinitionBytes) + `","steps":[{"id":"a","tool":"t"}]}`
	many := make([]string, 101)
	for i := range many {
		many[i] = `{"id":"s` + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + `","tool":"t"}`
	}
	tests := []struct {
		name, doc, want string
	}{
		{"not JSON", `{"id":`, "not valid JSON"},
		{"two values", def(`[{"id":"a","tool":"t"}]`) + ` {}`, "not valid JSON"},
		{"duplicate member", `{"id":"w","id":"v","name":"W","steps":[{"id":"a","tool":"t"}]}`, "not valid JSON"},
		{"unknown member", `{"id":"w","name":"W","extra":1,"steps":[{"id":"a","tool":"t"}]}`, "does not match the workflow schema"},
		{"no steps", def(`[]`), "does not match the workflow schema"},
		{"bad id", `{"id":"a/b","name":"W","steps":[{"id":"a","tool":"t"}]}`, "does not match the workflow schema"},
		{"tool and agent", def(`[{"id":"a","tool":"t","agent":"x"}]`), "does not match the workflow schema"},
		{"neither tool nor agent", def(`[{"id":"a"}]`), "does not match the workflow schema"},
		{"bad onFailure", def(`[{"id":"a","tool":"t","onFailure":"explode"}]`), "does not match the workflow schema"},
		{"too many retries", def(`[{"id":"a","tool":"t","retries":11}]`), "does not match the workflow schema"},
		{"dotted step id", def(`[{"id":"a.b","tool":"t"}]`), "does not match the workflow schema"},
		{"too many steps", def(`[` + strings.Join(many, ",") + `]`), "does not match the workflow schema"},
		{"duplicate step", def(`[{"id":"a","tool":"t"},{"id":"a","tool":"u"}]`), `step id "a" is also used`},
		{"forward reference", def(`[{"id":"a","tool":"t","input":{"x":"{{steps.b.output}}"}},{"id":"b","tool":"t"}]`), "not an earlier step"},
		{"self reference", def(`[{"id":"a","tool":"t","input":{"x":"{{steps.a.output}}"}}]`), "not an earlier step"},
		{"unknown root", def(`[{"id":"a","tool":"t","input":{"x":"{{env.HOME}}"}}]`), "refers to nothing known"},
		{"unclosed", def(`[{"id":"a","tool":"t","input":{"x":"{{input.a"}}]`), "never closes it"},
		{"empty segment", def(`[{"id":"a","tool":"t","input":{"x":"{{input..a}}"}}]`), "is not a reference"},
		{"output to unknown step", `{"id":"w","name":"W","output":"{{steps.z.output}}","steps":[{"id":"a","tool":"t"}]}`, "does not have"},
		{"external $ref", `{"id":"w","name":"W","inputSchema":{"$ref":"https://example.com/s.json"},"steps":[{"id":"a","tool":"t"}]}`, "inputSchema"},
		{"deep", deep, "nests arrays and objects more than 32 deep"},
		{"huge", huge, "limit is 262144 bytes"},
		{"invalid UTF-8", "{\"id\":\"w\",\"name\":\"\xff\",\"steps\":[{\"id\":\"a\",\"tool\":\"t\"}]}", "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), "test.json")
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			ce := core.AsError(err)
			if ce.Code != core.CodeInvalidArgument || !strings.Contains(ce.Message, tc.want) || !strings.Contains(ce.Message, "test.json") {
				t.Fatalf("got %v, want INVALID_ARGUMENT naming test.json and saying %q", err, tc.want)
			}
			if len(ce.Message) > 4096 {
				t.Fatalf("the message is %d bytes long", len(ce.Message))
			}
		})
	}
}

func TestParseDefaults(t *testing.T) {
	d, err := Parse([]byte(def(`[{"id":"a","tool":"t"},{"id":"b","agent":"rev","onFailure":"continue"}]`)), "x")
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != "1.0.0" || d.Status != StatusActive || d.Steps[0].OnFailure != OnFailureStop || d.Steps[1].Type() != "agent" ||
		d.Steps[1].Target() != "rev" {
		t.Fatalf("%+v", d)
	}
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if defs, err := LoadDir(filepath.Join(dir, "missing")); err != nil || len(defs) != 0 {
		t.Fatalf("a missing directory: %v %v", defs, err)
	}
	write("a.json", `{"id":"remember-and-recall","name":"Mine","steps":[{"id":"a","tool":"t"}]}`)
	write("b.json", def(`[{"id":"a","tool":"t"}]`))
	write("notes.txt", "ignored")
	defs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range defs {
		got[d.ID] = d.Name
	}
	if len(defs) != 3 || got["remember-and-recall"] != "Mine" || got["w"] != "W" || got["check-change"] == "" {
		t.Fatalf("Load: %v", got)
	}
	write("c.json", def(`[{"id":"a","tool":"t"}]`))
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "also defined in") {
		t.Fatalf("two files with one id: %v", err)
	}
}

func TestTemplates(t *testing.T) {
	input := map[string]any{"topic": "go", "n": json.Number("42"), "list": []any{"a", "b"}, "obj": map[string]any{"k": true}}
	sc := &scope{input: input, outputs: map[string]any{"save": map[string]any{"key": "k1", "size": json.Number("7")}},
		failed: map[string]bool{"bad": true}}
	tests := []struct {
		name, tmpl, want, err string
	}{
		{"literal", `"plain"`, `"plain"`, ""},
		{"whole string keeps string", `"{{input.topic}}"`, `"go"`, ""},
		{"whole number keeps number", `"{{input.n}}"`, `42`, ""},
		{"whole object", `"{{input.obj}}"`, `{"k":true}`, ""},
		{"whole input", `"{{ input }}"`, `{"list":["a","b"],"n":42,"obj":{"k":true},"topic":"go"}`, ""},
		{"array index", `"{{input.list.1}}"`, `"b"`, ""},
		{"embedded", `"about {{input.topic}}: {{input.n}} {{input.obj}}"`, `"about go: 42 {\"k\":true}"`, ""},
		{"step output", `{"k":"{{steps.save.output.key}}","s":["{{steps.save.output.size}}"]}`, `{"k":"k1","s":[7]}`, ""},
		{"missing member", `"{{input.nope}}"`, "", `has no member "nope"`},
		{"index out of range", `"{{input.list.5}}"`, "", "is not an index from 0 to 1"},
		{"into a string", `"{{input.topic.x}}"`, "", "is a string, which has no member"},
		{"failed step", `"{{steps.bad.output}}"`, "", `step "bad" failed`},
		{"step not run", `"{{steps.later.output}}"`, "", "has not run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			if err := decodeJSON([]byte(tc.tmpl), &v); err != nil {
				t.Fatal(err)
			}
			var refs []*ref
			c, err := compileTemplate(v, "input", &refs)
			if err != nil {
				t.Fatal(err)
			}
			out, err := render(c, sc)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, %v; want an error saying %q", out, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := json.Marshal(out); string(b) != tc.want {
				t.Fatalf("got %s, want %s", b, tc.want)
			}
		})
	}
	if _, ok := input["obj"].(map[string]any); !ok || len(input) != 4 {
		t.Fatalf("the input was modified: %v", input)
	}
}
