package mcp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/kaptinlin/jsonschema"
)

// Bounds on tool schemas and on the values they validate.
const (
	maxSchemaBytes    = 256 << 10 // a schema's encoded size
	maxSchemaDepth    = 64        // nesting of JSON objects and arrays in a schema; the root is level 1
	maxNumberLen      = 1000      // characters of one JSON number literal
	maxNumberExponent = 1000      // magnitude of a JSON number's exponent
	// maxSchemaProblems is how many problems validate lists. Past it,
	// validate adds one summary entry, and the screen and the number
	// checks stop looking: their cost, and the size of the error, do not
	// grow with the number of problems in an instance.
	maxSchemaProblems = 20
)

// dialectOf returns the dialect a "$schema" value selects (2020-12, the
// default, or draft-07; https or http, "#" or not), or "" for any other.
// kaptinlin implements draft-07 semantics ("definitions", array "items" with
// "additionalItems", "dependencies", "$id":"#a" anchors, $ref overriding its
// siblings) but leniently: array "items" and "definitions" work in 2020-12
// too, and the newer keywords it models (prefixItems, $defs, $anchor,
// dependentRequired, dependentSchemas, unevaluated*) apply in draft-07 too.
func dialectOf(uri string) jsonschema.Dialect {
	rest, https := strings.CutPrefix(uri, "https://")
	rest, http := strings.CutPrefix(rest, "http://")
	switch rest = strings.TrimSuffix(rest, "#"); {
	case https == http: // neither scheme, or both
		return ""
	case rest == "json-schema.org/draft/2020-12/schema":
		return jsonschema.Draft202012
	case rest == "json-schema.org/draft-07/schema":
		return jsonschema.Draft7
	}
	return ""
}

// schemaCompiler compiles tool schemas: one per Server, no global state,
// safe for concurrent use. Each compile uses a fresh kaptinlin Compiler with
// its URL loaders (http and https by default) deleted, so a $ref never
// reaches the network. A shared Compiler would be wrong: kaptinlin caches
// schemas by "$id", hands back the cached one when a later schema declares
// the same "$id", and resolves $refs against every schema it has seen.
type schemaCompiler struct{ count atomic.Int64 }

// newSchemaCompiler returns a schemaCompiler that never fetches schemas.
func newSchemaCompiler() *schemaCompiler { return &schemaCompiler{} }

// compilations reports how many times compile was called (successfully or
// not), so that tests can prove no schema is compiled during a call.
func (c *schemaCompiler) compilations() int64 { return c.count.Load() }

// compiledSchema validates instances against one compiled schema. It is safe
// for concurrent use and never compiles anything while validating.
type compiledSchema struct {
	schema *jsonschema.Schema
	// fast, when the schema uses only the keywords it models, decides
	// validity without kaptinlin (schemafast.go); nil otherwise.
	fast   *fastSchema
	decode func([]byte) (any, error) // kaptinlin's exact JSON decoder
	// patterns and unevaluated prepare the screen (schemascreen.go).
	patterns    map[*jsonschema.Schema][]screenPattern
	unevaluated map[*jsonschema.Schema]*evaluatedNames
	// copies, if set, are independent compilations of the schema, one per
	// evaluation running at once: kaptinlin rebuilds its patternProperties
	// regexp cache on every evaluation and compiles a "pattern" beside a
	// $ref on first use, writing into the schema it evaluates. Each
	// evaluation takes a copy for its time, so up to len(copies) run in
	// parallel and none shares what kaptinlin writes.
	copies chan *jsonschema.Schema
}

// maxSchemaCopies bounds the copies of a schema kept for parallel
// evaluation (see compiledSchema.copies).
const maxSchemaCopies = 8

// schemaProblem is one reason an instance does not validate: Path is a JSON
// Pointer into the instance ("" for the root), Message says what is wrong.
type schemaProblem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// compile checks and compiles a tool's inputSchema or outputSchema (role
// names it in errors): a JSON object within the bounds, "type": "object" at
// its root, in a dialect dialectOf accepts, each $ref resolving inside it.
func (c *schemaCompiler) compile(role string, raw json.RawMessage) (*compiledSchema, error) {
	c.count.Add(1)
	if len(raw) > maxSchemaBytes {
		return nil, fmt.Errorf("%s is %d bytes; the limit is %d bytes (256 KiB): share repeated parts through $defs", role, len(raw), maxSchemaBytes)
	}
	kc := newKaptinlinCompiler()
	decode := kc.MediaTypes["application/json"] // exact: json.Number, unique names, UTF-8, no trailing data
	doc, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %s", role, decodeError(err))
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a JSON object, got %s", role, clipJSON(doc))
	}
	checkTree(doc, nil, maxSchemaDepth, func(path []pathToken, msg string) bool {
		err = fmt.Errorf("%s: at %q: %s", role, jsonPointerOf(path), msg)
		return false
	})
	if err != nil {
		return nil, err
	}
	if t, ok := root["type"]; !ok {
		return nil, fmt.Errorf(`%s must have "type": "object" at its root, got no "type"`, role)
	} else if t != "object" {
		return nil, fmt.Errorf(`%s must have "type": "object" at its root, got %s`, role, clipJSON(t))
	}
	if d, ok := root["$schema"]; ok {
		if s, _ := d.(string); dialectOf(s) == "" {
			return nil, fmt.Errorf(`%s: unsupported JSON Schema dialect %s: use 2020-12 (no $schema) or draft-07 ("http://json-schema.org/draft-07/schema#")`, role, clipJSON(d))
		}
	}
	s, err := kc.Compile(raw)
	if err != nil {
		return nil, fmt.Errorf("%s does not compile: %v", role, err)
	}
	s.ResolveUnresolvedReferences() // refs to $anchors met later in kaptinlin's walk
	if refs := s.UnresolvedReferenceURIs(); len(refs) > 0 {
		ref, why := slices.Min(refs), "mcprt never fetches schemas over the network; inline it under $defs"
		if strings.HasPrefix(ref, "#") {
			why = "the schema has no such location or $anchor; point it at a subschema of this schema, e.g. under $defs"
		}
		return nil, fmt.Errorf("%s: $ref %q cannot be resolved: %s", role, ref, why)
	}
	cs := &compiledSchema{schema: s, decode: decode}
	var nested []string
	writes := prepareKaptinlin(s, func(sub *jsonschema.Schema) {
		if sub.Schema != "" && dialectOf(sub.Schema) == "" {
			nested = append(nested, sub.Schema)
		}
	})
	if len(nested) > 0 {
		return nil, fmt.Errorf(`%s: unsupported JSON Schema dialect %q in a subschema: use 2020-12 (no $schema) or draft-07`, role, slices.Min(nested))
	}
	if writes {
		n := max(2, min(runtime.GOMAXPROCS(0), maxSchemaCopies))
		cs.copies = make(chan *jsonschema.Schema, n)
		for range n {
			k, err := newKaptinlinCompiler().Compile(raw) // compiled once already: it compiles again
			if err != nil {
				return nil, fmt.Errorf("%s does not compile: %v", role, err)
			}
			k.ResolveUnresolvedReferences()
			prepareKaptinlin(k, func(*jsonschema.Schema) {})
			cs.copies <- k
		}
	}
	cs.patterns, cs.unevaluated = screenPatterns(s), screenUnevaluated(s)
	cs.fast = compileFast(doc)
	return cs, nil
}

// validate returns nil if instance is valid, else its problems sorted by
// path then message: at most maxSchemaProblems of them, then one summary
// entry if there are more. Numbers are decoded exactly (9007199254740993
// stays itself). Duplicate member names, invalid UTF-8 (a later parser could
// read another value) and numbers out of bounds (exact arithmetic on
// 1e999999 is slow) are problems.
//
// Cost: for a schema fastSchema models, one pass over the instance's text
// (schemafast_raw.go), which settles every valid value. Otherwise (and for
// every invalid value, to report kaptinlin's problems) decoding the
// instance, a screen (see schemascreen.go) that
// allocates nothing for a value that passes and stops at maxSchemaProblems,
// plus kaptinlin — which is run only when the screen did not already find
// maxSchemaProblems problems. An instance with any number of members that
// additionalProperties forbids, or items of the wrong type, therefore costs
// about what decoding it costs.
func (s *compiledSchema) validate(instance json.RawMessage) []schemaProblem {
	return s.validateInto(instance, nil)
}

// validateInto is validate that, given a sink (a typed tool's arguments,
// argsdecode.go), decodes the members into it in the pass that reads the
// text: the fast pass, else the one that decodes the value kaptinlin
// validates (argsdecode_tree.go). When it finds problems the sink gives
// up.
func (s *compiledSchema) validateInto(instance json.RawMessage, sink *argsTarget) []schemaProblem {
	if s.fast != nil && s.fast.validRawInto(instance, sink) {
		return nil // valid, read straight from the text (schemafast_raw.go)
	}
	p := s.validateDecoded(instance, sink)
	if p != nil && sink != nil {
		sink.ok = false
	}
	return p
}

// validateDecoded is validateInto past the fast pass: the instance is
// decoded (into sink too, if any) and checked on its decoded value.
func (s *compiledSchema) validateDecoded(instance json.RawMessage, sink *argsTarget) []schemaProblem {
	var v any
	var err error
	if sink != nil { // decode into it again, from a fresh In, as kaptinlin's decoder reads the text
		sink.reset()
		var ok bool
		if v, ok = decodeTree(instance, sink); !ok {
			sink.ok = false
			v, err = s.decode(instance) // for its error
		}
	} else {
		v, err = s.decode(instance)
	}
	if err != nil {
		return []schemaProblem{{Path: "", Message: "not valid JSON: " + decodeError(err) + " (send well-formed UTF-8 JSON with unique member names)"}}
	}
	var f problemCollector
	checkTree(v, make([]pathToken, 0, 8), 0, func(path []pathToken, msg string) bool {
		f.add(jsonPointerOf(path), msg)
		return f.total < maxSchemaProblems
	})
	if f.total > 0 {
		return f.list(f.total >= maxSchemaProblems)
	}
	if s.fast != nil && s.fast.valid(v) {
		return nil // what kaptinlin would decide; an invalid value gets kaptinlin's problems below
	}
	if p := s.screen(v, 4*len(instance)+1024); len(p) >= maxSchemaProblems {
		for _, q := range p {
			f.add(q.Path, q.Message)
		}
		return f.list(true)
	}
	res, failure := s.evaluate(v)
	switch {
	case failure != "":
		f.add("", failure)
	case res.IsValid():
		return nil
	case f.walk(res, "", v) == 0:
		f.add("", "the value does not match the schema")
	}
	return f.list(false)
}

// decodeError renders an error of kaptinlin's JSON decoder without its
// package prefixes.
func decodeError(err error) string {
	if _, msg, ok := strings.Cut(err.Error(), "jsontext: "); ok {
		return msg
	}
	return err.Error()
}

// evaluate runs kaptinlin on v: on the schema, or on a copy of its own
// when kaptinlin writes into the schema it evaluates. A panic in the
// validator becomes a failure message instead of taking the server down.
func (s *compiledSchema) evaluate(v any) (res *jsonschema.EvaluationResult, failure string) {
	schema := s.schema
	if s.copies != nil {
		schema = <-s.copies
		defer func() { s.copies <- schema }()
	}
	defer func() {
		if r := recover(); r != nil {
			failure = fmt.Sprintf("the schema validator failed on this value (%v); report it as an mcprt bug", r)
		}
	}()
	return schema.Validate(v), ""
}

// newKaptinlinCompiler returns a kaptinlin Compiler for one schema: 2020-12
// by default, its URL loaders deleted (MCP forbids auto-dereferencing
// network references).
func newKaptinlinCompiler() *jsonschema.Compiler {
	kc := jsonschema.NewCompiler()
	for scheme := range kc.Loaders {
		delete(kc.Loaders, scheme)
	}
	kc.SetDefaultDialect(jsonschema.Draft202012)
	return kc
}

// prepareKaptinlin calls fn for every subschema of s and compiles the
// "pattern" regexps kaptinlin compiles on first use, so that evaluating
// compiles nothing. It reports whether evaluating s still writes into it
// (patternProperties, or a pattern beside a $ref, which the walk does not
// reach), so that parallel evaluations need copies of their own.
func prepareKaptinlin(s *jsonschema.Schema, fn func(*jsonschema.Schema)) (writes bool) {
	walkSchema(s, func(sub *jsonschema.Schema) {
		fn(sub)
		if sub.PatternProperties != nil || (sub.Pattern != nil && (sub.Ref != "" || sub.DynamicRef != "")) {
			writes = true
		}
		if sub.Pattern != nil {
			sub.Validate("") // compiles and caches the regexp now, single-threaded
		}
	})
	return writes
}

// checkTree calls bad, until it returns false, for each number in v out of
// bounds and, if maxDepth > 0, nesting deeper; path leads to v. Members are
// visited in sorted order, so the problems met before bad stops it are
// always the same.
func checkTree(v any, path []pathToken, maxDepth int, bad func(path []pathToken, msg string) bool) bool {
	if n, ok := v.(json.Number); ok && !numberWithinBounds(string(n)) {
		return bad(path, fmt.Sprintf("number %s is out of range: mcprt accepts numbers of at most %d characters with exponents within ±%d",
			clipText(string(n), 60), maxNumberLen, maxNumberExponent))
	}
	obj, isObj := v.(map[string]any)
	arr, isArr := v.([]any)
	if (isObj || isArr) && maxDepth > 0 && len(path) >= maxDepth {
		return bad(path, fmt.Sprintf("nesting is deeper than the limit of %d levels", maxDepth))
	}
	for i, e := range arr {
		if !checkTree(e, append(path, pathToken{index: i, isIndex: true}), maxDepth, bad) {
			return false
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !checkTree(obj[k], append(path, pathToken{name: k}), maxDepth, bad) {
			return false
		}
	}
	return true
}

// numberWithinBounds reports whether the JSON number literal n has at most
// maxNumberLen characters and an exponent within ±maxNumberExponent.
func numberWithinBounds(n string) bool {
	i := strings.IndexAny(n, "eE")
	if len(n) > maxNumberLen || i < 0 {
		return len(n) <= maxNumberLen
	}
	exp := strings.TrimLeft(strings.TrimLeft(n[i+1:], "+-"), "0")
	e, _ := strconv.Atoi(exp) // "" (an exponent of zeros) is 0
	return len(exp) <= 4 && e <= maxNumberExponent
}

// problemCollector turns kaptinlin's evaluation tree into schemaProblems.
// It keeps the maxSchemaProblems smallest problems (by path, then message)
// in order and counts the rest, so its memory does not grow with their
// number and what it keeps does not depend on the order they arrive in.
type problemCollector struct {
	problems []schemaProblem // sorted, unique, at most maxSchemaProblems
	total    int             // problems added, duplicates of kept ones excepted
	added    int             // calls of add
}

// add records a problem, shortening messages that quote huge values.
func (f *problemCollector) add(path, msg string) {
	f.added++
	p := schemaProblem{Path: path, Message: clipText(msg, 300)}
	i, found := slices.BinarySearchFunc(f.problems, p, compareProblems)
	if found {
		return
	}
	f.total++
	switch {
	case len(f.problems) < maxSchemaProblems:
		f.problems = slices.Insert(f.problems, i, p)
	case i < len(f.problems):
		copy(f.problems[i+1:], f.problems[i:len(f.problems)-1])
		f.problems[i] = p
	}
}

// list returns the kept problems, then a summary entry for the rest: their
// number, or, when stopped says the search ended early, that there may be
// more.
func (f *problemCollector) list(stopped bool) []schemaProblem {
	p := f.problems
	switch rest := f.total - len(p); {
	case stopped:
		p = append(p, schemaProblem{Path: "", Message: fmt.Sprintf(
			"validation stopped after %d problems; there may be more", len(p))})
	case rest > 0:
		p = append(p, schemaProblem{Path: "", Message: fmt.Sprintf("%d more problems not listed", rest)})
	}
	return p
}

// compareProblems orders problems by path, then message.
func compareProblems(a, b schemaProblem) int {
	return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Message, b.Message))
}

// aggregateCodes are kaptinlin error codes that only summarise failures of
// subschemas whose own errors say more; they are reported only when nothing
// more precise was found at or below their result.
var aggregateCodes = map[string]bool{"property_mismatch": true, "properties_mismatch": true,
	"pattern_property_mismatch": true, "pattern_properties_mismatch": true, "additional_property_mismatch": true,
	"additional_properties_mismatch": true, "unevaluated_property_mismatch": true, "unevaluated_properties_mismatch": true,
	"property_name_mismatch": true, "property_names_mismatch": true, "item_mismatch": true, "items_mismatch": true,
	"prefix_item_mismatch": true, "prefix_items_mismatch": true, "unevaluated_item_mismatch": true,
	"unevaluated_items_mismatch": true, "ref_mismatch": true, "dynamic_ref_mismatch": true, "all_of_item_mismatch": true,
	"if_then_mismatch": true, "if_else_mismatch": true, "dependent_schema_mismatch": true, "dependent_schemas_mismatch": true}

// falseReasons completes "property/item X is not allowed" when the subschema
// reached through a keyword is the boolean schema false.
var falseReasons = map[string]string{
	"properties": "its schema is false", "patternProperties": "its schema is false", "prefixItems": "its schema is false",
	"additionalProperties":  "the schema lists the allowed properties and additionalProperties is false",
	"unevaluatedProperties": "unevaluatedProperties is false", "unevaluatedItems": "unevaluatedItems is false",
	"items": "the schema allows no further items",
}

// walk records the problems of result r for value v at path, returning how
// many. It descends where a subresult locates a failure more precisely
// (members, items, $ref, allOf, then/else, dependentSchemas); anyOf, oneOf,
// not, if and contains speak for themselves. Results for absent required
// members (kaptinlin evaluates them against null) are left to "required".
func (f *problemCollector) walk(r *jsonschema.EvaluationResult, path string, v any) int {
	before := f.added
	for _, d := range r.Details {
		if d == nil || d.Valid {
			continue
		}
		keyword, _, _ := strings.Cut(strings.TrimPrefix(d.EvaluationPath, "/"), "/")
		token := strings.TrimPrefix(d.InstanceLocation, "/")
		switch keyword {
		case "properties", "patternProperties", "additionalProperties", "unevaluatedProperties":
			obj, _ := v.(map[string]any)
			if child, ok := obj[token]; !ok {
				continue
			} else if p := path + "/" + escapePointerToken(token); isFalseResult(d) {
				f.add(p, fmt.Sprintf("property %q is not allowed: %s", token, falseReasons[keyword]))
			} else {
				f.walk(d, p, child)
			}
		case "items", "prefixItems", "unevaluatedItems":
			arr, _ := v.([]any)
			if i, err := strconv.Atoi(token); err != nil || i < 0 || i >= len(arr) {
				continue
			} else if isFalseResult(d) {
				f.add(path+"/"+token, fmt.Sprintf("item %d is not allowed: %s", i, falseReasons[keyword]))
			} else {
				f.walk(d, path+"/"+token, arr[i])
			}
		case "propertyNames":
			for _, e := range d.Errors {
				f.add(path, fmt.Sprintf("property name %q is not allowed: %s", token, errorMessage(e)))
			}
		case "", "allOf", "then", "dependentSchemas": // "" is $ref, $dynamicRef or else: the same instance
			f.walk(d, path, v)
		}
	}
	precise := f.added > before
	for _, e := range r.Errors {
		precise = precise || !aggregateCodes[e.Code]
	}
	for _, e := range r.Errors {
		if !precise || !aggregateCodes[e.Code] {
			f.add(path, errorMessage(e))
		}
	}
	return f.added - before
}

// isFalseResult reports whether r failed because its schema is false.
func isFalseResult(r *jsonschema.EvaluationResult) bool {
	e, ok := r.Errors["schema"]
	return ok && e.Code == "false_schema_mismatch"
}

// errorMessage renders e, rewriting the one message kaptinlin builds in Go
// map order (dependentRequired) so that messages are deterministic.
func errorMessage(e *jsonschema.EvaluationError) string {
	var missing map[string][]string
	if s, ok := e.Params["missing_properties"].(string); ok && e.Code == "dependent_property_required" &&
		json.Unmarshal([]byte(s), &missing) == nil {
		parts := make([]string, 0, len(missing))
		for _, k := range slices.Sorted(maps.Keys(missing)) {
			parts = append(parts, fmt.Sprintf("%q requires %q", k, missing[k]))
		}
		return "missing dependent properties: " + strings.Join(parts, "; ")
	}
	return e.Error()
}

// escapePointerToken escapes one JSON Pointer reference token (RFC 6901).
func escapePointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// pathToken is one step of a path into a JSON value: a member name, or
// an index when isIndex is set.
type pathToken struct {
	name    string
	index   int
	isIndex bool
}

// jsonPointerOf renders a path as a JSON Pointer ("" for the root).
func jsonPointerOf(path []pathToken) string {
	var b strings.Builder
	for _, t := range path {
		b.WriteByte('/')
		if t.isIndex {
			b.WriteString(strconv.Itoa(t.index))
		} else {
			b.WriteString(escapePointerToken(t.name))
		}
	}
	return b.String()
}

// clipJSON renders v, decoded by encoding/json, as JSON for an error message.
func clipJSON(v any) string {
	b, _ := json.Marshal(v)
	return clipText(string(b), 60)
}

// clipText shortens s to about n bytes by eliding its middle.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n/2], "") + "…" + strings.ToValidUTF8(s[len(s)-n/2:], "")
}

// walkSchema calls fn for s and every subschema below it, in a fixed order;
// it does not follow $ref, which can only point inside the same tree.
func walkSchema(s *jsonschema.Schema, fn func(*jsonschema.Schema)) {
	if s == nil {
		return
	}
	fn(s)
	kids := slices.Concat([]*jsonschema.Schema{s.Not, s.If, s.Then, s.Else, s.Items, s.Contains,
		s.AdditionalProperties, s.PropertyNames, s.UnevaluatedItems, s.UnevaluatedProperties, s.ContentSchema},
		s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems)
	for _, m := range []map[string]*jsonschema.Schema{s.Defs, s.DependentSchemas,
		*cmp.Or(s.Properties, &jsonschema.SchemaMap{}), *cmp.Or(s.PatternProperties, &jsonschema.SchemaMap{})} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			kids = append(kids, m[k])
		}
	}
	for _, k := range kids {
		walkSchema(k, fn)
	}
}
