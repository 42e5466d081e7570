package builtin

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The hand-written schemas and the Go types the handlers decode into and
// return must agree: the same members, the same required ones, and (for
// inputs) the same descriptions as the jsonschema tags.
func TestHandWrittenSchemasMatchTheirTypes(t *testing.T) {
	tests := []struct {
		name   string
		schema json.RawMessage
		typ    reflect.Type
	}{
		{"agent_send_message input", agentSendMessageInput, reflect.TypeFor[proxyArgs]()},
		{"agent_get_state input", agentGetStateInput, reflect.TypeFor[agentStateArgs]()},
		{"admin_register_tool input", adminRegisterInput, reflect.TypeFor[registerArgs]()},
		{"server_ping output", serverPingOutput, reflect.TypeFor[pingResult]()},
		{"health output", healthOutput, reflect.TypeFor[healthReport]()},
		{"agent_get_state output", agentGetStateOutput, reflect.TypeFor[agentStateResult]()},
		{"admin_register_tool output", adminRegisterOutput, reflect.TypeFor[registerResult]()},
		{"admin_unregister_tool output", adminUnregisterOutput, reflect.TypeFor[unregisterResult]()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var schema map[string]any
			if err := json.Unmarshal(tt.schema, &schema); err != nil {
				t.Fatal(err)
			}
			matchType(t, tt.name, schema, tt.typ)
		})
	}
}

// matchType compares an object schema with a struct type, recursing into
// struct-typed members whose schema lists properties.
func matchType(t *testing.T, where string, schema map[string]any, typ reflect.Type) {
	t.Helper()
	props, _ := schema["properties"].(map[string]any)
	var required []string
	for _, r := range schema["required"].([]any) {
		required = append(required, r.(string))
	}
	var names, wantRequired []string
	for f := range typ.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		names = append(names, name)
		if !strings.Contains(opts, "omitempty") {
			wantRequired = append(wantRequired, name)
		}
		prop, ok := props[name].(map[string]any)
		if !ok {
			t.Errorf("%s: field %s (%q) has no property in the schema", where, f.Name, name)
			continue
		}
		if desc, _ := prop["description"].(string); desc != f.Tag.Get("jsonschema") && strings.HasSuffix(where, "input") {
			t.Errorf("%s.%s: schema description %q, jsonschema tag %q", where, name, desc, f.Tag.Get("jsonschema"))
		}
		if _, nested := prop["properties"]; nested && f.Type.Kind() == reflect.Struct {
			matchType(t, where+"."+name, prop, f.Type)
		}
	}
	if len(names) != len(props) {
		t.Errorf("%s: the schema has properties %v, the type fields %v", where, keys(props), names)
	}
	slices.Sort(required)
	slices.Sort(wantRequired)
	if !slices.Equal(required, wantRequired) {
		t.Errorf("%s: required %v, but the type's fields without omitempty are %v", where, required, wantRequired)
	}
}
