package reservation

import "sort"

// Overlap reports whether some path matches both a and b: a path and a
// glob overlap when the glob matches the path, two globs when they share
// at least one path ("src/**" and "src/a/*.go" do; "src/*.go" and
// "docs/**" do not).
//
// The test is exact for the glob language (segments of literals, '?',
// '*', classes, whole-segment '**', braces): it walks both patterns
// segment by segment as two automata in step, memoising the pairs of
// positions already visited, so it costs O(|a|·|b|) per pair of brace
// alternatives and never enumerates paths.
func Overlap(a, b Pattern) bool {
	for _, x := range a.alts {
		for _, y := range b.alts {
			if segmentsOverlap(x, y) {
				return true
			}
		}
	}
	return false
}

// segmentsOverlap decides whether two segment sequences share a path.
func segmentsOverlap(a, b []segment) bool {
	memo := make([]int8, (len(a)+1)*(len(b)+1)) // 0 unknown, 1 yes, 2 no
	var dp func(i, j int) bool
	dp = func(i, j int) bool {
		k := i*(len(b)+1) + j
		if memo[k] != 0 {
			return memo[k] == 1
		}
		var ok bool
		switch {
		case i == len(a) && j == len(b):
			ok = true
		case i < len(a) && a[i].any:
			// "**" matches nothing more, or swallows one segment of b's
			// (a "**" of b's swallows it in turn, or matches nothing).
			ok = dp(i+1, j) || j < len(b) && dp(i, j+1)
		case j < len(b) && b[j].any:
			ok = dp(i, j+1) || i < len(a) && dp(i+1, j)
		case i == len(a) || j == len(b):
			ok = false
		default:
			ok = tokensOverlap(a[i].tokens, b[j].tokens) && dp(i+1, j+1)
		}
		memo[k] = 2
		if ok {
			memo[k] = 1
		}
		return ok
	}
	return dp(0, 0)
}

// tokensOverlap decides whether two single-segment patterns match a
// common non-empty string.
func tokensOverlap(a, b []token) bool {
	if onlyStars(a) && onlyStars(b) {
		return true
	}
	memo := make([]int8, (len(a)+1)*(len(b)+1))
	var dp func(i, j int) bool
	dp = func(i, j int) bool {
		k := i*(len(b)+1) + j
		if memo[k] != 0 {
			return memo[k] == 1
		}
		var ok bool
		switch {
		case i == len(a) && j == len(b):
			ok = true
		case i < len(a) && a[i].kind == tokStar:
			ok = dp(i+1, j) || j < len(b) && dp(i, j+1)
		case j < len(b) && b[j].kind == tokStar:
			ok = dp(i, j+1) || i < len(a) && dp(i+1, j)
		case i == len(a) || j == len(b):
			ok = false
		default:
			ok = charsOverlap(a[i], b[j]) && dp(i+1, j+1)
		}
		memo[k] = 2
		if ok {
			memo[k] = 1
		}
		return ok
	}
	return dp(0, 0)
}

func onlyStars(t []token) bool {
	for _, x := range t {
		if x.kind != tokStar {
			return false
		}
	}
	return true
}

// charSet is a set of runes other than '/': the listed ranges, or all but
// them when neg.
type charSet struct {
	neg    bool
	ranges [][2]rune
}

func setOf(t token) charSet {
	switch t.kind {
	case tokLit:
		return charSet{ranges: [][2]rune{{t.r, t.r}}}
	case tokAny:
		return charSet{neg: true}
	default:
		return charSet{neg: t.neg, ranges: t.ranges}
	}
}

// charsOverlap reports whether two character tokens share a rune that may
// stand in a path segment (anything but '/').
func charsOverlap(x, y token) bool {
	a, b := setOf(x), setOf(y)
	switch {
	case a.neg && b.neg:
		return true // both exclude finitely many runes
	case a.neg:
		return someOutside(b.ranges, a.ranges)
	case b.neg:
		return someOutside(a.ranges, b.ranges)
	}
	for _, p := range a.ranges {
		for _, q := range b.ranges {
			lo, hi := max(p[0], q[0]), min(p[1], q[1])
			if lo <= hi && !(lo == '/' && hi == '/') {
				return true
			}
		}
	}
	return false
}

// someOutside reports whether some rune of the ranges in, other than '/',
// lies outside every range of out.
func someOutside(in, out [][2]rune) bool {
	ex := append([][2]rune{{'/', '/'}}, out...)
	sort.Slice(ex, func(i, j int) bool { return ex[i][0] < ex[j][0] })
	for _, r := range in {
		lo := r[0]
		for _, e := range ex {
			if e[1] < lo {
				continue
			}
			if e[0] > lo {
				break
			}
			lo = e[1] + 1
		}
		if lo <= r[1] {
			return true
		}
	}
	return false
}
