package jsontext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClipNeverCutsACharacter(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 4, "h…"},
		{"héllo", 5, "h…"}, // é is two bytes: cutting after one would split it
		{"héllo!", 6, "hé…"},
		{"日本語", 6, "日…"},
		{"日本語", 0, ""},
		{"😀😀", 7, "😀…"},
	}
	for _, tt := range tests {
		got := Clip(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q is not valid UTF-8", tt.in, tt.max, got)
		}
	}
}

func TestClipPropertyPrefixAndBound(t *testing.T) {
	s := strings.Repeat("aé日😀", 50)
	for max := 0; max < len(s)+2; max++ {
		got := Clip(s, max)
		if !utf8.ValidString(got) {
			t.Fatalf("Clip(_, %d) produced invalid UTF-8", max)
		}
		body := strings.TrimSuffix(got, "…")
		if !strings.HasPrefix(s, body) || len(got) > max {
			t.Fatalf("Clip(_, %d) = %q: not a prefix within the bound", max, got)
		}
	}
	if got := ClipBytes([]byte(s), 7); got != Clip(s, 7) {
		t.Fatalf("ClipBytes = %q, Clip = %q", got, Clip(s, 7))
	}
}

func TestQuoteClips(t *testing.T) {
	long := strings.Repeat("x", 10_000)
	q := Quote(long)
	if len(q) > MaxEcho+2 {
		t.Fatalf("Quote kept %d bytes", len(q))
	}
}

func TestEachMemberAndMember(t *testing.T) {
	obj := []byte(` { "a" : 1 , "b\u0063":{"x":[1,"}"]}, "s":"v\"q" } `)
	var keys []string
	if !EachMember(obj, func(k, v []byte) bool { keys = append(keys, string(k)+"="+string(v)); return true }) {
		t.Fatal("not an object")
	}
	want := []string{`"a"=1`, `"b\u0063"={"x":[1,"}"]}`, `"s"="v\"q"`}
	if strings.Join(keys, ";") != strings.Join(want, ";") {
		t.Fatalf("members %q, want %q", keys, want)
	}
	if got := string(Member(obj, "bc")); got != `{"x":[1,"}"]}` {
		t.Fatalf("Member(bc) = %s", got)
	}
	if s, ok := String(Member(obj, "s")); !ok || s != `v"q` {
		t.Fatalf("String = %q %v", s, ok)
	}
	if EachMember([]byte(`[1]`), func(k, v []byte) bool { return true }) {
		t.Fatal("an array is not an object")
	}
	if Member([]byte(`{"a":1}`), "A") != nil {
		t.Fatal("member names are case-sensitive")
	}
}

func TestStringRejectsNonStrings(t *testing.T) {
	for _, raw := range []string{``, `1`, `null`, `"`, `{"a":1}`} {
		if _, ok := String([]byte(raw)); ok && raw != `"` {
			t.Errorf("String(%s) accepted", raw)
		}
	}
}

// ScanString finds the end of strings short and long, escaped or not,
// and tells plain ones (no escape) apart.
func TestScanString(t *testing.T) {
	long := strings.Repeat("x", 40)
	for _, tc := range []struct {
		s     string
		plain bool
	}{
		{`""`, true}, {`"a"`, true}, {`"\""`, false}, {`"\\"`, false}, {`"a\\\"b"`, false},
		{`"` + long + `"`, true}, {`"` + long + `\"` + long + `"`, false}, {`"` + long + `\\"`, false},
		{`"` + long[:15] + `\"` + `"`, false}, {`"` + long[:16] + `\\"`, false}, {`"` + long[:14] + `\\\\` + long + `"`, false},
		{`"é` + long + `"`, true},
	} {
		in := tc.s + `, "next"`
		end, plain := ScanString([]byte(in), 0)
		if end != len(tc.s) || plain != tc.plain {
			t.Errorf("ScanString(%s) = %d, %v; want %d, %v", in, end, plain, len(tc.s), tc.plain)
		}
		if end := skipString([]byte(in), 0); end != len(tc.s) {
			t.Errorf("skipString(%s) = %d, want %d", in, end, len(tc.s))
		}
	}
	if end, _ := ScanString([]byte(`"`+long), 0); end != len(long)+1 {
		t.Errorf("an unclosed string ends at %d, want %d", end, len(long)+1)
	}
	if end := skipString([]byte(`"`+long+`\"`), 0); end != len(long)+3 {
		t.Errorf("skipString: an unclosed string ends at %d, want %d", end, len(long)+3)
	}
}
