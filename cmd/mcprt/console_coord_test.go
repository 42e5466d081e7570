package main

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// TestConsoleCoordination: the console of mcprt --http shows the real
// reservations (with their holders), the task board by status with
// dependencies and message search; force-release of a live holder's
// reservation is refused with a clear error, and once the holder's
// process is killed it is released, recorded with the reason, and the
// other agents see it gone.
func TestConsoleCoordination(t *testing.T) {
	dir := t.TempDir()
	const token = "console-coord-token-4321"
	bin := wiretest.Build(t)
	_, mcpURL := startHTTPServer(t, bin, token, "MCPRT_AACP_DATA_DIR="+dir, "MCPRT_AACP_AGENT_ID=lead",
		"MCPRT_TRANSPORT_HTTP_AUTH_TOKEN_ENV_VAR=MCPRT_CONSOLE_TEST_TOKEN", "MCPRT_CONSOLE_TEST_TOKEN="+token)
	u := newUIClient(t, strings.TrimSuffix(mcpURL, "/mcp")+"/ui/")
	alpha := startAgent(t, dir, "alpha", "Implementation")
	beta := startAgent(t, dir, "beta", "Implementation")
	alpha.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)
	beta.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)
	alphaLease := str(list(t, alpha.ok(t, "reserve_paths", `{"paths":["src/**"],"exclusive":true,"reason":"refactor <src>"}`), "leases")[0]["id"])
	betaLease := str(list(t, beta.ok(t, "reserve_paths", `{"paths":["docs/*.md"],"exclusive":true,"reason":"docs"}`), "leases")[0]["id"])
	first := str(alpha.ok(t, "task_post", `{"title":"write the parser","description":"a parser"}`)["taskId"])
	second := str(alpha.ok(t, "task_post", `{"title":"test the parser","description":"its tests","dependsOn":["`+first+`"]}`)["taskId"])
	if got := alpha.ok(t, "task_claim", `{"taskId":"`+first+`"}`); got["claimed"] != true {
		t.Fatalf("task_claim: %v", got)
	}
	alpha.ok(t, "aacp_send", sendArgsTo("beta", "CUSTOM_NOTE", `{"subject":"zebra crossing","note":"mind the zebra"}`))

	u.signIn(token)
	body := u.waitPage("reservations", 5*time.Second, `data-reservation="`+alphaLease+`"`, `data-reservation="`+betaLease+`"`)
	if !strings.Contains(body, "refactor &lt;src&gt;") || !regexp.MustCompile(`data-reservation="`+alphaLease+`" data-agent="alpha"`).MatchString(body) {
		t.Errorf("the reservations page lacks alpha's lease, its holder or its escaped reason:\n%s", body)
	}
	body = u.waitPage("tasks", 5*time.Second, "write the parser", "test the parser")
	for status, id := range map[string]string{"claimed": first, "open": second} {
		if !regexp.MustCompile(`data-status="` + status + `"[^§]*?data-task="` + id + `"`).MatchString(strings.ReplaceAll(body, "</section>", "§")) {
			t.Errorf("task %s is not in the %s column:\n%s", id, status, body)
		}
	}
	if !strings.Contains(body, "after "+first) {
		t.Errorf("the board does not show that %s waits for %s:\n%s", second, first, body)
	}
	u.waitPage("", 5*time.Second, "src/**", "write the parser") // the overview: alpha's lease and task
	if body := u.waitPage("messages?q=zebra", 5*time.Second, `class="hit"`); !strings.Contains(body, "[zebra]") {
		t.Errorf("the search shows no hit with its snippet:\n%s", body)
	}

	// A live holder's reservation is not forced.
	code, body := u.post("reservations/release", url.Values{"csrf": {u.csrf()}, "id": {alphaLease}, "reason": {"take over"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "RESERVATION_HOLDER_LIVE") || !strings.Contains(body, "alpha") {
		t.Fatalf("force-release of a live holder's lease: %d, want 400 saying alpha holds it\n%s", code, body)
	}
	// A killed holder is offline: its reservation is forced, recorded,
	// and gone for the others.
	beta.p.Signal(syscall.SIGKILL)
	beta.p.Wait(t)
	u.waitPage("", 10*time.Second, `data-agent="beta"`, "presence offline")
	if code, body := u.post("reservations/release", url.Values{"csrf": {u.csrf()}, "id": {betaLease}, "reason": {"beta crashed"}}); code != http.StatusSeeOther {
		t.Fatalf("force-release of an offline holder's lease: %d, want 303\n%s", code, body)
	}
	if _, body := u.get("reservations"); strings.Contains(body, betaLease) || !strings.Contains(body, alphaLease) {
		t.Errorf("after the force-release the page shows the wrong leases:\n%s", body)
	}
	if left := list(t, alpha.ok(t, "list_reservations", `{"agentId":"beta"}`), "leases"); len(left) != 0 {
		t.Errorf("beta still holds %v", left)
	}
	u.waitPage("traces?tool=console.force_release", 5*time.Second, "console.force_release")
}
