package reservation

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

func mustParse(t *testing.T, s string) Pattern {
	t.Helper()
	p, err := ParsePattern(s)
	if err != nil {
		t.Fatalf("ParsePattern(%q): %v", s, err)
	}
	return p
}

func TestOverlapTable(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"src/**", "src/a/b.go", true},
		{"src/**", "src", true},
		{"src/*.go", "docs/**", false},
		{"src/*.go", "src/a/b.go", false},
		{"src/**/*.go", "src/a/b.go", true},
		{"**/*.go", "**/*.md", false},
		{"**/*.go", "docs/**", true},
		{"a/**/b", "**/c", false},
		{"a/**", "**/b", true},
		{"*.go", "*_test.go", true},
		{"a*", "*b", true},
		{"a?", "?b", true},
		{"a?", "b?", false},
		{"[abc].go", "[!abc].go", false},
		{"[a-c].go", "[c-e].go", true},
		{"[!a].go", "[!b].go", true},
		{"{src,docs}/x", "docs/*", true},
		{"{src,docs}/x", "lib/*", false},
		{"src/a.go", "src/a.go", true},
		{"src/a.go", "src/b.go", false},
		{`src/\*.go`, "src/a.go", false},
		{`src/\*.go`, "src/*", true},
		{"**", "x", true},
	} {
		a, b := mustParse(t, c.a), mustParse(t, c.b)
		if got := Overlap(a, b); got != c.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Overlap(b, a); got != c.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v (not symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestParsePatternRefuses(t *testing.T) {
	for _, p := range []string{"", "../x", "a/../b", "/etc/passwd", "C:/x", "a\x00b", "[a", "a/{b", ".", "./",
		strings.Repeat("a/", 40) + "b", strings.Repeat("**/x/", 6), strings.Repeat("{a,b}", 6), strings.Repeat("x", 2000)} {
		if _, err := ParsePattern(p); err == nil {
			t.Errorf("ParsePattern(%.40q) succeeded; want an error", p)
		}
	}
	for in, want := range map[string]string{"src/": "src/**", "./a//b": "a/b", "**/**/**/x": "**/x", "e\u0301": "\u00e9"} {
		if p := mustParse(t, in); p.Text != want {
			t.Errorf("ParsePattern(%q).Text = %q, want %q", in, p.Text, want)
		}
	}
	if p := mustParse(t, "src/a/*.go"); p.Prefix != "src/a" {
		t.Errorf("prefix = %q", p.Prefix)
	}
}

// genPattern returns a random glob over the letters a and b with up to
// three segments of up to two tokens.
func genPattern(r *rand.Rand) string {
	n := 1 + r.IntN(3)
	segs := make([]string, n)
	for i := range segs {
		if r.IntN(4) == 0 {
			segs[i] = "**"
			continue
		}
		var b strings.Builder
		for range 1 + r.IntN(2) {
			b.WriteString([]string{"a", "b", "*", "?", "[ab]", "[!a]", "[a-b]"}[r.IntN(7)])
		}
		segs[i] = b.String()
	}
	return strings.Join(segs, "/")
}

// tree returns every path of depth 1-4 whose segments are 1-2 letters of
// a, b and c: c stands for every letter no pattern names.
func tree() []string {
	var segs []string
	for _, x := range "abc" {
		segs = append(segs, string(x))
		for _, y := range "abc" {
			segs = append(segs, string(x)+string(y))
		}
	}
	out := []string{}
	var walk func(prefix string, depth int)
	walk = func(prefix string, depth int) {
		for _, s := range segs {
			p := prefix + s
			out = append(out, p)
			if depth < 4 {
				walk(p+"/", depth+1)
			}
		}
	}
	walk("", 1)
	return out
}

// TestOverlapAgainstBruteForce checks Overlap against doublestar.Match
// over a generated tree that holds a witness for every overlapping pair
// the generator can make (patterns of at most 3 segments of at most 2
// tokens need at most 4 segments of at most 2 letters).
func TestOverlapAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, uint64(len(t.Name()))))
	paths := tree()
	const n = 70
	pats := make([]Pattern, 0, n)
	match := make([][]bool, 0, n)
	seen := map[string]bool{}
	for len(pats) < n {
		s := genPattern(r)
		p, err := ParsePattern(s)
		if err != nil || seen[p.Text] {
			continue
		}
		seen[p.Text] = true
		m := make([]bool, len(paths))
		for i, path := range paths {
			m[i] = globMatch(p.Text, path)
		}
		pats, match = append(pats, p), append(match, m)
	}
	for i := range pats {
		for j := i; j < len(pats); j++ {
			want := false
			for k := range paths {
				if match[i][k] && match[j][k] {
					want = true
					break
				}
			}
			if got := Overlap(pats[i], pats[j]); got != want {
				t.Errorf("Overlap(%q, %q) = %v; brute force says %v", pats[i].Text, pats[j].Text, got, want)
			}
		}
		// A literal path overlaps a pattern exactly when it matches.
		for k := 0; k < len(paths); k += 97 {
			if got := Overlap(pats[i], LiteralPattern(paths[k])); got != match[i][k] {
				t.Errorf("Overlap(%q, path %q) = %v; globMatch says %v", pats[i].Text, paths[k], got, match[i][k])
			}
		}
	}
}

// globMatch is doublestar.Match with the rule reservations add: "d/**"
// covers the directory d itself (doublestar does so only when d has no
// glob character).
func globMatch(pattern, path string) bool {
	if ok, _ := doublestar.Match(pattern, path); ok {
		return true
	}
	if d, ok := strings.CutSuffix(pattern, "/**"); ok {
		return globMatch(d, path)
	}
	return false
}
