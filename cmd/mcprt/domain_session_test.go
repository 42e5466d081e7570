package main

// The session_* and guard_* tools through the binary: every tool's
// success and each documented error, policies from guard.policiesDir, and
// a bad policies directory at startup.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

func TestDomainSessionTools(t *testing.T) {
	t.Parallel()
	c, _ := newDomainClient(t, "")

	r := c.ok("session_create", `{"initiator":"lead","task":"ship the release","workspace":"/repo","metadata":{"ticket":13}}`)
	id, _ := r["sessionId"].(string)
	if id == "" || r["status"] != "active" {
		t.Fatalf("session_create: %v", r)
	}
	if r = c.ok("session_join", `{"sessionId":"`+id+`","agentId":"reviewer","role":"review"}`); r["joined"] != true {
		t.Fatalf("session_join: %v", r)
	}
	if r = c.ok("session_join", `{"sessionId":"`+id+`","agentId":"reviewer"}`); r["joined"] != false {
		t.Fatalf("second session_join changed something: %v", r)
	}
	r = c.ok("session_status", `{"sessionId":"`+id+`"}`)
	if len(r["participants"].([]any)) != 2 || asJSON(t, r["metadata"]) != `{"ticket":13}` {
		t.Fatalf("session_status: %v", r)
	}
	if r = c.ok("session_leave", `{"sessionId":"`+id+`","agentId":"reviewer"}`); r["left"] != true {
		t.Fatalf("session_leave: %v", r)
	}
	if r = c.ok("session_leave", `{"sessionId":"`+id+`","agentId":"reviewer"}`); r["left"] != false {
		t.Fatalf("second session_leave: %v", r)
	}

	// guard: list, check, apply.
	r = c.ok("guard_list", `{}`)
	if !strings.Contains(asJSON(t, r), `"policyId":"default"`) || !strings.Contains(asJSON(t, r), `"policyId":"docs-only"`) {
		t.Fatalf("guard_list lacks the built-in policies: %v", r)
	}
	if r = c.ok("guard_check", `{"policyId":"default","changedPaths":["src/main.go","README.md"]}`); r["passed"] != true {
		t.Fatalf("guard_check of allowed paths: %v", r)
	}
	r = c.ok("guard_check", `{"policyId":"docs-only","changedPaths":["docs/a.md","src/x/../../.env"],"sessionId":"`+id+`"}`)
	if r["passed"] != false || !strings.Contains(asJSON(t, r), `"path":".env"`) {
		t.Fatalf("guard_check did not judge the normalised .env: %v", r)
	}
	if r = c.ok("guard_apply", `{"sessionId":"`+id+`","policyId":"docs-only"}`); r["applied"] != true {
		t.Fatalf("guard_apply: %v", r)
	}
	c.failsQuick("guard_apply", `{"sessionId":"`+id+`","policyId":"docs-only"}`, "POLICY_ALREADY_APPLIED")
	c.failsQuick("guard_apply", `{"sessionId":"`+id+`","policyId":"nope"}`, "POLICY_NOT_FOUND")
	c.failsQuick("guard_check", `{"policyId":"nope","changedPaths":["a"]}`, "POLICY_NOT_FOUND")
	c.failsQuick("guard_check", `{"policyId":"default","changedPaths":["../outside"]}`, "INVALID_ARGUMENT")
	c.failsQuick("guard_check", `{"policyId":"default","changedPaths":["/etc/passwd"]}`, "INVALID_ARGUMENT")
	c.failsQuick("guard_check", `{"policyId":"default","changedPaths":["a"],"sessionId":"missing"}`, "SESSION_NOT_FOUND")
	c.failsQuick("guard_apply", `{"sessionId":"missing","policyId":"default"}`, "SESSION_NOT_FOUND")

	if r = c.ok("session_list", `{"status":"active"}`); domNum(r["total"]) != 1 {
		t.Fatalf("session_list: %v", r)
	}
	if r = c.ok("session_complete", `{"sessionId":"`+id+`","summary":"done"}`); r["status"] != "completed" {
		t.Fatalf("session_complete: %v", r)
	}
	c.failsQuick("session_complete", `{"sessionId":"`+id+`"}`, "SESSION_ALREADY_COMPLETED")
	c.failsQuick("session_fail", `{"sessionId":"`+id+`","reason":"late"}`, "SESSION_INVALID_TRANSITION")
	c.failsQuick("session_join", `{"sessionId":"`+id+`","agentId":"x"}`, "SESSION_ALREADY_COMPLETED")
	c.failsQuick("session_leave", `{"sessionId":"`+id+`","agentId":"lead"}`, "SESSION_ALREADY_COMPLETED")
	c.failsQuick("guard_apply", `{"sessionId":"`+id+`","policyId":"default"}`, "SESSION_ALREADY_COMPLETED")
	for _, tool := range []string{"session_status", "session_complete"} {
		c.failsQuick(tool, `{"sessionId":"no-such-session"}`, "SESSION_NOT_FOUND")
	}
	c.failsQuick("session_fail", `{"sessionId":"no-such-session","reason":"x"}`, "SESSION_NOT_FOUND")

	f := c.ok("session_create", `{"initiator":"lead","task":"doomed"}`)
	fid := f["sessionId"].(string)
	if r = c.ok("session_fail", `{"sessionId":"`+fid+`","reason":"CI is red"}`); r["status"] != "failed" || r["failureReason"] != "CI is red" {
		t.Fatalf("session_fail: %v", r)
	}
	c.failsQuick("session_fail", `{"sessionId":"`+fid+`","reason":"again"}`, "SESSION_ALREADY_COMPLETED")
	c.failsQuick("session_complete", `{"sessionId":"`+fid+`"}`, "SESSION_INVALID_TRANSITION")
	c.failsQuick("session_create", `{"initiator":"lead","task":"x","metadata":[1]}`, "INVALID_ARGUMENT")
	c.failsQuick("session_list", `{"status":"sleeping"}`, "INVALID_ARGUMENT")
	finish(t, c.p)
}

func TestDomainGuardPoliciesDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy := `{"policyId":"backend","description":"server code only","allowedPaths":["server/**"],"forbiddenPaths":["server/secrets/**"],"gates":["path_violation","change_radius"],"changeRadiusLimit":2}`
	if err := os.WriteFile(filepath.Join(dir, "backend.json"), []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := newDomainClient(t, "", "MCPRT_GUARD_POLICIES_DIR="+dir)
	if r := c.ok("guard_list", `{}`); !strings.Contains(asJSON(t, r), `"policyId":"backend"`) {
		t.Fatalf("guard_list lacks the file's policy: %v", r)
	}
	r := c.ok("guard_check", `{"policyId":"backend","changedPaths":["server/a.go","server/b.go","client/c.ts"]}`)
	if s := asJSON(t, r); r["passed"] != false || !strings.Contains(s, "path_not_allowed") || !strings.Contains(s, "change_radius_exceeded") {
		t.Fatalf("guard_check against the file's policy: %v", r)
	}
	finish(t, c.p)

	// A bad policy file is an invalid configuration: exit 78 naming the key.
	if err := os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"policyId":"x","allowedPaths":["[unclosed"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Env: []string{"MCPRT_GUARD_POLICIES_DIR=" + dir}})
	p.CloseStdin()
	if code := p.Wait(t); code != 78 {
		t.Fatalf("exit code %d with a bad policy file, want 78\n%s", code, p.Stderr())
	}
	if !strings.Contains(p.Stderr(), `"key":"guard.policiesDir"`) || !strings.Contains(p.Stderr(), "MCPRT_GUARD_POLICIES_DIR") {
		t.Errorf("the error line does not name guard.policiesDir and its variable:\n%s", p.Stderr())
	}
}
