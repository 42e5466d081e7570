package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"sync"

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

// marshalCompact encodes v as compact JSON without HTML escaping, into a
// new slice of its own.
func marshalCompact(v any) ([]byte, error) {
	e := getEncoder()
	defer putEncoder(e)
	js, err := e.encode(v)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), js...), nil
}

// pooledEncoder is a reusable JSON encoder without HTML escaping: encode
// uses encoding/json, encodeLimited (resultenc.go) streams into out.
type pooledEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
	out limitBuffer
}

var encoders = sync.Pool{New: func() any {
	e := &pooledEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

func getEncoder() *pooledEncoder { return encoders.Get().(*pooledEncoder) }

func putEncoder(e *pooledEncoder) {
	if e.buf.Cap() > 64<<10 { // let huge buffers go
		return
	}
	if cap(e.out.buf) > 64<<10 {
		e.out.buf = nil
	}
	encoders.Put(e)
}

// encode returns v's compact JSON; the slice is valid until the encoder's
// next use.
func (e *pooledEncoder) encode(v any) ([]byte, error) {
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")), nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// isCoreError reports whether err is (or wraps) a *core.Error.
func isCoreError(err error, target **core.Error) bool { return errors.As(err, target) }
