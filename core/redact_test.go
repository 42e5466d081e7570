package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// testRedactKeys are the default redaction keys (logging.redactKeys).
var testRedactKeys = []string{"token", "key", "secret", "password", "apiKey",
	"authorization", "bearer", "session", "cookie"}

func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain", "hello world", "hello world"},
		{"newline", "a\nb", `a\u000ab`},
		{"carriage return", "a\rb", `a\u000db`},
		{"tab", "a\tb", `a\u0009b`},
		{"nul", "a\x00b", `a\u0000b`},
		{"escape sequence", "\x1b[31mred\x1b[0m", `\u001b[31mred\u001b[0m`},
		{"unit separator", "\x1f", `\u001f`},
		{"space is kept", " ", " "},
		{"DEL is kept", "\x7f", "\x7f"},
		{"non-ASCII kept", "héllo — 日本語 🎉", "héllo — 日本語 🎉"},
		{"non-ASCII around control", "é\né", `é\u000aé`},
		{"all at start and end", "\n\tx\r\n", `\u000a\u0009x\u000d\u000a`},
		{"backslash kept", `a\nb`, `a\nb`},
		{"log injection", "ok\n{\"level\":\"ERROR\"}", `ok\u000a{"level":"ERROR"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sanitize(tt.in); got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSanitizeNoAllocWhenClean(t *testing.T) {
	s := strings.Repeat("clean text é ", 10)
	if n := testing.AllocsPerRun(100, func() { _ = Sanitize(s) }); n != 0 {
		t.Errorf("Sanitize of a clean string allocated %v times, want 0", n)
	}
	if got := Sanitize(s); got != s {
		t.Errorf("Sanitize changed a clean string")
	}
}

func TestIsRedacted(t *testing.T) {
	r := NewRedactor(append([]string{"ключ", ""}, testRedactKeys...))
	tests := []struct {
		key  string
		want bool
	}{
		{"token", true},
		{"TOKEN", true},
		{"Authorization", true},
		{"authorization", true},
		{"APIKEY", true},
		{"apikey", true},
		{"ApiKey", true},
		{"key", true},
		{"Key", true},
		{"monkey", false},
		{"keys", false},
		{"tokenizer", false},
		{"api_key", false},
		{"", false},
		{"name", false},
		{"КЛЮЧ", true},
		{"ключи", false},
		{strings.Repeat("k", 100), false},
	}
	for _, tt := range tests {
		if got := r.IsRedacted(tt.key); got != tt.want {
			t.Errorf("IsRedacted(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
	ascii := NewRedactor(testRedactKeys)
	long := strings.Repeat("x", 70) + "Token"
	if !NewRedactor([]string{long}).IsRedacted(strings.ToUpper(long)) {
		t.Errorf("a key longer than the fast path is not matched")
	}
	if ascii.IsRedacted("tokén") {
		t.Errorf("IsRedacted(tokén) = true")
	}
	var nilR *Redactor
	if nilR.IsRedacted("token") {
		t.Errorf("nil Redactor redacts")
	}
	if n := testing.AllocsPerRun(100, func() { _ = ascii.IsRedacted("Authorization") }); n != 0 {
		t.Errorf("IsRedacted allocated %v times, want 0", n)
	}
}

type testInner struct {
	Secret string `json:"secret"`
	Note   string `json:"note"`
}

type testCreds struct {
	User     string            `json:"user"`
	Password string            `json:"password"`
	APIKey   string            // no tag: JSON name "APIKey"
	Hidden   string            `json:"-"`
	Inner    *testInner        `json:"inner,omitempty"`
	Headers  map[string]string `json:"headers"`
	Count    int               `json:"count"`
}

type testNode struct {
	Name string    `json:"name"`
	Next *testNode `json:"next"`
}

type testMarshaler struct{}

func (testMarshaler) MarshalJSON() ([]byte, error) {
	return []byte(`{"token":"from-marshaler","ok":"a\nb"}`), nil
}

type testNilErr struct{ msg string }

func (e *testNilErr) Error() string { return e.msg }

type testPanicMarshaler struct{}

func (testPanicMarshaler) MarshalJSON() ([]byte, error) { panic("boom\n") }

type testPanicErr struct{}

func (testPanicErr) Error() string { panic("bad error") }

// nest returns depth levels of {"k": ...} around leaf.
func nest(depth int, leaf any) any {
	v := leaf
	for range depth {
		v = map[string]any{"k": v}
	}
	return v
}

func TestRedact(t *testing.T) {
	r := NewRedactor(testRedactKeys)
	ch := make(chan int)
	tests := []struct {
		name string
		in   func() any // called twice: one copy to redact, one to compare
		want any
	}{
		{"nil", func() any { return nil }, nil},
		{"string sanitized", func() any { return "a\nb" }, `a\u000ab`},
		{"number", func() any { return 42 }, 42},
		{"flat map", func() any {
			return map[string]any{"token": "t0k", "name": "x", "n": 1}
		}, map[string]any{"token": RedactedValue, "name": "x", "n": 1}},
		{"case-insensitive keys", func() any {
			return map[string]any{"Authorization": "Bearer x", "APIKEY": "k", "monkey": "banana", "Key": 1}
		}, map[string]any{"Authorization": RedactedValue, "APIKEY": RedactedValue, "monkey": "banana", "Key": RedactedValue}},
		{"redacted container value", func() any {
			return map[string]any{"session": map[string]any{"id": "s"}}
		}, map[string]any{"session": RedactedValue}},
		{"nested maps and slices", func() any {
			return map[string]any{"a": []any{map[string]any{"b": map[string]any{"password": "p", "c": "x\ty"}}, "z\n"}}
		}, map[string]any{"a": []any{map[string]any{"b": map[string]any{"password": RedactedValue, "c": `x\u0009y`}}, `z\u000a`}}},
		{"keys sanitized", func() any {
			return map[string]any{"a\nb": "v"}
		}, map[string]any{`a\u000ab`: "v"}},
		{"map of strings", func() any {
			return map[string]string{"cookie": "c", "path": "/\r"}
		}, map[string]string{"cookie": RedactedValue, "path": `/\u000d`}},
		{"slice of strings", func() any { return []string{"a\x00", "b"} }, []string{`a\u0000`, "b"}},
		{"struct with json tags", func() any {
			return testCreds{User: "u\n", Password: "p", APIKey: "k", Hidden: "h",
				Inner: &testInner{Secret: "s", Note: "n"}, Headers: map[string]string{"Authorization": "a"}, Count: 3}
		}, map[string]any{"user": `u\u000a`, "password": RedactedValue, "APIKey": RedactedValue,
			"inner":   map[string]any{"secret": RedactedValue, "note": "n"},
			"headers": map[string]any{"Authorization": RedactedValue}, "count": json.Number("3")}},
		{"pointer to struct in map", func() any {
			return map[string]any{"in": &testInner{Secret: "s", Note: "n"}}
		}, map[string]any{"in": map[string]any{"secret": RedactedValue, "note": "n"}}},
		{"array", func() any {
			return [2]map[string]any{{"token": "x"}, {"y": "z"}}
		}, []any{map[string]any{"token": RedactedValue}, map[string]any{"y": "z"}}},
		{"map with int keys", func() any { return map[int]string{1: "a\n"} }, map[string]any{"1": `a\u000a`}},
		{"raw message", func() any {
			return map[string]any{"args": json.RawMessage(`{"x": 1, "nested": {"Bearer": "b"}}`)}
		}, map[string]any{"args": json.RawMessage(`{"nested":{"Bearer":"[REDACTED]"},"x":1}`)}},
		{"raw message unchanged keeps text", func() any { return json.RawMessage(`{"x": 1}`) }, json.RawMessage(`{"x": 1}`)},
		{"invalid raw message", func() any { return json.RawMessage(`{"token":`) }, "[INVALID JSON]"},
		{"bytes holding JSON", func() any { return []byte(`["a\n",{"secret":"s"}]`) }, []byte(`["a\\u000a",{"secret":"[REDACTED]"}]`)},
		{"bytes not JSON", func() any { return []byte{0, 1, 2} }, []byte{0, 1, 2}},
		{"error", func() any { return errors.New("boom\nline2") }, `boom\u000aline2`},
		{"nil pointer error", func() any { return error((*testNilErr)(nil)) }, "<nil>"},
		{"panicking error", func() any { return testPanicErr{} }, "[PANIC: bad error]"},
		{"panicking marshaler", func() any { return map[string]any{"m": testPanicMarshaler{}} },
			map[string]any{"m": `[UNENCODABLE: json encoding panicked: boom\u000a]`}},
		{"json marshaler", func() any { return testMarshaler{} }, map[string]any{"token": RedactedValue, "ok": `a\u000ab`}},
		{"unencodable", func() any { return map[string]any{"c": ch} },
			map[string]any{"c": "[UNENCODABLE: json: unsupported type: chan int]"}},
		{"pointer cycle", func() any { n := &testNode{Name: "a"}; n.Next = n; return n }, TruncatedValue},
		{"depth 63 kept", func() any { return nest(63, "x") }, nest(63, "x")},
		{"depth 64 truncated", func() any { return nest(65, "x") }, nest(64, TruncatedValue)},
		{"nil map kept", func() any { return map[string]any(nil) }, map[string]any(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, before := tt.in(), tt.in()
			got := r.Redact(in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Redact = %#v\nwant     %#v", got, tt.want)
			}
			if !reflect.DeepEqual(in, before) {
				t.Errorf("Redact modified its input: %#v, was %#v", in, before)
			}
		})
	}
}

func TestRedactCycleThroughMap(t *testing.T) {
	m := map[string]any{"name": "loop"}
	m["self"] = m
	got := NewRedactor(nil).Redact(m)
	depth := 0
	for v := got; ; depth++ {
		mm, ok := v.(map[string]any)
		if !ok {
			if v != TruncatedValue {
				t.Fatalf("cycle ended in %#v, want %q", v, TruncatedValue)
			}
			break
		}
		v = mm["self"]
	}
	if depth != MaxRedactDepth {
		t.Errorf("cycle truncated after %d levels, want %d", depth, MaxRedactDepth)
	}
}

func TestRedactReturnsACopy(t *testing.T) {
	in := map[string]any{"a": map[string]any{"b": "c"}, "s": []any{"x"}}
	out := NewRedactor(nil).Redact(in).(map[string]any)
	out["a"].(map[string]any)["b"] = "changed"
	out["s"].([]any)[0] = "changed"
	if in["a"].(map[string]any)["b"] != "c" || in["s"].([]any)[0] != "x" {
		t.Errorf("changing Redact's result changed its input: %v", in)
	}
}

func TestWalkShareMode(t *testing.T) {
	r := NewRedactor(testRedactKeys)
	clean := map[string]any{"a": []any{"x", map[string]any{"b": 1}}, "s": []string{"y"}}
	got, changed := r.walk(clean, 0, modeShare)
	if changed || reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(clean).UnsafePointer() {
		t.Errorf("share mode copied a value that needed no change")
	}
	dirty := map[string]any{"a": []any{"x", map[string]any{"token": 1}}, "b": map[string]any{"c": "d"}}
	before := map[string]any{"a": []any{"x", map[string]any{"token": 1}}, "b": map[string]any{"c": "d"}}
	got, changed = r.walk(dirty, 0, modeShare)
	want := map[string]any{"a": []any{"x", map[string]any{"token": RedactedValue}}, "b": map[string]any{"c": "d"}}
	if !changed || !reflect.DeepEqual(got, want) {
		t.Errorf("share mode = %v, %v; want %v, true", got, changed, want)
	}
	if !reflect.DeepEqual(dirty, before) {
		t.Errorf("share mode modified its input: %v", dirty)
	}
}

// propStruct is a struct the value generator nests.
type propStruct struct {
	Name     string `json:"name"`
	Password string `json:"password"`
	Child    any    `json:"child"`
	Skipped  string `json:"-"`
}

// valueGen makes random nested values whose secrets (strings holding
// secretMark) sit only under redaction keys or in fields JSON drops.
type valueGen struct{ rng *rand.Rand }

var (
	propKeys       = []string{"name", "id", "monkey", "keys", "tokenizer", "a\nb", "\x1b[0m", "é", "path"}
	propSecretKeys = []string{"token", "TOKEN", "Key", "apiKey", "APIKEY", "Authorization", "bearer", "Session", "cookie", "PassWord"}
	propRunes      = []rune("ab yz\x00\n\r\t\x1b\x1f\"\\é日🎉{}[]:,")
)

func (g *valueGen) str() string {
	n := g.rng.IntN(8)
	r := make([]rune, n)
	for i := range r {
		r[i] = propRunes[g.rng.IntN(len(propRunes))]
	}
	return string(r)
}

func (g *valueGen) secret(depth int) any {
	if g.rng.IntN(3) == 0 {
		return map[string]any{"inner": secretMark, "list": []any{secretMark}}
	}
	return secretMark + g.str()
}

func (g *valueGen) value(depth int) any {
	k := g.rng.IntN(12)
	if depth >= 5 {
		k %= 5
	}
	switch k {
	case 0, 1:
		return g.str()
	case 2:
		return g.rng.IntN(1000)
	case 3:
		return g.rng.IntN(2) == 0
	case 4:
		return nil
	case 5, 6, 7:
		m := map[string]any{}
		for range g.rng.IntN(5) {
			if g.rng.IntN(3) == 0 {
				m[propSecretKeys[g.rng.IntN(len(propSecretKeys))]] = g.secret(depth)
			} else {
				m[propKeys[g.rng.IntN(len(propKeys))]] = g.value(depth + 1)
			}
		}
		return m
	case 8, 9:
		s := make([]any, g.rng.IntN(4))
		for i := range s {
			s[i] = g.value(depth + 1)
		}
		return s
	case 10:
		p := &propStruct{Name: g.str(), Password: secretMark, Child: g.value(depth + 1), Skipped: secretMark}
		if g.rng.IntN(2) == 0 {
			return *p
		}
		return p
	default:
		raw, err := json.Marshal(g.value(depth + 1))
		if err != nil {
			panic(err)
		}
		return json.RawMessage(raw)
	}
}

// TestRedactProperty checks on random nested values that Redact and the
// logger never modify their input, never let a secret through, and never
// write a control character.
func TestRedactProperty(t *testing.T) {
	r := NewRedactor(testRedactKeys)
	var buf bytes.Buffer
	l := NewLogger(&buf, LogOptions{RedactKeys: testRedactKeys})
	for seed := range uint64(500) {
		in := (&valueGen{rand.New(rand.NewPCG(seed, 1))}).value(0)
		orig := (&valueGen{rand.New(rand.NewPCG(seed, 1))}).value(0)

		out := r.Redact(in)
		if !reflect.DeepEqual(in, orig) {
			t.Fatalf("seed %d: Redact modified its input", seed)
		}
		enc, err := json.Marshal(out)
		if err != nil {
			t.Fatalf("seed %d: Redact's result does not encode: %v", seed, err)
		}
		dec := json.NewDecoder(bytes.NewReader(enc))
		dec.UseNumber()
		var tree any
		if err := dec.Decode(&tree); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checkClean(t, r, tree, "redact")

		buf.Reset()
		l.Info("value\n", "data", in, "token", secretMark)
		if !reflect.DeepEqual(in, orig) {
			t.Fatalf("seed %d: logging modified its input", seed)
		}
		lines := decodeLines(t, buf.Bytes())
		if len(lines) != 1 {
			t.Fatalf("seed %d: %d log lines", seed, len(lines))
		}
		checkClean(t, r, lines[0], "log")
		if t.Failed() {
			t.Fatalf("seed %d: input %#v\nline %s", seed, orig, buf.Bytes())
		}
	}
}
