package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/mcprt/mcprt/core"

	"github.com/mcprt/mcprt/jsonrpc"
)

// decodeParams decodes a request's params object into v. Absent params
// decode as {}; params that are not an object, or whose members have the
// wrong types, are -32602.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		return nil
	}
	if !isObject(params) {
		return invalidParams("params must be an object")
	}
	if err := json.Unmarshal(params, v); err != nil {
		var te *json.UnmarshalTypeError
		if ok := asTypeError(err, &te); ok && te.Field != "" {
			return invalidParams("params." + te.Field + " must be " + jsonKind(te.Type.Kind().String()) +
				", got " + te.Value)
		}
		return invalidParams("params could not be decoded: " + err.Error())
	}
	return nil
}

func asTypeError(err error, te **json.UnmarshalTypeError) bool {
	e, ok := err.(*json.UnmarshalTypeError)
	if ok {
		*te = e
	}
	return ok
}

// jsonKind names a Go kind as a JSON type for error messages.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "ptr":
		return "a value of the right type"
	}
	return "a number"
}

// invalidParams is a -32602 error.
func invalidParams(msg string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+msg)
}

// isObject reports whether raw JSON is an object.
func isObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{'
	}
	return false
}

func quoteString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// marshalCompact encodes v as compact JSON without HTML escaping.
func marshalCompact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// isCoreError reports whether err is (or wraps) a *core.Error.
func isCoreError(err error, target **core.Error) bool { return errors.As(err, target) }
