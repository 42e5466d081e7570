package mcp

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strings"

	"github.com/kaptinlin/jsonschema"
)

// The screen is a cheap first pass over an instance, run before kaptinlin.
// kaptinlin evaluates every member and item of an instance separately and
// builds a result (and, when it fails, an error and a message) for each, so
// an object with 100,000 members that additionalProperties forbids costs it
// hundreds of megabytes before mcprt can cap the list of problems. The
// screen finds the problems that come one per member or item — a member or
// item whose schema is false, a value of the wrong JSON type — walking the
// instance in a fixed order (members by name, items by index), allocating
// nothing for a value that passes, and stopping at maxSchemaProblems.
//
// The screen is sound but not complete: it follows only the keywords that
// apply to a value unconditionally (properties, patternProperties,
// additionalProperties, prefixItems, items, allOf, $ref; and
// unevaluatedProperties false where no subschema could evaluate the
// member) and checks only
// what it can decide exactly, so every problem it reports is one kaptinlin
// reports too. When it finds maxSchemaProblems problems the instance is
// certainly invalid and kaptinlin is not run; otherwise kaptinlin runs as
// usual and its problems are the ones listed.
//
// The fast validator (schemafast*.go) does not make the screen redundant:
// it only answers valid or not, and stops at the first problem, so the
// problems an invalid instance gets are still kaptinlin's, and the screen
// is what bounds kaptinlin's cost on an instance with very many. Without
// it, BenchmarkSchemaValidateHostile/additionalPropertiesFalse (100,000
// forbidden members) costs 137 MB and 2.4 million allocations a call
// instead of 16 MB and 200,000.

// maxScreenHops bounds chains of $ref and allOf that do not descend into
// the instance (a schema may refer to itself).
const maxScreenHops = 32

// screenPattern is one patternProperties entry, compiled the way kaptinlin
// compiles it (Go's regexp package).
type screenPattern struct {
	re  *regexp.Regexp
	sub *jsonschema.Schema
}

// screenPatterns compiles the patternProperties of every subschema of root,
// in pattern order. (kaptinlin rejects a schema with a pattern Go cannot
// compile; were one to get through, its subschema is left out and the
// screen leaves that subschema's additionalProperties to kaptinlin.)
func screenPatterns(root *jsonschema.Schema) map[*jsonschema.Schema][]screenPattern {
	out := map[*jsonschema.Schema][]screenPattern{}
	walkSchema(root, func(s *jsonschema.Schema) {
		if s.PatternProperties == nil {
			return
		}
		pats := make([]screenPattern, 0, len(*s.PatternProperties))
		for _, p := range slices.Sorted(maps.Keys(*s.PatternProperties)) {
			re, err := regexp.Compile(p)
			if err != nil {
				return
			}
			pats = append(pats, screenPattern{re, (*s.PatternProperties)[p]})
		}
		out[s] = pats
	})
	return out
}

// evaluatedNames describes which members the subschemas of a schema with
// "unevaluatedProperties": false might evaluate: those named in names or
// matching one of patterns. A member outside both is certainly unevaluated.
type evaluatedNames struct {
	names    map[string]bool
	patterns []*regexp.Regexp
}

// screenUnevaluated returns, for each subschema of root whose
// unevaluatedProperties is false, the members its in-place subschemas might
// evaluate. A subschema is left out when that cannot be told: somewhere in
// reach is additionalProperties, a nested unevaluatedProperties, a
// $dynamicRef or a pattern Go cannot compile.
func screenUnevaluated(root *jsonschema.Schema) map[*jsonschema.Schema]*evaluatedNames {
	out := map[*jsonschema.Schema]*evaluatedNames{}
	walkSchema(root, func(s *jsonschema.Schema) {
		u := s.UnevaluatedProperties
		if u == nil || u.Boolean == nil || *u.Boolean {
			return
		}
		e := &evaluatedNames{names: map[string]bool{}}
		seen := map[*jsonschema.Schema]bool{}
		var visit func(*jsonschema.Schema) bool
		visit = func(n *jsonschema.Schema) bool {
			if n == nil || seen[n] {
				return true
			}
			seen[n] = true
			if n.AdditionalProperties != nil || n.DynamicRef != "" || (n != s && n.UnevaluatedProperties != nil) {
				return false
			}
			if n.Properties != nil {
				for k := range *n.Properties {
					e.names[k] = true
				}
			}
			if n.PatternProperties != nil {
				for p := range *n.PatternProperties {
					re, err := regexp.Compile(p)
					if err != nil {
						return false
					}
					e.patterns = append(e.patterns, re)
				}
			}
			kids := slices.Concat([]*jsonschema.Schema{n.ResolvedRef, n.Not, n.If, n.Then, n.Else}, n.AllOf, n.AnyOf, n.OneOf)
			for _, k := range kids {
				if !visit(k) {
					return false
				}
			}
			for _, k := range n.DependentSchemas {
				if !visit(k) {
					return false
				}
			}
			return true
		}
		if visit(s) {
			out[s] = e
		}
	})
	return out
}

// covers reports whether a subschema might evaluate the member name.
func (e *evaluatedNames) covers(name string) bool {
	if e.names[name] {
		return true
	}
	for _, re := range e.patterns {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// screener holds one screening pass.
type screener struct {
	patterns    map[*jsonschema.Schema][]screenPattern
	unevaluated map[*jsonschema.Schema]*evaluatedNames
	steps       int // (schema, value) visits left; 0 ends the pass
	path        []pathToken
	problems    []schemaProblem
}

// screen returns up to maxSchemaProblems problems of v against s found by
// the screen, in the order it met them.
func (cs *compiledSchema) screen(v any, budget int) []schemaProblem {
	c := screener{patterns: cs.patterns, unevaluated: cs.unevaluated, steps: budget, path: make([]pathToken, 0, 8)}
	c.value(cs.schema, v, 0)
	return c.problems
}

// done reports whether the pass should stop.
func (c *screener) done() bool { return len(c.problems) >= maxSchemaProblems || c.steps <= 0 }

// add records a problem at the current path.
func (c *screener) add(msg string) {
	c.problems = append(c.problems, schemaProblem{Path: jsonPointerOf(c.path), Message: clipText(msg, 300)})
}

// value screens v against s; hops counts $ref and allOf steps taken
// without descending into v.
func (c *screener) value(s *jsonschema.Schema, v any, hops int) {
	if s == nil || s.Boolean != nil || c.done() {
		return // a false schema is reported by the keyword that reached it
	}
	c.steps--
	if s.Ref != "" || s.DynamicRef != "" {
		// Draft-07 ignores a $ref's siblings and a $dynamicRef's target
		// depends on the evaluation; leave the siblings to kaptinlin.
		if s.ResolvedRef != nil && s.DynamicRef == "" && hops < maxScreenHops {
			c.value(s.ResolvedRef, v, hops+1)
		}
		return
	}
	if hops < maxScreenHops {
		for _, sub := range s.AllOf {
			c.value(sub, v, hops+1)
		}
	}
	if msg := typeMismatch(s.Type, v); msg != "" {
		c.add(msg)
		return
	}
	switch v := v.(type) {
	case map[string]any:
		c.members(s, v)
	case []any:
		c.items(s, v)
	}
}

// members screens the members of obj against s's member keywords.
func (c *screener) members(s *jsonschema.Schema, obj map[string]any) {
	pats, patsOK := c.patterns[s]
	unevaluated := c.unevaluated[s]
	if s.Properties == nil && s.PatternProperties == nil && s.AdditionalProperties == nil && unevaluated == nil {
		return
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if c.done() {
			return
		}
		c.path = append(c.path, pathToken{name: k})
		matched := false
		if s.Properties != nil {
			if sub, ok := (*s.Properties)[k]; ok {
				matched = true
				c.member(sub, obj[k], "properties")
			}
		}
		for _, p := range pats {
			if p.re.MatchString(k) {
				matched = true
				c.member(p.sub, obj[k], "patternProperties")
			}
		}
		if !matched && s.AdditionalProperties != nil && (s.PatternProperties == nil || patsOK) {
			c.member(s.AdditionalProperties, obj[k], "additionalProperties")
		}
		if unevaluated != nil && !unevaluated.covers(k) {
			c.member(s.UnevaluatedProperties, obj[k], "unevaluatedProperties")
		}
		c.path = c.path[:len(c.path)-1]
	}
}

// member screens one member or item, reached through keyword, against sub.
func (c *screener) member(sub *jsonschema.Schema, v any, keyword string) {
	if sub.Boolean == nil {
		c.value(sub, v, 0)
		return
	}
	if !*sub.Boolean && !c.done() {
		t := c.path[len(c.path)-1]
		if t.isIndex {
			c.add(fmt.Sprintf("item %d is not allowed: %s", t.index, falseReasons[keyword]))
		} else {
			c.add(fmt.Sprintf("property %q is not allowed: %s", t.name, falseReasons[keyword]))
		}
	}
}

// items screens the items of arr against s's prefixItems and items.
func (c *screener) items(s *jsonschema.Schema, arr []any) {
	if len(s.PrefixItems) == 0 && s.Items == nil {
		return
	}
	for i, item := range arr {
		if c.done() {
			return
		}
		sub, keyword := s.Items, "items"
		if i < len(s.PrefixItems) {
			sub, keyword = s.PrefixItems[i], "prefixItems"
		}
		if sub == nil {
			continue
		}
		c.path = append(c.path, pathToken{index: i, isIndex: true})
		c.member(sub, item, keyword)
		c.path = c.path[:len(c.path)-1]
	}
}

// typeMismatch returns kaptinlin's message when v's JSON type is certainly
// not one of types, and "" when it is or when only kaptinlin can tell (a
// number with a fraction or an exponent against "integer").
func typeMismatch(types jsonschema.SchemaType, v any) string {
	if len(types) == 0 {
		return ""
	}
	var got string
	switch v := v.(type) {
	case nil:
		got = "null"
	case bool:
		got = "boolean"
	case string:
		got = "string"
	case map[string]any:
		got = "object"
	case []any:
		got = "array"
	case json.Number:
		if slices.Contains(types, "number") {
			return ""
		}
		integral := !strings.ContainsAny(string(v), ".eE")
		if slices.Contains(types, "integer") {
			if integral {
				return ""
			}
			return "" // 1.0 and 1e2 are integers: kaptinlin decides
		}
		got = "number"
		if r, ok := new(big.Rat).SetString(string(v)); integral || (ok && r.IsInt()) {
			got = "integer"
		}
	default:
		return ""
	}
	if slices.Contains(types, got) {
		return ""
	}
	return "Value is " + got + " but should be " + strings.Join(types, ", ")
}
