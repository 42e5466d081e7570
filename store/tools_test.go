package store

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/guard"
	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/domain/toolspec"
)

// call decodes args as the MCP layer does (json.Unmarshal into In) and
// runs the handler, returning the result's JSON.
func call[In, Out any](t *testing.T, h func(context.Context, In) (Out, error), args string) (string, error) {
	t.Helper()
	var in In
	if err := json.Unmarshal([]byte(args), &in); err != nil {
		return "", core.Errorf(core.CodeInvalidArgument, "arguments: %v", err)
	}
	out, err := h(testCtx(t), in)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatalf("result does not encode: %v", err)
	}
	return string(b), nil
}

type toolset struct {
	mem   *memory.Tools
	sess  *session.Tools
	guard *guard.Tools
	msvc  *memory.Service
	ssvc  *session.Service
}

func newToolset(t *testing.T) toolset {
	db, clock := newDB(t)
	msvc := memory.NewService(db.Memory(), clock)
	ssvc := session.NewService(db.Sessions(), clock, &core.SequenceGenerator{})
	g, err := guard.NewService("", ssvc)
	if err != nil {
		t.Fatal(err)
	}
	return toolset{memory.NewTools(msvc), session.NewTools(ssvc), guard.NewTools(g), msvc, ssvc}
}

func TestToolsWireShapes(t *testing.T) {
	ts := newToolset(t)
	steps := []struct {
		name string
		run  func() (string, error)
		want string
	}{
		{"store", func() (string, error) {
			return call(t, ts.mem.Store, `{"key":"k","value":{"a":1}}`)
		}, `{"success":true,"key":"k","namespace":"default","message":"stored default:k","storedAt":"2026-03-01T12:00:00Z","replaced":false,"size":7}`},
		{"retrieve", func() (string, error) { return call(t, ts.mem.Retrieve, `{"key":"k"}`) },
			`{"found":true,"key":"k","namespace":"default","value":{"a":1},"storedAt":"2026-03-01T12:00:00Z"}`},
		{"retrieve missing", func() (string, error) { return call(t, ts.mem.Retrieve, `{"key":"nope","namespace":"n"}`) },
			`{"found":false,"key":"nope","namespace":"n","message":"nothing is stored at n:nope; memory_search or memory_list show what is"}`},
		{"search", func() (string, error) { return call(t, ts.mem.Search, `{"query":"k"}`) },
			`{"query":"k","namespace":"all","count":1,"results":[{"key":"k","namespace":"default","value":{"a":1},"storedAt":"2026-03-01T12:00:00Z"}]}`},
		{"list", func() (string, error) { return call(t, ts.mem.List, `{}`) },
			`{"entries":[{"key":"k","namespace":"default","storedAt":"2026-03-01T12:00:00Z","size":7}],"total":1,"hasMore":false}`},
		{"stats", func() (string, error) { return call(t, ts.mem.Stats, `{}`) },
			`{"entries":1,"bytes":7,"namespaces":[{"namespace":"default","entries":1,"bytes":7,"oldest":"2026-03-01T12:00:00Z","newest":"2026-03-01T12:00:00Z"}],"truncated":false}`},
		{"export", func() (string, error) { return call(t, ts.mem.Export, `{}`) },
			`{"data":"{\"namespace\":\"default\",\"key\":\"k\",\"value\":{\"a\":1},\"storedAt\":\"2026-03-01T12:00:00Z\"}\n","count":1,"bytes":84,"hasMore":false}`},
		{"import", func() (string, error) { return call(t, ts.mem.Import, `{"data":"{\"key\":\"j\",\"value\":2}\n"}`) },
			`{"imported":1,"created":1,"replaced":0,"skipped":0,"message":"imported 1 record(s): 1 created, 0 replaced, 0 skipped"}`},
		{"delete", func() (string, error) { return call(t, ts.mem.Delete, `{"key":"j"}`) },
			`{"deleted":true,"key":"j","namespace":"default","message":"deleted default:j"}`},
		{"session create", func() (string, error) { return call(t, ts.sess.Create, `{"initiator":"lead","task":"t"}`) },
			`{"sessionId":"00000000-0000-4000-8000-000000000001","initiator":"lead","task":"t","status":"active","createdAt":"2026-03-01T12:00:00Z"}`},
		{"session join", func() (string, error) {
			return call(t, ts.sess.Join, `{"sessionId":"00000000-0000-4000-8000-000000000001","agentId":"dev"}`)
		}, `{"joined":true,"session":{"sessionId":"00000000-0000-4000-8000-000000000001","status":"active","initiator":"lead","task":"t","participants":[{"agentId":"lead","role":"initiator","joinedAt":"2026-03-01T12:00:00Z","taskCount":0},{"agentId":"dev","role":"participant","joinedAt":"2026-03-01T12:00:00Z","taskCount":0}],"policies":[],"createdAt":"2026-03-01T12:00:00Z","updatedAt":"2026-03-01T12:00:00Z"}}`},
		{"guard apply", func() (string, error) {
			return call(t, ts.guard.Apply, `{"sessionId":"00000000-0000-4000-8000-000000000001","policyId":"default"}`)
		}, `{"applied":true,"sessionId":"00000000-0000-4000-8000-000000000001","policyId":"default","message":"policy \"default\" applies to session 00000000-0000-4000-8000-000000000001 (1 policies in all)"}`},
		{"session list", func() (string, error) { return call(t, ts.sess.List, `{"status":"active"}`) },
			`{"sessions":[{"sessionId":"00000000-0000-4000-8000-000000000001","initiator":"lead","task":"t","status":"active","participantCount":2,"createdAt":"2026-03-01T12:00:00Z"}],"total":1}`},
		{"guard check", func() (string, error) {
			return call(t, ts.guard.Check, `{"policyId":"default","changedPaths":["a/../.env"]}`)
		}, `{"passed":false,"policyId":"default","policyIds":["default"],"checkedPaths":[".env"],"gateResults":[{"gate":"path_violation","policyId":"default","passed":false,"violations":[{"type":"path_forbidden","path":".env","message":".env matches the forbidden pattern \"**/.env\" of policy \"default\""}]},{"gate":"change_radius","policyId":"default","passed":true,"violations":[]}],"summary":"policy \"default\" failed: 1 violation(s) in gate(s) path_violation over 1 path(s)"}`},
		{"session fail", func() (string, error) {
			return call(t, ts.sess.Fail, `{"sessionId":"00000000-0000-4000-8000-000000000001","reason":"tests broke"}`)
		}, ""},
	}
	for _, s := range steps {
		got, err := s.run()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if s.want != "" && got != s.want {
			t.Fatalf("%s:\n got %s\nwant %s", s.name, got, s.want)
		}
	}
	out, err := call(t, ts.sess.Status, `{"sessionId":"00000000-0000-4000-8000-000000000001"}`)
	if err != nil || !strings.Contains(out, `"status":"failed"`) || !strings.Contains(out, `"failureReason":"tests broke"`) ||
		!strings.Contains(out, `"completedAt":"2026-03-01T12:00:00Z"`) || !strings.Contains(out, `"policies":[{"policyId":"default"`) {
		t.Fatalf("status after fail: %s %v", out, err)
	}
	if out, err := call(t, ts.guard.List, `{}`); err != nil || !strings.Contains(out, `"total":2`) {
		t.Fatalf("guard list: %s %v", out, err)
	}
}

// Hostile arguments get clear errors and change nothing.
func TestToolsHostileInputs(t *testing.T) {
	ts := newToolset(t)
	sql := `'); DROP TABLE sessions; --`
	sqlJSON, _ := json.Marshal(sql)
	s := string(sqlJSON)
	huge := `"` + strings.Repeat("x", 1<<20) + `"`
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	cases := []struct {
		name string
		run  func() (string, error)
		code core.Code
	}{
		{"1 MiB value", func() (string, error) { return call(t, ts.mem.Store, `{"key":"k","value":`+huge+`}`) }, core.CodeResourceExhausted},
		{"deep value", func() (string, error) { return call(t, ts.mem.Store, `{"key":"k","value":`+deep+`}`) }, core.CodeInvalidArgument},
		{"SQL in namespace", func() (string, error) { return call(t, ts.mem.Store, `{"key":"k","namespace":`+s+`,"value":1}`) }, core.CodeInvalidArgument},
		{"SQL in list namespace", func() (string, error) { return call(t, ts.mem.List, `{"namespace":`+s+`}`) }, core.CodeInvalidArgument},
		{"huge key", func() (string, error) {
			return call(t, ts.mem.Store, `{"key":"`+strings.Repeat("k", 1<<20)+`","value":1}`)
		}, core.CodeInvalidArgument},
		{"huge query", func() (string, error) { return call(t, ts.mem.Search, `{"query":"`+strings.Repeat("q", 1<<20)+`"}`) }, core.CodeInvalidArgument},
		{"deep import line", func() (string, error) {
			d, _ := json.Marshal(`{"key":"k","value":` + deep + `}`)
			return call(t, ts.mem.Import, `{"data":`+string(d)+`}`)
		}, core.CodeInvalidArgument},
		{"deep metadata", func() (string, error) {
			return call(t, ts.sess.Create, `{"initiator":"a","task":"t","metadata":`+deep+`}`)
		}, core.CodeInvalidArgument},
		{"huge task", func() (string, error) { return call(t, ts.sess.Create, `{"initiator":"a","task":`+huge+`}`) }, core.CodeInvalidArgument},
		{"SQL session id", func() (string, error) { return call(t, ts.sess.Complete, `{"sessionId":`+s+`}`) }, session.CodeNotFound},
		{"SQL status filter", func() (string, error) { return call(t, ts.sess.List, `{"status":`+s+`}`) }, core.CodeInvalidArgument},
		{"SQL policy id", func() (string, error) { return call(t, ts.guard.Check, `{"policyId":`+s+`,"changedPaths":["a"]}`) }, guard.CodePolicyNotFound},
		{"escaping path", func() (string, error) {
			return call(t, ts.guard.Check, `{"policyId":"default","changedPaths":["../../etc/passwd"]}`)
		}, core.CodeInvalidArgument},
		{"NUL in path", func() (string, error) {
			return call(t, ts.guard.Check, `{"policyId":"default","changedPaths":["a\u0000b"]}`)
		}, core.CodeInvalidArgument},
		{"too many paths", func() (string, error) {
			return call(t, ts.guard.Check, `{"policyId":"default","changedPaths":[`+strings.TrimSuffix(strings.Repeat(`"a",`, 1001), ",")+`]}`)
		}, core.CodeInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.run()
			wantCode(t, err, c.code)
			if msg := core.AsError(err).Message; len(msg) > 2000 {
				t.Fatalf("message of %d bytes: errors must stay short whatever the input", len(msg))
			}
		})
	}
	st, _ := ts.msvc.Stats(testCtx(t), "")
	_, total, _ := ts.ssvc.List(testCtx(t), session.Filter{})
	if st.Entries != 0 || total != 0 {
		t.Fatalf("hostile input changed state: %d entries, %d sessions", st.Entries, total)
	}
	// SQL metacharacters in every free-text field are stored verbatim.
	out, err := call(t, ts.sess.Create, `{"initiator":`+s+`,"task":`+s+`,"workspace":`+s+`,"metadata":{`+s+`:`+s+`}}`)
	if err != nil {
		t.Fatal(err)
	}
	var created session.CreateOutput
	json.Unmarshal([]byte(out), &created)
	got, err := ts.ssvc.Get(testCtx(t), created.SessionID)
	if err != nil || got.Initiator != sql || got.Task != sql || got.Workspace != sql || string(got.Metadata) != `{`+s+`:`+s+`}` {
		t.Fatalf("verbatim: %+v %v", got, err)
	}
}

// The rule the tool types follow since the tool lists were tightened for a
// model's context: every field has a camelCase json name; a jsonschema
// description is optional (only where a model would otherwise call wrong)
// and, when present, is one short line that lists no error codes; every
// input argument that holds raw JSON declares its type (toolspec.Object for
// an object), except an argument that takes any JSON value. Every spec is
// named and described.
func TestToolTypesAreDescribed(t *testing.T) {
	types := []any{
		memory.StoreInput{}, memory.StoreOutput{}, memory.KeyInput{}, memory.RetrieveOutput{}, memory.SearchInput{},
		memory.SearchOutput{}, memory.SearchResult{}, memory.ListInput{}, memory.ListOutput{}, memory.ListEntry{},
		memory.DeleteOutput{}, memory.StatsInput{}, memory.StatsOutput{}, memory.NamespaceOutput{}, memory.ExportInput{},
		memory.ExportOutput{}, memory.ImportInput{}, memory.ImportOutput{},
		session.CreateInput{}, session.CreateOutput{}, session.IDInput{}, session.StatusOutput{}, session.ParticipantOutput{},
		session.PolicyOutput{}, session.ListInput{}, session.ListOutput{}, session.ListItem{}, session.CompleteInput{},
		session.FailInput{}, session.JoinInput{}, session.JoinOutput{}, session.LeaveInput{}, session.LeaveOutput{},
		guard.ListInput{}, guard.ListOutput{}, guard.PolicyOutput{}, guard.CheckInput{}, guard.CheckOutput{},
		guard.GateOutput{}, guard.ViolationOutput{}, guard.ApplyInput{}, guard.ApplyOutput{},
	}
	// Arguments that take any JSON value, so no single type fits them.
	anyValue := map[string]bool{"memory.StoreInput.Value": true}
	rawJSON := reflect.TypeFor[json.RawMessage]()
	for _, v := range types {
		rt := reflect.TypeOf(v)
		input := strings.HasSuffix(rt.Name(), "Input")
		for i := range rt.NumField() {
			f := rt.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name[0] < 'a' || name[0] > 'z' || strings.ContainsAny(name, "_-") {
				t.Errorf("%s.%s: json name %q is not camelCase", rt, f.Name, name)
			}
			if d := f.Tag.Get("jsonschema"); len(d) > maxFieldDescription || strings.ContainsAny(d, "\n") || errorCode.MatchString(d) {
				t.Errorf("%s.%s: description %q is not one short line (at most %d bytes) without error codes",
					rt, f.Name, d, maxFieldDescription)
			}
			if input && !anyValue[rt.String()+"."+f.Name] &&
				(f.Type == rawJSON || f.Type.Kind() == reflect.Interface || f.Type.Kind() == reflect.Map) {
				t.Errorf("%s.%s (%s) takes untyped JSON: declare its type (toolspec.Object for an object)", rt, f.Name, f.Type)
			}
		}
	}
	var specs []toolspec.Spec
	specs = append(append(append(specs, memory.ToolSpecs()...), session.ToolSpecs()...), guard.ToolSpecs()...)
	if len(specs) != 18 {
		t.Errorf("%d tool specs, want 18", len(specs))
	}
	for _, s := range specs {
		if s.Name == "" || s.Description == "" || s.Title == "" || (s.ReadOnly && s.Destructive) {
			t.Errorf("spec %+v", s)
		}
	}
}

// maxFieldDescription is the longest jsonschema description of a tool
// type's field: a hint, not documentation.
const maxFieldDescription = 100

// errorCode matches an error code such as INVALID_ARGUMENT or E_ROUTING_001.
var errorCode = regexp.MustCompile(`\b(E_[A-Z]+_\d+|[A-Z]{2,}_[A-Z_]{2,})\b`)
