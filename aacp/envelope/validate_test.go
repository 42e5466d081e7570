package envelope

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
)

func newValidator(t testing.TB) *Validator {
	t.Helper()
	v, err := NewValidator(0)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// valid is a valid TASK_ASSIGNMENT envelope, as a map the cases edit.
func valid() map[string]any {
	return map[string]any{
		"seq": 1, "version": "1.0.0", "messageId": "m-1", "requestId": "r-1", "correlationId": "c-1",
		"timestamp":   "2025-11-12T10:30:45.123Z",
		"sender":      map[string]any{"agentId": "manager_001", "type": "Manager"},
		"receiver":    map[string]any{"agentId": "impl_001", "type": "Implementation"},
		"messageType": "TASK_ASSIGNMENT", "priority": "HIGH",
		"payload": map[string]any{"taskId": "task_3_1", "taskRef": "Task 3.1", "taskDescription": "Design",
			"memoryLogPath": "a/b.md", "executionType": "multi-step"},
		"metadata": map[string]any{"retryCount": 0, "ttl": 3600, "tags": []any{"x"}},
	}
}

func encode(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseValid(t *testing.T) {
	v := newValidator(t)
	env, err := v.Parse(encode(t, valid()))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if env.MessageID != "m-1" || env.Seq != 1 || env.Sender.AgentID != "manager_001" || env.Priority != High || env.Metadata.TTL != 3600 {
		t.Errorf("decoded %+v", env)
	}
	if err := v.Validate(env); err != nil {
		t.Errorf("Validate of a parsed envelope: %v", err)
	}
}

func TestParseRejections(t *testing.T) {
	v := newValidator(t)
	type edit func(m map[string]any)
	setPayload := func(typ string, p map[string]any) edit {
		return func(m map[string]any) { m["messageType"] = typ; m["payload"] = p }
	}
	cases := []struct {
		name string
		edit edit
		raw  string // used instead of the edited map when set
		code core.Code
		path string
	}{
		{"missing messageId", func(m map[string]any) { delete(m, "messageId") }, "", CodeMissingField, "/messageId"},
		{"missing sender agentId", func(m map[string]any) { m["sender"] = map[string]any{"type": "Manager"} }, "", CodeMissingField, "/sender/agentId"},
		{"missing payload field", func(m map[string]any) { delete(m["payload"].(map[string]any), "taskRef") }, "", CodeMissingField, "/payload/taskRef"},
		{"priority wrong type", func(m map[string]any) { m["seq"] = "one" }, "", CodeInvalidType, "/seq"},
		{"payload not object", func(m map[string]any) { m["payload"] = []any{1} }, "", CodeInvalidType, "/payload"},
		{"progress wrong type", setPayload("TASK_UPDATE", map[string]any{"taskId": "t", "status": "blocked", "progress": "half"}), "", CodeInvalidType, "/payload/progress"},
		{"null required field", setPayload("TASK_UPDATE", map[string]any{"taskId": nil, "status": "blocked", "progress": 0.5}), "", CodeInvalidType, "/payload/taskId"},
		{"bad priority", func(m map[string]any) { m["priority"] = "URGENT" }, "", CodeInvalidEnum, "/priority"},
		{"bad message type", func(m map[string]any) { m["messageType"] = "HELLO" }, "", CodeInvalidEnum, "/messageType"},
		{"bad sender type", func(m map[string]any) { m["sender"] = map[string]any{"agentId": "a", "type": "Boss"} }, "", CodeInvalidEnum, "/sender/type"},
		{"bad executionType", func(m map[string]any) { m["payload"].(map[string]any)["executionType"] = "many" }, "", CodeInvalidEnum, "/payload/executionType"},
		{"bad status", setPayload("TASK_UPDATE", map[string]any{"taskId": "t", "status": "done", "progress": 1}), "", CodeInvalidEnum, "/payload/status"},
		{"bad entityType", setPayload("STATE_SYNC", map[string]any{"entityType": "x", "entityId": "e", "operation": "create", "state": map[string]any{}, "syncTimestamp": "2025-11-12T10:30:45Z"}), "", CodeInvalidEnum, "/payload/entityType"},
		{"bad severity", setPayload("ERROR_REPORT", map[string]any{"errorType": "SystemError", "errorMessage": "x", "severity": "huge"}), "", CodeInvalidEnum, "/payload/severity"},
		{"bad handoff reason", setPayload("HANDOFF_REQUEST", map[string]any{"taskId": "t", "reason": "bored", "sourceAgent": map[string]any{"agentId": "a", "type": "AdHoc"}, "targetAgent": map[string]any{"agentId": "b", "type": "AdHoc"}, "handoffContext": map[string]any{}}), "", CodeInvalidEnum, "/payload/reason"},
		{"bad ack status", setPayload("ACK", map[string]any{"acknowledgedMessageId": "m", "status": "fine", "timestamp": "2025-11-12T10:30:45Z"}), "", CodeInvalidEnum, "/payload/status"},
		{"nack missing reason", setPayload("NACK", map[string]any{"rejectedMessageId": "m", "timestamp": "2025-11-12T10:30:45Z"}), "", CodeMissingField, "/payload/reason"},
		{"progress out of range", setPayload("TASK_UPDATE", map[string]any{"taskId": "t", "status": "blocked", "progress": 1.5}), "", CodeSchema, "/payload/progress"},
		{"unknown field", func(m map[string]any) { m["extra"] = 1 }, "", CodeSchema, "/extra"},
		{"case-mismatched key", func(m map[string]any) { m["MessageId"] = "m-2" }, "", CodeSchema, "/MessageId"},
		{"bad timestamp", func(m map[string]any) { m["timestamp"] = "yesterday" }, "", CodeSchema, "/timestamp"},
		{"non-UTC timestamp", func(m map[string]any) { m["timestamp"] = "2025-11-12T10:30:45+02:00" }, "", CodeSchema, "/timestamp"},
		{"too many tags", func(m map[string]any) {
			m["metadata"].(map[string]any)["tags"] = strings.Split(strings.Repeat("t,", 32)+"t", ",")
		}, "", CodeSchema, "/metadata/tags"},
		{"tag wrong type", func(m map[string]any) { m["metadata"].(map[string]any)["tags"] = []any{1} }, "", CodeInvalidType, "/metadata/tags/0"},
		{"too large", func(m map[string]any) {
			m["payload"].(map[string]any)["taskDescription"] = strings.Repeat("x", DefaultMaxBytes)
		}, "", CodeTooLarge, ""},
		{"unknown receiver id", func(m map[string]any) { m["receiver"] = map[string]any{"agentId": "../x", "type": "Manager"} }, "", CodeInvalidReceiver, "/receiver/agentId"},
		{"slash in sender", func(m map[string]any) { m["sender"] = map[string]any{"agentId": "a/b", "type": "Manager"} }, "", CodeInvalidReceiver, "/sender/agentId"},
		{"version", func(m map[string]any) { m["version"] = "2.0.0" }, "", CodeUnsupportedVersion, "/version"},
		{"malformed", nil, `{"version":`, CodeMalformedJSON, ""},
		{"duplicate key", nil, `{"version":"1.0.0","version":"1.0.0"}`, CodeMalformedJSON, ""},
		{"duplicate payload key", nil, `{"payload":{"a":1,"a":2}}`, CodeMalformedJSON, ""},
		{"not an object", nil, `[1,2]`, CodeMalformedJSON, ""},
		{"trailing data", nil, `{} {}`, CodeMalformedJSON, ""},
		{"invalid UTF-8", nil, "{\"a\":\"\xff\"}", CodeMalformedJSON, ""},
		{"too deep", nil, strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70), CodeMalformedJSON, ""},
		{"correlationId type", func(m map[string]any) { m["correlationId"] = 7 }, "", CodeInvalidCorrelationID, "/correlationId"},
		{"correlationId spaces", func(m map[string]any) { m["correlationId"] = "a b" }, "", CodeInvalidCorrelationID, "/correlationId"},
		{"requestId too long", func(m map[string]any) { m["requestId"] = strings.Repeat("r", 129) }, "", CodeInvalidCorrelationID, "/requestId"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.raw)
			if tc.raw == "" {
				m := valid()
				tc.edit(m)
				data = encode(t, m)
			}
			_, err := v.Parse(data)
			var ce *core.Error
			if !errors.As(err, &ce) {
				t.Fatalf("Parse = %v, want a *core.Error %s", err, tc.code)
			}
			if ce.Code != tc.code {
				t.Fatalf("code = %s, want %s (%v)", ce.Code, tc.code, err)
			}
			if tc.path != "" && ce.Details["path"] != tc.path {
				t.Errorf("path = %v, want %s (%v)", ce.Details["path"], tc.path, err)
			}
			if len(ce.Message) < 20 {
				t.Errorf("message %q says too little", ce.Message)
			}
		})
	}
}

func TestEveryCatalogueCodeHasAnEntry(t *testing.T) {
	seen := map[core.Code]bool{}
	for _, c := range Catalogue() {
		if seen[c.Code] || c.Description == "" || c.Severity == "" {
			t.Errorf("bad or duplicate entry %+v", c)
		}
		seen[c.Code] = true
	}
	if len(seen) != 17 {
		t.Errorf("%d codes, want 17", len(seen))
	}
	if e := Errorf(CodeTimeout, "x"); !e.Retryable {
		t.Errorf("E_PROTOCOL_004 should be retryable")
	}
	if ErrorType(CodeSchema) != "ValidationError" || ErrorType(CodeTaskDependencyMissing) != "DependencyError" || ErrorType(CodeTimeout) != "SystemError" {
		t.Error("ErrorType mapping")
	}
}

func TestCheckAgentID(t *testing.T) {
	good := []string{"impl_001", "manager-1", "a", "A.b", strings.Repeat("x", 64), "to", "x_t", "tox_y"}
	bad := []string{"", "../x", "/", "a/b", "a\\b", "a\x00b", "a\nb", "a\x7fb", ".hidden", "_x", "-x", strings.Repeat("x", 65),
		"a_to_b", "to_a", "a_to", "é", "a b", "a:b", SystemAgentID, "*"}
	for _, id := range good {
		if err := CheckAgentID(id); err != nil {
			t.Errorf("CheckAgentID(%q) = %v", id, err)
		}
	}
	for _, id := range bad {
		err := CheckAgentID(id)
		if err == nil || err.Code != CodeInvalidReceiver {
			t.Errorf("CheckAgentID(%q) = %v, want %s", id, err, CodeInvalidReceiver)
		}
	}
}

func TestChannelSplitsBackUniquely(t *testing.T) {
	ids := []string{"a", "b_", "x_t", "o_b", "a_b", "to", "t_o", "b_toy", "x__"}
	for _, s := range append(ids, SystemAgentID) {
		for _, r := range ids {
			gs, gr, ok := SplitChannel(Channel(s, r))
			if !ok || gs != s || gr != r {
				t.Errorf("SplitChannel(Channel(%q,%q)) = %q,%q,%v", s, r, gs, gr, ok)
			}
		}
	}
	if _, _, ok := SplitChannel("nochannel"); ok {
		t.Error("SplitChannel accepted a name without _to_")
	}
}

func TestCustomTypes(t *testing.T) {
	v := newValidator(t)
	if err := v.ValidatePayload("CUSTOM_ANALYSIS_REQUEST", json.RawMessage(`{"anything":[1]}`)); err != nil {
		t.Errorf("custom payload: %v", err)
	}
	for _, typ := range []string{"CUSTOM_", "CUSTOM_lower", "custom_X"} {
		if err := v.ValidatePayload(typ, json.RawMessage(`{}`)); err == nil {
			t.Errorf("ValidatePayload(%q) accepted", typ)
		}
	}
	if err := v.ValidatePayload("CUSTOM_X", json.RawMessage(`"str"`)); !errors.Is(err, &core.Error{Code: CodeInvalidType}) {
		t.Errorf("a string payload: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	v := newValidator(f)
	f.Add(`{"version":"1.0.0"}`)
	f.Add(`{"a":{"b":[1,{"c":2}]},"a":1}`)
	f.Fuzz(func(t *testing.T, s string) {
		env, err := v.Parse([]byte(s))
		if err != nil {
			var ce *core.Error
			if !errors.As(err, &ce) {
				t.Fatalf("not a *core.Error: %v", err)
			}
			if _, ok := LookupCode(ce.Code); !ok {
				t.Fatalf("code %s not in the catalogue", ce.Code)
			}
			return
		}
		if err := v.Validate(env); err != nil {
			t.Fatalf("Parse accepted what Validate refuses: %v", err)
		}
	})
}
