package reservation

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/text/unicode/norm"

	"github.com/mcprt/mcprt/core"
)

// Limits of one pattern. They bound the work of the overlap test, which
// is quadratic in the tokens of the two patterns at worst.
const (
	MaxPatternBytes  = 1024
	MaxSegments      = 32
	MaxDoubleStars   = 4  // "**" segments, after runs of them are merged
	MaxAlternatives  = 32 // patterns a pattern's {a,b} braces expand to
	metaChars        = `*?[{\`
	doubleStar       = "**"
	invalidPatternOf = "paths"
)

// Pattern is a normalised path or glob and what the overlap test needs of
// it: its brace alternatives split into segments, and its literal prefix.
type Pattern struct {
	// Text is the normalised pattern.
	Text string
	// Prefix is the literal directory prefix: the segments before the
	// first one with a glob character ("" when the first has one). Every
	// path the pattern matches is Prefix or lies under it.
	Prefix string
	alts   [][]segment
}

// segment is one '/'-separated part of a pattern: "**", or a sequence of
// tokens matching within one path segment.
type segment struct {
	any    bool // "**": zero or more whole segments
	tokens []token
}

type tokenKind uint8

const (
	tokLit   tokenKind = iota
	tokAny             // '?'
	tokStar            // '*'
	tokClass           // [...]
)

// token is one element of a segment pattern.
type token struct {
	kind   tokenKind
	r      rune
	neg    bool
	ranges [][2]rune
}

// ParsePattern normalises a path or glob given to reserve: Unicode NFC;
// relative to the project root; "." and empty segments dropped; a trailing
// "/" meaning the whole directory ("src/" is "src/**"); runs of "**"
// merged. A ".." segment, an absolute path, a malformed glob or one over
// the limits is INVALID_ARGUMENT saying which.
func ParsePattern(p string) (Pattern, error) {
	if err := checkText(p); err != nil {
		return Pattern{}, err
	}
	p = norm.NFC.String(p)
	if strings.HasPrefix(p, "/") || len(p) >= 2 && p[1] == ':' && unicode.IsLetter(rune(p[0])) {
		return Pattern{}, patternError(p, "is absolute; give a path or glob relative to the project root, such as src/** or src/main.go")
	}
	dir := strings.HasSuffix(p, "/")
	var segs []string
	for _, s := range strings.Split(p, "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			return Pattern{}, patternError(p, "has a '..' segment; reservations name paths inside the project root, without '..'")
		case doubleStar:
			if len(segs) > 0 && segs[len(segs)-1] == doubleStar {
				continue
			}
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return Pattern{}, patternError(p, "names the project root itself; give a path or glob such as src/** (or ** for everything)")
	}
	if dir && segs[len(segs)-1] != doubleStar {
		segs = append(segs, doubleStar)
	}
	if len(segs) > MaxSegments {
		return Pattern{}, patternError(p, fmt.Sprintf("has %d segments; the limit is %d", len(segs), MaxSegments))
	}
	text := strings.Join(segs, "/")
	if n := countDoubleStars(segs); n > MaxDoubleStars {
		return Pattern{}, patternError(p, fmt.Sprintf("has %d '**' segments; the limit is %d (one '**' already spans any depth)", n, MaxDoubleStars))
	}
	if !doublestar.ValidatePattern(text) {
		return Pattern{}, patternError(p, "is not a valid glob: check its brackets [] and braces {}")
	}
	alts, err := expandBraces(text)
	if err != nil {
		return Pattern{}, patternError(p, err.Error())
	}
	pat := Pattern{Text: text, Prefix: literalPrefix(segs)}
	for _, a := range alts {
		segs, err := parseSegments(a)
		if err != nil {
			return Pattern{}, patternError(p, err.Error())
		}
		pat.alts = append(pat.alts, segs)
	}
	return pat, nil
}

// LiteralPattern returns the Pattern that matches exactly the normalised
// path p (its glob characters escaped). p must already be normalised,
// as guard.NormalizePath leaves it.
func LiteralPattern(p string) Pattern {
	segs := strings.Split(p, "/")
	pat := Pattern{Text: EscapePath(p), Prefix: p}
	alt := make([]segment, len(segs))
	for i, s := range segs {
		toks := make([]token, 0, len(s))
		for _, r := range s {
			toks = append(toks, token{kind: tokLit, r: r})
		}
		alt[i] = segment{tokens: toks}
	}
	pat.alts = [][]segment{alt}
	return pat
}

// EscapePath escapes the glob characters of a path, so that as a pattern
// it matches only itself.
func EscapePath(p string) string {
	if !strings.ContainsAny(p, metaChars+"]}") {
		return p
	}
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(metaChars+"]}", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func countDoubleStars(segs []string) int {
	n := 0
	for _, s := range segs {
		if s == doubleStar {
			n++
		}
	}
	return n
}

func checkText(p string) error {
	switch {
	case p == "":
		return patternError(p, "is empty; give a relative path or glob such as src/main.go or src/**")
	case len(p) > MaxPatternBytes:
		return patternError(p, fmt.Sprintf("is %d bytes long; the limit is %d", len(p), MaxPatternBytes))
	case !utf8.ValidString(p):
		return patternError(p, "is not valid UTF-8")
	}
	for i, r := range p {
		if unicode.IsControl(r) {
			return patternError(p, fmt.Sprintf("contains a control character at byte %d; remove it", i))
		}
	}
	return nil
}

func patternError(p, why string) *core.Error {
	q := p
	if len(q) > 120 {
		q = q[:120] + "…"
	}
	return core.NewError(core.CodeInvalidArgument, fmt.Sprintf("%s: %q %s", invalidPatternOf, strings.ToValidUTF8(q, "�"), why)).
		WithDetail("field", invalidPatternOf).WithDetail("path", q)
}

// literalPrefix joins the segments before the first one with a glob
// character.
func literalPrefix(segs []string) string {
	n := 0
	for n < len(segs) && !strings.ContainsAny(segs[n], metaChars) {
		n++
	}
	return strings.Join(segs[:n], "/")
}

// expandBraces returns the brace-free alternatives of p ("{a,b}/c" is
// "a/c" and "b/c"), at most MaxAlternatives of them. Brackets and
// escapes are kept as they are.
func expandBraces(p string) ([]string, error) {
	out := []string{}
	var walk func(prefix, rest string) error
	walk = func(prefix, rest string) error {
		open := -1
		for i := 0; i < len(rest); i++ {
			switch rest[i] {
			case '\\':
				i++
			case '[':
				i = classEnd(rest, i)
			case '{':
				open = i
			}
			if open >= 0 {
				break
			}
		}
		if open < 0 {
			if len(out) >= MaxAlternatives {
				return fmt.Errorf("expands to more than %d alternatives through its braces; reserve fewer, broader globs", MaxAlternatives)
			}
			out = append(out, prefix+rest)
			return nil
		}
		alts, end := splitBrace(rest, open)
		for _, a := range alts {
			if err := walk(prefix+rest[:open], a+rest[end+1:]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk("", p); err != nil {
		return nil, err
	}
	return out, nil
}

// classEnd returns the index of the ']' closing the class opening at i
// (or the last index when there is none; a validated pattern has one).
func classEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && (s[j] == '!' || s[j] == '^') {
		j++
	}
	for ; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case ']':
			return j
		}
	}
	return len(s) - 1
}

// splitBrace splits the brace group opening at s[open] into its top-level
// alternatives and returns the index of its closing '}'.
func splitBrace(s string, open int) ([]string, int) {
	var alts []string
	depth, start := 0, open+1
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			i = classEnd(s, i)
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return append(alts, s[start:i]), i
			}
		case ',':
			if depth == 1 {
				alts = append(alts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(alts, s[start:]), len(s) - 1
}

// parseSegments splits a brace-free pattern into segments of tokens.
func parseSegments(p string) ([]segment, error) {
	var out []segment
	for _, s := range strings.Split(p, "/") {
		if s == "" {
			continue // "{a,}/b" leaves an empty segment: it matches nothing extra
		}
		if s == doubleStar {
			if len(out) > 0 && out[len(out)-1].any {
				continue
			}
			out = append(out, segment{any: true})
			continue
		}
		toks, err := parseTokens(s)
		if err != nil {
			return nil, err
		}
		out = append(out, segment{tokens: toks})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("has an alternative that names no path")
	}
	return out, nil
}

func parseTokens(s string) ([]token, error) {
	var toks []token
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case '*':
			if len(toks) == 0 || toks[len(toks)-1].kind != tokStar {
				toks = append(toks, token{kind: tokStar})
			}
		case '?':
			toks = append(toks, token{kind: tokAny})
		case '\\':
			if i+1 < len(rs) {
				i++
			}
			toks = append(toks, token{kind: tokLit, r: rs[i]})
		case '[':
			t, end, err := parseClass(rs, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i = end
		default:
			toks = append(toks, token{kind: tokLit, r: r})
		}
	}
	return toks, nil
}

func parseClass(rs []rune, i int) (token, int, error) {
	t := token{kind: tokClass}
	j := i + 1
	if j < len(rs) && (rs[j] == '!' || rs[j] == '^') {
		t.neg = true
		j++
	}
	for ; j < len(rs); j++ {
		r := rs[j]
		if r == ']' {
			return t, j, nil
		}
		if r == '\\' && j+1 < len(rs) {
			j++
			r = rs[j]
		}
		hi := r
		if j+2 < len(rs) && rs[j+1] == '-' && rs[j+2] != ']' {
			hi = rs[j+2]
			if hi == '\\' && j+3 < len(rs) {
				hi = rs[j+3]
				j++
			}
			j += 2
		}
		if hi < r {
			return t, 0, fmt.Errorf("has the empty range %c-%c in a [] class", r, hi)
		}
		t.ranges = append(t.ranges, [2]rune{r, hi})
	}
	return t, 0, fmt.Errorf("has a [ without its ]")
}
