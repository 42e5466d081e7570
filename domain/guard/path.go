package guard

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/text/unicode/norm"

	"github.com/mcprt/mcprt/core"
)

// MaxPathBytes bounds a changed path and a pattern.
const MaxPathBytes = 4096

// NormalizePath returns the canonical form of a changed path, relative to
// the workspace root, or an error saying why it has none:
//
//   - it must be non-empty valid UTF-8 without control characters;
//   - '\' is read as a separator (so "a\..\b" cannot hide a "..");
//   - it is put in Unicode NFC, so a composed and a decomposed "é" are the
//     same path (NFKC is not used: it would turn the fullwidth "．．" into a
//     real "..");
//   - it must be relative: "/etc/passwd" and "C:/x" are refused;
//   - it is cleaned ("a/./b//c" → "a/b/c", "a/../secret" → "secret") and
//     must stay inside the root: "../x" and "a/../../x" are refused, as is
//     the root itself (".").
func NormalizePath(p string) (string, error) {
	if err := checkPathText("path", p); err != nil {
		return "", err
	}
	p = norm.NFC.String(strings.ReplaceAll(p, `\`, "/"))
	if isAbs(p) {
		return "", pathError(p, "is absolute; give a path relative to the workspace root, e.g. src/main.go")
	}
	c := path.Clean(p)
	switch {
	case c == ".":
		return "", pathError(p, "names the workspace root itself, not a file")
	case c == ".." || strings.HasPrefix(c, "../"):
		return "", pathError(p, "climbs out of the workspace root with '..'; give a path inside it")
	}
	return c, nil
}

func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || len(p) >= 2 && p[1] == ':' && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z')
}

func pathError(p, why string) *core.Error {
	return core.NewError(core.CodeInvalidArgument, "changed path "+quote(p)+" "+why).WithDetail("path", p)
}

// quote quotes s for a message, bounded so a huge input does not make a
// huge message.
func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "�") + `"`
}

func checkPathText(what, s string) error {
	switch {
	case s == "":
		return core.NewError(core.CodeInvalidArgument, what+" is empty; give a relative path such as src/main.go")
	case len(s) > MaxPathBytes:
		return core.NewError(core.CodeInvalidArgument, what+" "+quote(s)+" is longer than the limit of 4096 bytes")
	case !utf8.ValidString(s):
		return core.NewError(core.CodeInvalidArgument, what+" "+quote(s)+" is not valid UTF-8")
	}
	for i, r := range s {
		if unicode.IsControl(r) {
			return core.NewError(core.CodeInvalidArgument, what+" "+quote(s)+" contains a control character at byte "+strconv.Itoa(i)+"; remove it")
		}
	}
	return nil
}

// CodeInvalidPathPattern: a policy has a glob that is malformed or can
// never match a normalised path.
const CodeInvalidPathPattern core.Code = "INVALID_PATH_PATTERN"

// NormalizePattern checks a glob and returns its canonical (NFC) form.
// Globs use '/' as the separator and doublestar syntax: '*' within one
// segment, '**' across segments, '?', classes '[...]' and alternatives
// '{a,b}'. A glob must be relative and free of "." and ".." segments,
// because normalised paths never contain them; otherwise the error is
// INVALID_PATH_PATTERN.
func NormalizePattern(p string) (string, error) {
	if err := checkPathText("pattern", p); err != nil {
		return "", patternError(p, core.AsError(err).Message)
	}
	p = norm.NFC.String(p)
	if !doublestar.ValidatePattern(p) {
		return "", patternError(p, "pattern "+quote(p)+" is not a valid glob (check brackets [] and braces {})")
	}
	if strings.HasPrefix(p, "/") {
		return "", patternError(p, "pattern "+quote(p)+" is absolute; globs are matched against paths relative to the workspace root")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." || seg == "" {
			return "", patternError(p, "pattern "+quote(p)+" has an empty, '.' or '..' segment, which a normalised path never has")
		}
	}
	return p, nil
}

func patternError(p, msg string) *core.Error {
	return core.NewError(CodeInvalidPathPattern, msg).WithDetail("pattern", p)
}

// match reports whether the normalised path matches the normalised
// pattern, exactly as spelled (case-sensitive).
func match(pattern, p string) bool {
	ok, err := doublestar.Match(pattern, p)
	return err == nil && ok // patterns were validated: err cannot happen
}

// MatchForbidden reports whether the normalised path p matches the
// forbidden glob pattern under the rules that make a forbidden list a
// security boundary: p matches if it matches as spelled, or if its
// folded form (see FoldPath) matches the lower-cased pattern. So ".ENV",
// ".env " (trailing space), ".env." and ".env::$DATA" all match "**/.env".
func MatchForbidden(pattern, p string) bool {
	return match(pattern, p) || match(strings.ToLower(pattern), FoldPath(p))
}

// MatchAllowed reports whether the normalised path p matches the allowed
// glob pattern. Allowed globs match as spelled (case-sensitive, nothing
// trimmed): folding would widen what a policy allows, never narrow it.
func MatchAllowed(pattern, p string) bool { return match(pattern, p) }

// FoldPath returns the form of a normalised path that forbidden globs are
// also matched against: the names a case-insensitive or Windows file
// system would treat as the same file collapse into one. Each segment
// loses an NTFS stream suffix (from the first ':' on, so ".env::$DATA" is
// ".env") and its trailing spaces and dots (Windows drops them: ".env "
// and ".env." are ".env"), unless nothing would be left; then the whole
// path is lower-cased (Unicode simple lower case).
func FoldPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if j := strings.IndexByte(s, ':'); j > 0 {
			s = s[:j]
		}
		if t := strings.TrimRight(s, " ."); t != "" {
			s = t
		}
		segs[i] = s
	}
	return strings.ToLower(strings.Join(segs, "/"))
}

// pathViolations judges every normalised path under p's allowed and
// forbidden globs (MatchAllowed, MatchForbidden). When the workspace
// resolves a path to another real location (a symbolic link on the way),
// both the spelled and the real path must be allowed and not forbidden; a
// path that cannot be resolved inside the root is forbidden.
func pathViolations(p Policy, ws workspace, paths []string) []Violation {
	out := []Violation{}
	for _, path := range paths {
		forms := []string{path}
		real, moved, err := ws.real(path)
		if err != nil {
			out = append(out, Violation{Type: ViolationPathForbidden, Path: path,
				Message: fmt.Sprintf("%v; policy %q cannot judge it, so it is refused", err, p.ID)})
			continue
		}
		if moved {
			forms = append(forms, real)
		}
		for _, f := range forms {
			via := ""
			if f != path {
				via = fmt.Sprintf(" (the real location of %s, through a symbolic link)", path)
			}
			if len(p.AllowedPaths) > 0 && !slices.ContainsFunc(p.AllowedPaths, func(g string) bool { return MatchAllowed(g, f) }) {
				out = append(out, Violation{Type: ViolationPathNotAllowed, Path: path,
					Message: fmt.Sprintf("%s%s matches none of the allowed patterns of policy %q (%s)", f, via, p.ID, strings.Join(p.AllowedPaths, ", "))})
				break
			}
		}
		for _, f := range forms {
			via := ""
			if f != path {
				via = fmt.Sprintf(" (the real location of %s, through a symbolic link)", path)
			}
			if i := slices.IndexFunc(p.ForbiddenPaths, func(g string) bool { return MatchForbidden(g, f) }); i >= 0 {
				out = append(out, Violation{Type: ViolationPathForbidden, Path: path,
					Message: fmt.Sprintf("%s%s matches the forbidden pattern %q of policy %q", f, via, p.ForbiddenPaths[i], p.ID)})
				break
			}
		}
	}
	return out
}
