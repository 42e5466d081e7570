package workflow

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/kaptinlin/jsonschema"
)

// SchemaJSON is the published JSON Schema of a workflow definition. The
// same bytes are committed as docs/workflow.schema.json for editors and
// other tools (a test keeps the two identical).
//
//go:embed workflow.schema.json
var SchemaJSON []byte

// maxProblems bounds the schema problems one error lists.
const maxProblems = 10

// schema validates decoded JSON values against one compiled JSON Schema.
// kaptinlin caches compiled patterns while validating, so validation is
// serialised. It never reaches the network: the compiler has no loaders.
type schema struct {
	mu     sync.Mutex
	s      *jsonschema.Schema
	decode func([]byte) (any, error)
}

// compileSchema compiles a 2020-12 JSON Schema whose $refs stay inside it.
func compileSchema(raw []byte) (*schema, error) {
	kc := jsonschema.NewCompiler()
	for scheme := range kc.Loaders {
		delete(kc.Loaders, scheme) // never fetch a $ref over the network
	}
	kc.SetDefaultDialect(jsonschema.Draft202012)
	s, err := kc.Compile(raw)
	if err != nil {
		return nil, fmt.Errorf("the schema does not compile: %v", err)
	}
	s.ResolveUnresolvedReferences()
	if refs := s.UnresolvedReferenceURIs(); len(refs) > 0 {
		sort.Strings(refs)
		return nil, fmt.Errorf("the schema's $ref %q cannot be resolved; refer only to parts of the schema itself (e.g. under $defs)", refs[0])
	}
	return &schema{s: s, decode: kc.MediaTypes["application/json"]}, nil
}

// problems validates v and returns what is wrong with it, sorted, at most
// maxProblems entries ("/path: message"); nil when v is valid.
func (s *schema) problems(v any) (out []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			out = []string{fmt.Sprintf("the schema validator failed on this value (%v)", r)}
		}
	}()
	res := s.s.Validate(v)
	if res.IsValid() {
		return nil
	}
	for path, msg := range res.DetailedErrors() {
		if path == "" {
			path = "(root)"
		}
		out = append(out, path+": "+msg)
	}
	sort.Strings(out)
	if len(out) == 0 {
		out = []string{"the value does not match the schema"}
	}
	if len(out) > maxProblems {
		out = append(out[:maxProblems], fmt.Sprintf("... and %d more", len(out)-maxProblems))
	}
	return out
}

// definitionSchema is SchemaJSON compiled, once.
var definitionSchema = sync.OnceValues(func() (*schema, error) { return compileSchema(SchemaJSON) })

// joinProblems renders schema problems for a message.
func joinProblems(p []string) string { return strings.Join(p, "; ") }
