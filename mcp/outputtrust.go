package mcp

import "reflect"

// trustsOutput reports whether v, a handler's result, satisfies the tool's
// outputSchema by construction, so that it need not be checked against it:
// the schema was derived by AddTypedTool from the tool's result type (the
// schema describes what encoding/json writes for that type), v is of
// exactly that type, and v is not a nil pointer (which encodes as null, no
// object). A property test (typed_outputs_test.go) holds every typed tool
// mcprt registers to it. A hand-written outputSchema is always checked.
func (rt *registeredTool) trustsOutput(v any) bool {
	t := rt.def.outputType
	if t == nil || reflect.TypeOf(v) != t {
		return false
	}
	return t.Kind() != reflect.Pointer || !reflect.ValueOf(v).IsNil()
}
