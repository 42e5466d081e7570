package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// builtinDefault is the built-in "default" policy, normalised.
func builtinDefault(t *testing.T) Policy {
	t.Helper()
	p, err := Builtin()[0].normalize()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// bypassWorkspace makes a workspace with the links of the bypass table:
// docs → .git, notes.md → .env (dangling), out → a directory outside,
// loop → loop, and an ordinary src/main.go.
func bypassWorkspace(t *testing.T) string {
	t.Helper()
	root, outside := t.TempDir(), t.TempDir()
	for _, d := range []string{".git", "src"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "src", "main.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"docs": ".git", "notes.md": ".env", "out": outside,
		"loop": "loop", "src/up": "../.git", "abs": filepath.Join(root, ".env")} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Skipf("this file system cannot make symbolic links: %v", err)
		}
	}
	return root
}

// TestBypassesAreForbidden: every spelling of a secret or VCS path that
// once passed the built-in policy is a path_forbidden violation.
func TestBypassesAreForbidden(t *testing.T) {
	p, root := builtinDefault(t), bypassWorkspace(t)
	cases := []struct {
		path, why string
	}{
		{".ENV", "upper case"},
		{"certs/KEY.PEM", "upper-case extension"},
		{"home/ID_RSA", "upper-case key name"},
		{".GIT/config", "upper-case VCS directory"},
		{"sub/.git/config", "nested .git"},
		{"a/b/.Git/HEAD", "nested, mixed case"},
		{".git", "the .git file of a worktree"},
		{".env ", "trailing space"},
		{".env.", "trailing dot"},
		{".env. . ", "trailing dots and spaces"},
		{".env::$DATA", "NTFS stream"},
		{"docs/config", "docs → .git"},
		{"docs", "docs → .git itself"},
		{"notes.md", "notes.md → .env, dangling"},
		{"src/up/HEAD", "src/up → ../.git"},
		{"abs", "absolute link to .env inside"},
		{"out/file", "link leading outside the root"},
		{"loop/x", "link loop"},
	}
	for _, c := range cases {
		r, err := CheckIn(p, root, []string{c.path})
		if err != nil {
			t.Fatalf("%q (%s): %v", c.path, c.why, err)
		}
		if r.Passed || r.Gates[0].Passed || r.Gates[0].Violations[0].Type != ViolationPathForbidden {
			t.Errorf("%q (%s) passed or was not forbidden: %+v", c.path, c.why, r.Gates)
		}
	}
	// The ordinary paths still pass, link or not.
	for _, ok := range []string{"src/main.go", "src/new.go", "README.md", "environment.md", ".envrc", "my.git/x", "gitlab/.gitignore"} {
		if r, err := CheckIn(p, root, []string{ok}); err != nil || !r.Passed {
			t.Errorf("%q should pass: %+v %v", ok, r, err)
		}
	}
}

// TestCheckWithoutRootJudgesSpelling: without a workspace the spelled
// bypasses are still caught, links are not looked at.
func TestCheckWithoutRootJudgesSpelling(t *testing.T) {
	p := builtinDefault(t)
	for _, s := range []string{".ENV", "certs/KEY.PEM", "home/ID_RSA", ".GIT/config", "sub/.git/config", ".env "} {
		if r, err := Check(p, []string{s}); err != nil || r.Passed {
			t.Errorf("%q passed: %+v %v", s, r, err)
		}
	}
}

// TestLinkedAllowedLocation: with docs-only, a Markdown name that is a
// link to source code is judged at its real location too.
func TestLinkedAllowedLocation(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src/main.go", filepath.Join(root, "readme.md")); err != nil {
		t.Skipf("no symbolic links: %v", err)
	}
	p, err := Builtin()[1].normalize()
	if err != nil {
		t.Fatal(err)
	}
	r, err := CheckIn(p, root, []string{"readme.md"})
	if err != nil || r.Passed || r.Gates[0].Violations[0].Type != ViolationPathNotAllowed ||
		!strings.Contains(r.Gates[0].Violations[0].Message, "src/main.go") {
		t.Fatalf("readme.md → src/main.go under docs-only: %+v %v", r, err)
	}
}

// TestFoldPath is the table of the folded form.
func TestFoldPath(t *testing.T) {
	for in, want := range map[string]string{
		".ENV": ".env", ".env ": ".env", "a. /B..": "a/b", "...": "...", "x/ ": "x/ ",
		"f::$DATA": "f", ":x": ":x", "DÉJÀ/Ω": "déjà/ω", "\u212a.pem": "k.pem",
	} {
		if got := FoldPath(in); got != want {
			t.Errorf("FoldPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAllowedStaysCaseSensitive: folding never widens what is allowed.
func TestAllowedStaysCaseSensitive(t *testing.T) {
	if MatchAllowed("docs/**", "DOCS/x.md") {
		t.Fatal("allowed globs must match as spelled")
	}
	if !MatchForbidden("**/secrets/**", "A/SECRETS/k") {
		t.Fatal("forbidden globs must fold case")
	}
}
