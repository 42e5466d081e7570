package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// RedactedValue replaces the value of every key that matches a redaction
// key, case-insensitively, at any depth.
const RedactedValue = "[REDACTED]"

// TruncatedValue replaces a container nested MaxRedactDepth levels deep, and
// a value whose JSON encoding would be infinite (a pointer cycle).
const TruncatedValue = "[TRUNCATED]"

// MaxRedactDepth is how many levels of nested containers Redact and the
// logger keep; a container at this depth becomes TruncatedValue.
const MaxRedactDepth = 64

// invalidJSONValue replaces a json.RawMessage that does not hold valid JSON:
// it could not be encoded anyway, and its text may hold anything.
const invalidJSONValue = "[INVALID JSON]"

// maxFastKeyLen bounds the keys IsRedacted lowercases on the stack.
const maxFastKeyLen = 64

// DefaultRedactKeys returns the default redaction keys: the keys whose
// values logs show as "[REDACTED]" unless configured otherwise.
func DefaultRedactKeys() []string {
	return []string{"token", "key", "secret", "password", "apiKey", "authorization", "bearer", "session", "cookie"}
}

// Redactor redacts and sanitizes values: see NewLogger for the rules. It
// is immutable after
// NewRedactor and safe for concurrent use. A nil *Redactor redacts nothing
// but still sanitizes.
type Redactor struct {
	keys  []string            // the redaction keys as given (empty ones dropped)
	lower map[string]struct{} // keys lowercased, used when ascii is true
	ascii bool                // every key is ASCII: IsRedacted may use lower
}

// NewRedactor returns a Redactor for the given redaction keys. Matching is
// exact but case-insensitive; empty keys are ignored. keys is copied.
func NewRedactor(keys []string) *Redactor {
	r := &Redactor{lower: make(map[string]struct{}, len(keys)), ascii: true}
	for _, k := range keys {
		if k == "" {
			continue
		}
		r.keys = append(r.keys, k)
		r.lower[strings.ToLower(k)] = struct{}{}
		if !isASCIIString(k) {
			r.ascii = false
		}
	}
	return r
}

// IsRedacted reports whether key matches a redaction key (case-insensitive,
// exact): with the key "apiKey", "APIKEY" matches and "monkey" does not.
// It does not allocate.
func (r *Redactor) IsRedacted(key string) bool {
	if r == nil || len(r.keys) == 0 || key == "" {
		return false
	}
	if r.ascii && len(key) <= maxFastKeyLen {
		var buf [maxFastKeyLen]byte
		if lowerASCII(&buf, key) {
			_, ok := r.lower[string(buf[:len(key)])]
			return ok
		}
	}
	for _, k := range r.keys {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

// lowerASCII writes the lowercase form of key into buf and reports whether
// key is ASCII (when it is not, buf holds garbage). len(key) <= len(buf).
func lowerASCII(buf *[maxFastKeyLen]byte, key string) bool {
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 0x80 {
			return false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return true
}

func isASCIIString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Redact returns a redacted, sanitized deep copy of v. Any map key or
// struct field (by its JSON name) that matches a redaction key has its value
// replaced by RedactedValue, at any depth: maps, slices, arrays, structs,
// pointers, and json.RawMessage or []byte holding JSON. Every string leaf
// and every map key is sanitized (see Sanitize). v is never modified.
//
// Values other than nil, booleans, numbers, strings, time.Time,
// time.Duration, map[string]any, []any, map[string]string, []string,
// json.RawMessage, []byte and errors are converted through a JSON round trip
// (json.Marshal, then decoding with UseNumber): structs become
// map[string]any keyed by their JSON field names, and pointers are
// followed. An error becomes its sanitized Error() text. A json.RawMessage
// or []byte keeps its type; a json.RawMessage that is not valid JSON becomes
// "[INVALID JSON]", a []byte that is not JSON is copied as it is. A value
// that cannot be encoded becomes "[UNENCODABLE: reason]" (a pointer cycle
// becomes TruncatedValue), and containers MaxRedactDepth deep become
// TruncatedValue.
func (r *Redactor) Redact(v any) any {
	out, _ := r.walk(v, 0, modeCopy)
	return out
}

// walkMode says how walk may treat the containers it meets.
type walkMode uint8

const (
	// modeCopy builds a fresh container for every container (Redact).
	modeCopy walkMode = iota
	// modeShare copies a container only when something in it changes and
	// otherwise returns the caller's value (the log handler: the result is
	// encoded at once and never modified).
	modeShare
	// modeOwned changes containers in place: the value was decoded by walk
	// itself and nobody else holds it.
	modeOwned
)

// walk redacts and sanitizes v. It reports whether the result differs from
// v; in modeCopy the result is always a fresh copy and the flag is
// meaningless.
func (r *Redactor) walk(v any, depth int, mode walkMode) (any, bool) {
	switch x := v.(type) {
	case nil, bool, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64, uintptr,
		float32, float64, json.Number, time.Time, time.Duration:
		return v, false
	case string:
		return sanitizeLeaf(x)
	case map[string]any:
		return walkMap(r, x, depth, mode, any(RedactedValue), func(v any) (any, bool) {
			return r.walk(v, depth+1, mode)
		})
	case []any:
		return walkSlice(x, depth, mode, func(v any) (any, bool) {
			return r.walk(v, depth+1, mode)
		})
	case map[string]string:
		return walkMap(r, x, depth, mode, RedactedValue, sanitizeLeaf)
	case []string:
		return walkSlice(x, depth, mode, sanitizeLeaf)
	case json.RawMessage:
		return r.walkRaw(x, depth, mode, true)
	case []byte:
		return r.walkRaw(x, depth, mode, false)
	case error:
		return errorText(x), true
	default:
		return r.walkEncoded(v, depth)
	}
}

// sanitizeLeaf sanitizes a string and reports whether it changed (a
// control character always lengthens it).
func sanitizeLeaf(s string) (string, bool) {
	out := Sanitize(s)
	return out, len(out) != len(s)
}

// walkMap redacts and sanitizes a map: keys matching a redaction key get
// redacted, the other values go through leaf, and keys are sanitized.
func walkMap[V any](r *Redactor, m map[string]V, depth int, mode walkMode, redacted V, leaf func(V) (V, bool)) (any, bool) {
	if m == nil {
		return m, false
	}
	if depth >= MaxRedactDepth {
		return TruncatedValue, true
	}
	var out map[string]V
	switch mode {
	case modeCopy:
		out = make(map[string]V, len(m))
	case modeOwned:
		out = m
	}
	changed := false
	for k, val := range m {
		nv, ch := redacted, true
		if !r.IsRedacted(k) {
			nv, ch = leaf(val)
		}
		nk, kch := sanitizeLeaf(k)
		if mode == modeCopy {
			out[nk] = nv
			continue
		}
		if !ch && !kch {
			continue
		}
		changed = true
		if out == nil {
			out = maps.Clone(m)
		}
		if kch {
			delete(out, k)
		}
		out[nk] = nv
	}
	if mode != modeCopy && !changed {
		return m, false
	}
	return out, true
}

// walkSlice redacts and sanitizes the elements of a slice through leaf.
func walkSlice[V any](s []V, depth int, mode walkMode, leaf func(V) (V, bool)) (any, bool) {
	if s == nil {
		return s, false
	}
	if depth >= MaxRedactDepth {
		return TruncatedValue, true
	}
	var out []V
	switch mode {
	case modeCopy:
		out = make([]V, len(s))
	case modeOwned:
		out = s
	}
	changed := false
	for i, val := range s {
		nv, ch := leaf(val)
		if mode != modeCopy && !ch {
			continue
		}
		changed = true
		if out == nil {
			out = slices.Clone(s)
		}
		out[i] = nv
	}
	if mode != modeCopy && !changed {
		return s, false
	}
	return out, true
}

// walkRaw redacts JSON text held in a json.RawMessage (raw) or a []byte.
func (r *Redactor) walkRaw(b []byte, depth int, mode walkMode, raw bool) (any, bool) {
	keep := func() (any, bool) {
		if mode != modeCopy || b == nil {
			return v2bytes(b, raw), false
		}
		return v2bytes(bytes.Clone(b), raw), true
	}
	if b == nil {
		return keep() // a nil json.RawMessage encodes as null
	}
	if !json.Valid(b) {
		if raw {
			return invalidJSONValue, true
		}
		return keep()
	}
	tree, err := decodeJSONTree(b)
	if err != nil {
		return encodeFailure(err), true
	}
	nv, ch := r.walk(tree, depth, modeOwned)
	if !ch {
		return keep()
	}
	out, err := encodeJSONTree(nv)
	if err != nil {
		return encodeFailure(err), true
	}
	return v2bytes(out, raw), true
}

// v2bytes gives b the type the caller had: json.RawMessage or []byte.
func v2bytes(b []byte, raw bool) any {
	if raw {
		return json.RawMessage(b)
	}
	return b
}

// walkEncoded converts v through a JSON round trip, then redacts the result.
func (r *Redactor) walkEncoded(v any, depth int) (any, bool) {
	data, err := marshalSafely(v)
	if err != nil {
		return encodeFailure(err), true
	}
	tree, err := decodeJSONTree(data)
	if err != nil {
		return encodeFailure(err), true
	}
	out, _ := r.walk(tree, depth, modeOwned)
	return out, true
}

// errorText returns the sanitized Error() text of err. A typed nil pointer
// whose Error method panics gives "<nil>" (as slog writes it), another
// panic "[PANIC: value]".
func errorText(err error) (text string) {
	defer func() {
		if p := recover(); p != nil {
			text = "[PANIC: " + Sanitize(fmt.Sprint(p)) + "]"
			if rv := reflect.ValueOf(err); rv.Kind() == reflect.Pointer && rv.IsNil() {
				text = "<nil>"
			}
		}
	}()
	return Sanitize(err.Error())
}

// marshalSafely is json.Marshal turning a panic (in a MarshalJSON method,
// say) into an error.
func marshalSafely(v any) (data []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("json encoding panicked: %v", p)
		}
	}()
	return json.Marshal(v)
}

// decodeJSONTree decodes one valid JSON text, keeping numbers as json.Number.
func decodeJSONTree(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return tree, nil
}

// encodeJSONTree encodes a decoded tree compactly, without HTML escaping.
func encodeJSONTree(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// encodeFailure is what a value that cannot be encoded as JSON becomes.
func encodeFailure(err error) string {
	var uv *json.UnsupportedValueError
	if errors.As(err, &uv) && strings.HasPrefix(uv.Str, "encountered a cycle") {
		return TruncatedValue
	}
	return "[UNENCODABLE: " + Sanitize(err.Error()) + "]"
}
