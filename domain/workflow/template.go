package workflow

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Templates. A string in a step's input (or in the workflow's output) may
// hold references in double braces:
//
//	{{input}}                      the whole workflow input object
//	{{input.topic}}                a member of it (dots go deeper; a number indexes an array)
//	{{steps.save.output}}          the output of the earlier step "save"
//	{{steps.save.output.key}}      a member of that output
//
// A string that is exactly one reference becomes the referenced value with
// its JSON type (object, array, number, boolean, string, null). A string
// with text around its references stays a string: strings are put in as
// they are, other values as compact JSON. A reference to something that
// does not exist is an error; so is a reference to a step that has not run
// before (checked when the definition is loaded) or that failed.

const (
	openDelim, closeDelim = "{{", "}}"
	// maxRefSegments bounds the path of one reference.
	maxRefSegments = 32
)

// ref is one {{...}} reference.
type ref struct {
	text string   // as written, for errors
	step string   // "" for the input
	path []string // below the input or the step's output
}

// part is a piece of a templated string: literal text or a reference.
type part struct {
	lit string
	ref *ref
}

// tmplString is a string with at least one reference.
type tmplString struct {
	parts []part
}

// whole reports whether the string is exactly one reference.
func (t *tmplString) whole() *ref {
	if len(t.parts) == 1 && t.parts[0].ref != nil {
		return t.parts[0].ref
	}
	return nil
}

// compileTemplate turns a decoded JSON value into a template tree: strings
// with references become *tmplString, objects and arrays are copied, the
// rest stays as it is. refs collects every reference met.
func compileTemplate(v any, where string, refs *[]*ref) (any, error) {
	switch x := v.(type) {
	case string:
		return compileString(x, where, refs)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := compileTemplate(e, where+"."+k, refs)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := compileTemplate(e, where+"["+strconv.Itoa(i)+"]", refs)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}

// compileString parses the references of s; a string without "{{" is
// returned as it is.
func compileString(s, where string, refs *[]*ref) (any, error) {
	if !strings.Contains(s, openDelim) {
		return s, nil
	}
	t := &tmplString{}
	rest := s
	for {
		i := strings.Index(rest, openDelim)
		if i < 0 {
			if rest != "" {
				t.parts = append(t.parts, part{lit: rest})
			}
			break
		}
		if i > 0 {
			t.parts = append(t.parts, part{lit: rest[:i]})
		}
		j := strings.Index(rest[i:], closeDelim)
		if j < 0 {
			return nil, fmt.Errorf("%s: %q opens a template with {{ but never closes it with }}", where, clipText(s))
		}
		r, err := parseRef(strings.TrimSpace(rest[i+len(openDelim) : i+j]))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		*refs = append(*refs, r)
		t.parts = append(t.parts, part{ref: r})
		rest = rest[i+j+len(closeDelim):]
	}
	return t, nil
}

// parseRef parses the inside of {{...}}.
func parseRef(expr string) (*ref, error) {
	r := &ref{text: "{{" + expr + "}}"}
	segs := strings.Split(expr, ".")
	if len(segs) > maxRefSegments {
		return nil, fmt.Errorf("%s has %d segments; the limit is %d", r.text, len(segs), maxRefSegments)
	}
	for _, s := range segs {
		if s == "" || strings.ContainsAny(s, " \t{}") {
			return nil, fmt.Errorf("%s is not a reference; write {{input.NAME}} or {{steps.STEP.output.NAME}} (names without spaces, dots separate levels)", r.text)
		}
	}
	switch {
	case segs[0] == "input":
		r.path = segs[1:]
	case segs[0] == "steps" && len(segs) >= 3 && segs[2] == "output":
		r.step, r.path = segs[1], segs[3:]
	default:
		return nil, fmt.Errorf("%s refers to nothing known; write {{input...}} for the workflow input or {{steps.STEP.output...}} for an earlier step's output", r.text)
	}
	return r, nil
}

// scope is what references resolve against.
type scope struct {
	input map[string]any
	// outputs holds the outputs of the steps that succeeded; failed
	// names the steps that failed (their output does not exist).
	outputs map[string]any
	failed  map[string]bool
}

// render evaluates a template tree. The result shares no maps or slices
// with the tree or the scope's values that it could later modify: values
// taken from the scope are used read-only.
func render(t any, sc *scope) (any, error) {
	switch x := t.(type) {
	case *tmplString:
		if r := x.whole(); r != nil {
			return sc.resolve(r)
		}
		var b strings.Builder
		for _, p := range x.parts {
			if p.ref == nil {
				b.WriteString(p.lit)
				continue
			}
			v, err := sc.resolve(p.ref)
			if err != nil {
				return nil, err
			}
			if s, ok := v.(string); ok {
				b.WriteString(s)
				continue
			}
			enc, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("%s: the value cannot be written as JSON: %v", p.ref.text, err)
			}
			b.Write(enc)
		}
		return b.String(), nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			v, err := render(e, sc)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			v, err := render(e, sc)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return t, nil
}

// resolve returns the value a reference names.
func (sc *scope) resolve(r *ref) (any, error) {
	var v any
	base := "the workflow input"
	if r.step == "" {
		v = sc.input
	} else {
		base = "the output of step " + strconv.Quote(r.step)
		out, ok := sc.outputs[r.step]
		switch {
		case sc.failed[r.step]:
			return nil, fmt.Errorf("%s: step %q failed, so it has no output; refer to it only from steps that need it to succeed", r.text, r.step)
		case !ok:
			return nil, fmt.Errorf("%s: step %q has not run before this point", r.text, r.step)
		}
		v = out
	}
	for i, seg := range r.path {
		at := base
		if i > 0 {
			at += " at " + strings.Join(r.path[:i], ".")
		}
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[seg]
			if !ok {
				return nil, fmt.Errorf("%s: %s has no member %q (it has %s)", r.text, at, seg, memberNames(x))
			}
			v = e
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(x) {
				return nil, fmt.Errorf("%s: %s is an array of %d items; %q is not an index from 0 to %d", r.text, at, len(x), seg, len(x)-1)
			}
			v = x[n]
		default:
			return nil, fmt.Errorf("%s: %s is %s, which has no member %q", r.text, at, kindOf(x), seg)
		}
	}
	return v, nil
}

// memberNames lists an object's member names for an error.
func memberNames(m map[string]any) string {
	if len(m) == 0 {
		return "no members"
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, strconv.Quote(k))
	}
	slices.Sort(names)
	if len(names) > 10 {
		names = append(names[:10], "...")
	}
	return "members " + strings.Join(names, ", ")
}

// kindOf names a decoded JSON value's type.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64, int, int64:
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// clipText shortens s for an error message.
func clipText(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && (s[i]&0xC0) == 0x80 { // do not cut a UTF-8 sequence
		i--
	}
	return s[:i] + "..."
}
