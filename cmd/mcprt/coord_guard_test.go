package main

// The guard through the binary: guard_check with a session applies the
// session's policies; `mcprt guard check` and the git pre-commit hook
// refuse changes to paths another agent reserved, naming the holder.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// runIn runs the command in dir with env (PATH and HOME added) and
// returns its combined output and exit code.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, wiretest.CleanEnv(env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out.String(), 0
}

func TestCoordGuardSessionPoliciesAndCLI(t *testing.T) {
	t.Parallel()
	ps, dir := coordAgents(t, nil, "alice")
	a := ps[0]
	sid := str(a.ok(t, "session_create", `{"initiator":"alice","task":"docs"}`)["sessionId"])
	a.ok(t, "guard_apply", `{"sessionId":"`+sid+`","policyId":"docs-only"}`)
	g := a.ok(t, "guard_check", `{"sessionId":"`+sid+`","changedPaths":["src/x.go"]}`)
	if g["passed"] != false || !strings.Contains(asJSON(t, g), "path_not_allowed") || !strings.Contains(asJSON(t, g), `"docs-only"`) {
		t.Fatalf("guard_check with a docs-only session let src/x.go pass: %v", g)
	}
	if g := a.ok(t, "guard_check", `{"sessionId":"`+sid+`","changedPaths":["docs/x.md"]}`); g["passed"] != true {
		t.Fatalf("guard_check docs/x.md: %v", g)
	}
	bin := wiretest.Build(t)
	work := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"guard", "check", "--data-dir", dir, "--session", sid, "src/x.go"}, 1, "docs-only"},
		{[]string{"guard", "check", "--data-dir", dir, "--session", sid, "docs/x.md"}, 0, "passed"},
		{[]string{"guard", "check", "--data-dir", dir, "--session", "nope", "docs/x.md"}, 2, "SESSION"},
		{[]string{"guard", "check", "--data-dir", dir, "../x"}, 2, ".."},
		{[]string{"guard"}, 2, "check"},
		{[]string{"guard", "check", "--bogus"}, 2, "bogus"},
		{[]string{"guard", "check"}, 0, "no changed paths"},
	} {
		out, code := runIn(t, work, nil, bin, c.args...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("mcprt %v: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.want, out)
		}
	}
}

func TestCoordPrecommitHook(t *testing.T) {
	t.Parallel()
	ps, dir := coordAgents(t, nil, "alice")
	a := ps[0]
	a.ok(t, "reserve_paths", `{"paths":["src/a.go"],"reason":"rewriting a"}`)
	repo, bin := t.TempDir(), wiretest.Build(t)
	git := func(env []string, args ...string) (string, int) {
		return runIn(t, repo, env, "git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	}
	if out, code := git(nil, "init", "-q"); code != 0 {
		t.Fatalf("git init: %s", out)
	}
	write := func(p, s string) {
		full := filepath.Join(repo, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hook := filepath.Join(repo, ".git", "hooks", "pre-commit")
	// A foreign hook is kept unless --force, then chained and restored.
	write(".git/hooks/pre-commit", "#!/bin/sh\necho foreign hook ran\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, code := runIn(t, repo, nil, bin, "hook", "install-precommit", "--data-dir", dir); code != 1 || !strings.Contains(out, "--force") {
		t.Fatalf("install over a foreign hook: exit %d: %s", code, out)
	}
	if out, code := runIn(t, repo, nil, bin, "hook", "install-precommit", "--force", "--data-dir", dir); code != 0 {
		t.Fatalf("install --force: exit %d: %s", code, out)
	}
	bob := []string{"MCPRT_AACP_AGENT_ID=bob"}
	write("docs/free.md", "free\n")
	git(nil, "add", "docs/free.md")
	if out, code := git(bob, "commit", "-q", "-m", "free"); code != 0 || !strings.Contains(out, "foreign hook ran") {
		t.Fatalf("a commit of free files was refused, or the kept hook did not run (exit %d):\n%s", code, out)
	}
	write("src/a.go", "package a\n")
	git(nil, "add", "src/a.go")
	out, code := git(bob, "commit", "-q", "-m", "touch a")
	if code == 0 || !strings.Contains(out, "alice") || !strings.Contains(out, "src/a.go") {
		t.Fatalf("bob's commit of alice's reserved src/a.go: exit %d, want refused naming alice:\n%s", code, out)
	}
	// alice may commit her own reservation; --no-verify bypasses for bob.
	if out, code := git([]string{"MCPRT_AACP_AGENT_ID=alice"}, "commit", "-q", "--dry-run", "-m", "a"); code != 0 {
		t.Fatalf("alice's dry run: %s", out)
	}
	if out, code := runIn(t, repo, []string{"MCPRT_AACP_AGENT_ID=alice"}, bin, "guard", "check", "--staged", "--data-dir", dir); code != 0 {
		t.Fatalf("alice's own reservation blocked her: exit %d:\n%s", code, out)
	}
	if out, code := git(bob, "commit", "-q", "--no-verify", "-m", "forced"); code != 0 {
		t.Fatalf("--no-verify did not bypass the hook: %s", out)
	}
	// Uninstall puts the foreign hook back; a second uninstall finds none
	// of ours and leaves it.
	if out, code := runIn(t, repo, nil, bin, "hook", "uninstall-precommit"); code != 0 {
		t.Fatalf("uninstall: %s", out)
	}
	if b, _ := os.ReadFile(hook); !strings.Contains(string(b), "foreign hook ran") {
		t.Fatalf("uninstall did not restore the foreign hook: %s", b)
	}
	if out, code := runIn(t, repo, nil, bin, "hook", "uninstall-precommit"); code != 1 || !strings.Contains(out, "not written by mcprt") {
		t.Fatalf("uninstall of a foreign hook: exit %d: %s", code, out)
	}
}
