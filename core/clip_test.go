package core

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		max  int
		want string
	}{
		{"", 0, ""},
		{"abc", 3, "abc"},
		{"abc", 10, "abc"},
		{"abcdef", 5, "ab…"},
		{"abcdef", 3, "…"},
		{"abcdef", 2, "ab"},
		{"abcdef", 0, ""},
		{"abcdef", -1, ""},
		// é is 2 bytes, € 3, 😀 4.
		{"ééééé", 9, "ééé…"},
		{"ééééé", 8, "éé…"},
		{"ééééé", 7, "éé…"},
		{"ééééé", 10, "ééééé"},
		{"€€€€", 11, "€€…"},
		{"€€€€", 10, "€€…"},
		{"€€€€", 9, "€€…"},
		{"€€€€", 8, "€…"},
		{"😀😀😀", 11, "😀😀…"},
		{"😀😀😀", 10, "😀…"},
		{"😀😀😀", 7, "😀…"},
		{"😀😀😀", 6, "…"},
		{"😀😀😀", 2, ""},
		{"a😀", 2, "a"},
		{"aé€😀b", 9, "aé€…"},
		{"aé€😀b", 8, "aé…"},
		// Invalid UTF-8: a stray byte is a character of its own.
		{"ab\xffcdef", 6, "ab\xff…"},
		{"\x80\x80\x80\x80\x80\x80", 5, "\x80\x80…"},
		{"é\x80\x80\x80\x80\x80", 6, "é\x80…"},
	} {
		got := Clip(tc.s, tc.max)
		if got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.max, got, tc.want)
		}
	}
}

// Every clip of a multi-byte string is valid UTF-8, within the bound, and
// a prefix of the input plus the ellipsis.
func TestClipNeverSplitsACharacter(t *testing.T) {
	s := strings.Repeat("aé€😀", 5) + "z"
	for max := 0; max <= len(s)+1; max++ {
		got := Clip(s, max)
		if !utf8.ValidString(got) {
			t.Fatalf("Clip(s, %d) = %q is not valid UTF-8", max, got)
		}
		if len(got) > max && !(max <= 0 && got == "") {
			t.Fatalf("Clip(s, %d) = %q is %d bytes", max, got, len(got))
		}
		body, clipped := strings.CutSuffix(got, "…")
		if clipped != (len(s) > max && max >= 3) || !strings.HasPrefix(s, body) {
			t.Fatalf("Clip(s, %d) = %q", max, got)
		}
		// The prefix is the longest that fits: one more character would not.
		if clipped {
			_, size := utf8.DecodeRuneInString(s[len(body):])
			if len(body)+size+len("…") <= max {
				t.Fatalf("Clip(s, %d) = %q is shorter than needed", max, got)
			}
		}
	}
}
