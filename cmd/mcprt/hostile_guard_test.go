package main

// Black-box tests of the guard's matching rules (issue: policies that
// cannot be bypassed by spelling): case, nested .git, trailing spaces and
// dots, and symbolic links inside the workspace (guard.workspaceRoot).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHostileGuardBypassesAreForbidden(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"docs": ".git", "notes.md": ".env"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatalf("symlink: %v", err)
		}
	}
	c, _ := newDomainClient(t, "", "MCPRT_GUARD_WORKSPACE_ROOT="+root)
	for _, p := range []string{".ENV", "certs/KEY.PEM", "home/ID_RSA", ".GIT/config", "sub/.git/config", ".env ",
		"docs/config", "notes.md"} {
		r := c.ok("guard_check", `{"policyId":"default","changedPaths":[`+jsonString(p)+`]}`)
		if r["passed"] != false {
			t.Errorf("guard_check of %q passed: %v", p, r)
			continue
		}
		if s := asJSON(t, r["gateResults"]); !strings.Contains(s, "path_forbidden") {
			t.Errorf("guard_check of %q: no path_forbidden violation: %s", p, s)
		}
	}
	if r := c.ok("guard_check", `{"policyId":"default","changedPaths":["src/main.go","README.md"]}`); r["passed"] != true {
		t.Fatalf("ordinary paths must still pass: %v", r)
	}
}
