package mcp

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A fastSchema decides, for a decoded instance, what kaptinlin decides, for
// the schemas written with the keywords tools use most: type, enum and
// const of strings, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
// minLength, maxLength, pattern, required, properties,
// additionalProperties, minProperties, maxProperties, items, minItems and
// maxItems, the boolean schemas, and annotations (title, description,
// default, examples, $comment, deprecated, readOnly, writeOnly, $schema and
// x-* members). A schema with any other keyword anywhere is not compiled:
// it is validated by kaptinlin alone, whole.
//
// It is compiled once from the schema document, its patterns with it, and
// walks the decoded instance without allocating (numbers with more than 15
// significant digits, or a fraction or exponent where an integer is asked
// for, are compared exactly, through math/big). It only answers valid or
// not: an instance it finds invalid is validated again by kaptinlin, whose
// problems are reported, so what callers see does not depend on which of
// the two ran. A differential fuzz test (schemafast_test.go) holds the two
// to the same answer on every instance.
type fastSchema struct {
	always, never bool  // the boolean schemas true and false
	types         uint8 // allowed kinds (typeMask bits); 0 means any
	enum          []string
	hasEnum       bool
	min, max      *bound // minimum / exclusiveMinimum, maximum / exclusiveMaximum
	minLen        int    // -1: none
	maxLen        int
	pattern       *regexp.Regexp
	required      []string
	props         map[string]*fastSchema
	additional    *fastSchema // nil: any other member is allowed
	minProps      int
	maxProps      int
	items         *fastSchema
	minItems      int
	maxItems      int
}

// bound is a numeric limit: exclusive or not, as a float64 (exact when the
// literal has at most 15 significant digits) and as the literal itself.
type bound struct {
	lit       string
	f         float64
	exact     bool
	exclusive bool
}

// Kinds of JSON values, as bits of fastSchema.types.
const (
	kindNull uint8 = 1 << iota
	kindBoolean
	kindObject
	kindArray
	kindNumber
	kindInteger
	kindString
)

var kindNames = map[string]uint8{"null": kindNull, "boolean": kindBoolean, "object": kindObject, "array": kindArray,
	"number": kindNumber, "integer": kindInteger, "string": kindString}

// fastAnnotations are the members that do not constrain instances.
var fastAnnotations = map[string]bool{"title": true, "description": true, "default": true, "examples": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true, "$schema": true}

// compileFast returns the fastSchema of the decoded schema doc, or nil when
// doc uses a keyword (or a keyword's form) that fastSchema does not model.
func compileFast(doc any) *fastSchema {
	switch d := doc.(type) {
	case bool:
		return &fastSchema{always: d, never: !d}
	case map[string]any:
		return compileFastObject(d)
	}
	return nil
}

func compileFastObject(d map[string]any) *fastSchema {
	s := &fastSchema{minLen: -1, maxLen: -1, minProps: -1, maxProps: -1, minItems: -1, maxItems: -1}
	for k, v := range d {
		ok := true
		switch k {
		case "type":
			ok = s.compileType(v)
		case "enum":
			s.enum, ok = stringList(v)
			s.hasEnum = ok
		case "const":
			var c string
			c, ok = v.(string)
			s.enum, s.hasEnum = []string{c}, true
			ok = ok && d["enum"] == nil // both: left to kaptinlin
		case "minimum", "exclusiveMinimum":
			s.min, ok = compileBound(v, k == "exclusiveMinimum", s.min)
		case "maximum", "exclusiveMaximum":
			s.max, ok = compileBound(v, k == "exclusiveMaximum", s.max)
		case "minLength":
			s.minLen, ok = count(v)
		case "maxLength":
			s.maxLen, ok = count(v)
		case "minProperties":
			s.minProps, ok = count(v)
		case "maxProperties":
			s.maxProps, ok = count(v)
		case "minItems":
			s.minItems, ok = count(v)
		case "maxItems":
			s.maxItems, ok = count(v)
		case "pattern":
			p, isStr := v.(string)
			var err error
			if s.pattern, err = regexp.Compile(p); !isStr || err != nil {
				ok = false
			}
		case "required":
			s.required, ok = stringList(v)
			ok = ok && len(s.required) <= 64 // validRaw keeps them in a bit set
		case "properties":
			m, isObj := v.(map[string]any)
			ok = isObj
			s.props = make(map[string]*fastSchema, len(m))
			for name, sub := range m {
				if s.props[name] = compileFast(sub); s.props[name] == nil {
					return nil
				}
			}
		case "additionalProperties":
			s.additional = compileFast(v)
			ok = s.additional != nil
		case "items":
			s.items = compileFast(v)
			ok = s.items != nil
		default:
			ok = fastAnnotations[k] || strings.HasPrefix(k, "x-")
		}
		if !ok {
			return nil
		}
	}
	return s
}

// compileType reads "type": one kind name or an array of them.
func (s *fastSchema) compileType(v any) bool {
	names, ok := stringList(v)
	if name, one := v.(string); one {
		names, ok = []string{name}, true
	}
	if !ok || len(names) == 0 {
		return false
	}
	for _, n := range names {
		bit, known := kindNames[n]
		if !known {
			return false
		}
		s.types |= bit
	}
	return true
}

// stringList reads a JSON array of strings.
func stringList(v any) ([]string, bool) {
	a, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(a))
	for i, e := range a {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// count reads a non-negative whole number written without fraction or
// exponent.
func count(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	c, err := strconv.Atoi(string(n))
	return c, err == nil && c >= 0
}

// compileBound reads a numeric limit; a second limit on the same side is
// left to kaptinlin.
func compileBound(v any, exclusive bool, prev *bound) (*bound, bool) {
	n, ok := v.(json.Number)
	if !ok || prev != nil {
		return nil, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return nil, false
	}
	return &bound{lit: string(n), f: f, exact: shortNumber(string(n)), exclusive: exclusive}, true
}

// shortNumber reports whether the literal has at most 15 significant
// digits: two such literals compare as their float64 values do.
func shortNumber(lit string) bool {
	digits, leading := 0, true
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		switch {
		case c == 'e' || c == 'E':
			return digits <= 15
		case c >= '1' && c <= '9', c == '0' && !leading:
			leading = false
			digits++
		}
	}
	return digits <= 15
}

// valid reports whether v, decoded by kaptinlin's decoder (json.Number for
// numbers), satisfies s.
func (s *fastSchema) valid(v any) bool {
	if s.always {
		return true
	}
	if s.never {
		return false
	}
	switch x := v.(type) {
	case nil:
		return s.allows(kindNull) && !s.hasEnum
	case bool:
		return s.allows(kindBoolean) && !s.hasEnum
	case string:
		return s.allows(kindString) && s.validString(x)
	case json.Number:
		return s.validNumber(x)
	case []any:
		return s.allows(kindArray) && !s.hasEnum && s.validArray(x)
	case map[string]any:
		return s.allows(kindObject) && !s.hasEnum && s.validObject(x)
	}
	return false
}

func (s *fastSchema) allows(kind uint8) bool { return s.types == 0 || s.types&kind != 0 }

func (s *fastSchema) validString(x string) bool {
	if s.hasEnum {
		found := false
		for _, e := range s.enum {
			if e == x {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if s.minLen >= 0 || s.maxLen >= 0 {
		n := utf8.RuneCountInString(x)
		if (s.minLen >= 0 && n < s.minLen) || (s.maxLen >= 0 && n > s.maxLen) {
			return false
		}
	}
	return s.pattern == nil || s.pattern.MatchString(x)
}

func (s *fastSchema) validNumber(x json.Number) bool {
	if s.hasEnum {
		return false
	}
	if s.types != 0 && s.types&kindNumber == 0 {
		if s.types&kindInteger == 0 || !isInteger(string(x)) {
			return false
		}
	}
	return s.within(string(x))
}

func (s *fastSchema) validArray(x []any) bool {
	if (s.minItems >= 0 && len(x) < s.minItems) || (s.maxItems >= 0 && len(x) > s.maxItems) {
		return false
	}
	if s.items != nil {
		for _, e := range x {
			if !s.items.valid(e) {
				return false
			}
		}
	}
	return true
}

func (s *fastSchema) validObject(x map[string]any) bool {
	if (s.minProps >= 0 && len(x) < s.minProps) || (s.maxProps >= 0 && len(x) > s.maxProps) {
		return false
	}
	for _, r := range s.required {
		if _, ok := x[r]; !ok {
			return false
		}
	}
	for k, e := range x {
		if p, ok := s.props[k]; ok {
			if !p.valid(e) {
				return false
			}
		} else if s.additional != nil && !s.additional.valid(e) {
			return false
		}
	}
	return true
}

// isInteger reports whether the number literal has no fractional part.
func isInteger(lit string) bool {
	if !strings.ContainsAny(lit, ".eE") {
		return true
	}
	r, ok := new(big.Rat).SetString(lit)
	return ok && r.IsInt()
}

// within reports whether the number literal lies within s's bounds.
func (s *fastSchema) within(lit string) bool {
	if s.min == nil && s.max == nil {
		return true
	}
	f, err := strconv.ParseFloat(lit, 64)
	exact := err == nil && shortNumber(lit)
	if b := s.min; b != nil {
		c := compareNumbers(lit, f, exact, b)
		if c < 0 || (c == 0 && b.exclusive) {
			return false
		}
	}
	if b := s.max; b != nil {
		c := compareNumbers(lit, f, exact, b)
		if c > 0 || (c == 0 && b.exclusive) {
			return false
		}
	}
	return true
}

// compareNumbers compares the literal (whose float64 is f, exact when
// both it and b are short) with b: -1, 0 or +1.
func compareNumbers(lit string, f float64, exact bool, b *bound) int {
	if exact && b.exact {
		switch {
		case f < b.f:
			return -1
		case f > b.f:
			return 1
		}
		return 0
	}
	x, ok1 := new(big.Rat).SetString(lit)
	y, ok2 := new(big.Rat).SetString(b.lit)
	if !ok1 || !ok2 {
		return 0
	}
	return x.Cmp(y)
}
