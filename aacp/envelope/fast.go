package envelope

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/kaptinlin/jsonschema"

	"github.com/mcprt/mcprt/internal/jsontext"
)

// The fast paths of validation. They read JSON text with the module's
// one scanner (internal/jsontext). Each one only ever accepts: when it
// cannot tell, or finds a fault, the full check runs and makes the error,
// so that results and messages are those of the full check. Each accepts
// a subset of what the full check accepts (validate_test.go compares
// them).

// strictOK reports that data certainly passes checkStrict: valid UTF-8,
// one JSON object, nested at most MaxDepth deep, no key repeated in an
// object. Keys with escapes are left to checkStrict (it compares them
// decoded).
func strictOK(data []byte) bool {
	if !utf8.Valid(data) || !json.Valid(data) {
		return false
	}
	i := jsontext.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	_, ok := scanValue(data, i, 0)
	return ok
}

// scanValue walks the valid JSON value at data[i] (depth: the containers
// around it) and returns the index after it; false when it cannot vouch
// for it.
func scanValue(data []byte, i, depth int) (int, bool) {
	switch data[i] {
	case '{':
		if depth >= MaxDepth {
			return 0, false
		}
		var keys [][]byte
		i = jsontext.SkipSpace(data, i+1)
		if data[i] == '}' {
			return i + 1, true
		}
		for {
			end, plain := jsontext.ScanString(data, i)
			if !plain {
				return 0, false
			}
			key := data[i+1 : end-1]
			for _, k := range keys {
				if bytes.Equal(k, key) {
					return 0, false
				}
			}
			keys = append(keys, key)
			if len(keys) > 64 {
				return 0, false // many keys: leave them to the full check
			}
			i = jsontext.SkipSpace(data, end)
			i = jsontext.SkipSpace(data, i+1) // the colon
			var ok bool
			if i, ok = scanValue(data, i, depth+1); !ok {
				return 0, false
			}
			i = jsontext.SkipSpace(data, i)
			if data[i] == '}' {
				return i + 1, true
			}
			i = jsontext.SkipSpace(data, i+1) // the comma
		}
	case '[':
		if depth >= MaxDepth {
			return 0, false
		}
		i = jsontext.SkipSpace(data, i+1)
		if data[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = scanValue(data, i, depth+1); !ok {
				return 0, false
			}
			i = jsontext.SkipSpace(data, i)
			if data[i] == ']' {
				return i + 1, true
			}
			i = jsontext.SkipSpace(data, i+1)
		}
	case '"':
		end, _ := jsontext.ScanString(data, i)
		return end, true
	}
	return jsontext.SkipValue(data, i), true // a number or a literal
}

// quick is a compiled payload schema for the fast path: the keywords the
// payload schemas use. A schema with any other keyword gets no quick form.
type quick struct {
	typ       string // "" (any), object, string, array, number, boolean
	required  []string
	props     map[string]*quick
	enum      []string
	minLength int
	min, max  float64 // NaN: no bound
	items     *quick
	dateTime  bool
}

// compileQuick returns the quick form of a schema, or nil.
func compileQuick(src string) *quick {
	var raw map[string]json.RawMessage
	if json.Unmarshal([]byte(src), &raw) != nil {
		return nil
	}
	return quickOf(raw)
}

func quickOf(raw map[string]json.RawMessage) *quick {
	q := &quick{min: math.NaN(), max: math.NaN()}
	for k, v := range raw {
		var err error
		switch k {
		case "type":
			err = json.Unmarshal(v, &q.typ)
			switch q.typ {
			case "object", "string", "array", "number", "boolean":
			default:
				return nil
			}
		case "required":
			err = json.Unmarshal(v, &q.required)
		case "enum":
			err = json.Unmarshal(v, &q.enum) // strings only, else an error
		case "minLength":
			err = json.Unmarshal(v, &q.minLength)
		case "minimum":
			err = json.Unmarshal(v, &q.min)
		case "maximum":
			err = json.Unmarshal(v, &q.max)
		case "format":
			var f string
			err = json.Unmarshal(v, &f)
			if f != "date-time" {
				return nil
			}
			q.dateTime = true
		case "properties":
			var props map[string]map[string]json.RawMessage
			if err = json.Unmarshal(v, &props); err == nil {
				q.props = make(map[string]*quick, len(props))
				for name, p := range props {
					if q.props[name] = quickOf(p); q.props[name] == nil {
						return nil
					}
				}
			}
		case "items":
			var p map[string]json.RawMessage
			if err = json.Unmarshal(v, &p); err == nil {
				if q.items = quickOf(p); q.items == nil {
					return nil
				}
			}
		default:
			return nil
		}
		if err != nil {
			return nil
		}
	}
	return q
}

// acceptsJSON reports that data, one valid JSON value, certainly
// matches q. It reads data in place: strings with escapes are left to
// the full check.
func (q *quick) acceptsJSON(data []byte) bool {
	if !json.Valid(data) {
		return false
	}
	end, ok := q.acceptsAt(data, jsontext.SkipSpace(data, 0))
	return ok && jsontext.SkipSpace(data, end) == len(data)
}

// acceptsAt checks the value at data[i] (valid JSON) and returns the
// index after it.
func (q *quick) acceptsAt(data []byte, i int) (int, bool) {
	var kind string
	switch c := data[i]; {
	case c == '{':
		kind = "object"
	case c == '[':
		kind = "array"
	case c == '"':
		kind = "string"
	case c == 't' || c == 'f':
		kind = "boolean"
	case c == 'n':
		kind = "null"
	default:
		kind = "number"
	}
	if q.typ != "" && q.typ != kind || q.enum != nil && kind != "string" {
		return 0, false
	}
	switch kind {
	case "string":
		end, plain := jsontext.ScanString(data, i)
		if !plain {
			return 0, false
		}
		s := data[i+1 : end-1]
		if q.enum != nil && !containsBytes(q.enum, s) || utf8.RuneCount(s) < q.minLength ||
			q.dateTime && !jsonschema.IsDateTime(string(s)) {
			return 0, false
		}
		return end, true
	case "number":
		end := jsontext.SkipValue(data, i)
		return end, within(json.Number(data[i:end]), q.min, q.max)
	case "array":
		if q.items == nil {
			return scanValue(data, i, 0)
		}
		i = jsontext.SkipSpace(data, i+1)
		if data[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = q.items.acceptsAt(data, i); !ok {
				return 0, false
			}
			i = jsontext.SkipSpace(data, i)
			if data[i] == ']' {
				return i + 1, true
			}
			i = jsontext.SkipSpace(data, i+1)
		}
	case "object":
		if len(q.required) > 64 {
			return 0, false
		}
		var seen uint64
		i = jsontext.SkipSpace(data, i+1)
		for data[i] != '}' {
			end, plain := jsontext.ScanString(data, i)
			if !plain {
				return 0, false
			}
			key := data[i+1 : end-1]
			for k, r := range q.required {
				if r == string(key) {
					seen |= 1 << k
				}
			}
			i = jsontext.SkipSpace(data, jsontext.SkipSpace(data, end)+1) // past the colon
			var ok bool
			if p := q.props[string(key)]; p != nil {
				i, ok = p.acceptsAt(data, i)
			} else {
				i, ok = scanValue(data, i, 0)
			}
			if !ok {
				return 0, false
			}
			if i = jsontext.SkipSpace(data, i); data[i] == ',' {
				i = jsontext.SkipSpace(data, i+1)
			}
		}
		return i + 1, seen == 1<<len(q.required)-1
	}
	return scanValue(data, i, 0) // true, false, null
}

func containsBytes(list []string, b []byte) bool {
	for _, x := range list {
		if x == string(b) {
			return true
		}
	}
	return false
}

// within reports that the number n is certainly in [lo, hi] (NaN: no
// bound): strictly inside once rounded to a float64 (rounding keeps the
// order, so the exact value is inside too), or written exactly as a bound
// ("0", "1", "1.0").
func within(n json.Number, lo, hi float64) bool {
	x, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(x, 0) {
		return false
	}
	exact := func(b float64) bool {
		s := strconv.FormatFloat(b, 'f', -1, 64)
		return string(n) == s || string(n) == s+".0"
	}
	if !math.IsNaN(lo) && !(x > lo) && !exact(lo) {
		return false
	}
	if !math.IsNaN(hi) && !(x < hi) && !exact(hi) {
		return false
	}
	return true
}
