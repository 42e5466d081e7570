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

// TestConsoleOverHTTP: mcprt --http serves the console at /ui/ behind its
// token; two sessions over stdio show as online agents; a message the
// person composes arrives in the agent's aacp_receive.
func TestConsoleOverHTTP(t *testing.T) {
	dir := t.TempDir()
	const token = "console-http-token-1234"
	bin := wiretest.Build(t)
	_, mcpURL := startHTTPServer(t, bin, token, "MCPRT_AACP_DATA_DIR="+dir, "MCPRT_AACP_AGENT_ID=lead",
		"MCPRT_TRANSPORT_HTTP_AUTH_TOKEN_ENV_VAR=MCPRT_CONSOLE_TEST_TOKEN", "MCPRT_CONSOLE_TEST_TOKEN="+token)
	base := strings.TrimSuffix(mcpURL, "/mcp") + "/ui/"
	alpha := startAgent(t, dir, "alpha", "Implementation")
	beta := startAgent(t, dir, "beta", "Implementation")
	alpha.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)
	beta.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)

	u := newUIClient(t, base)
	if code, _ := u.get(""); code != http.StatusSeeOther {
		t.Fatalf("GET /ui/ before sign-in: %d, want 303 to the sign-in form", code)
	}
	if code, _ := u.post("signin", url.Values{"token": {"not-it"}}); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d, want 401", code)
	}
	u.signIn(token)
	body := u.waitPage("", 5*time.Second, `data-agent="alpha"`, `data-agent="beta"`)
	for _, a := range []string{"alpha", "beta"} {
		if !regexp.MustCompile(`data-agent="` + a + `"[\s\S]*?presence online`).MatchString(body) {
			t.Errorf("%s is not shown online:\n%s", a, body)
		}
	}
	// The console refuses another Host, as /mcp does.
	req, _ := http.NewRequest(http.MethodGet, base, nil)
	req.Host = "attacker.example"
	if resp, err := u.c.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a foreign Host: %v %v, want 403", resp.StatusCode, err)
	}
	// Compose: the message arrives through the journal.
	if code, body := u.post("compose", url.Values{"csrf": {u.csrf()}, "to": {"alpha"}, "subject": {"status?"}, "body": {"report please"}}); code != http.StatusOK || !strings.Contains(body, `id="sent"`) {
		t.Fatalf("compose: %d\n%s", code, body)
	}
	m := alpha.receiveOne(t)
	if astr(m, "sender", "agentId") != "human" || astr(m, "sender", "type") != "Manager" || astr(m, "priority") != "HIGH" ||
		astr(m, "payload", "body") != "report please" {
		t.Errorf("alpha received %v", m)
	}
	// Without the CSRF token nothing is sent.
	if code, _ := u.post("compose", url.Values{"to": {"alpha"}, "body": {"x"}}); code != http.StatusForbidden {
		t.Errorf("compose without CSRF: %d, want 403", code)
	}
	// The compose is recorded among the traces, as the human's action.
	u.waitPage("traces?tool=console.compose", 5*time.Second, "console.compose")
}

// TestConsoleUI: mcprt ui serves the console alone over the data
// directory, behind the token it prints.
func TestConsoleUI(t *testing.T) {
	dir := t.TempDir()
	bin := wiretest.Build(t)
	alpha := startAgent(t, dir, "alpha", "Implementation")
	alpha.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)
	p := wiretest.Start(t, bin, wiretest.Options{Args: []string{"ui", "--addr", "127.0.0.1:0", "--data-dir", dir}})
	ready := p.ExpectLog(t, `"mcprt ui ready"`, func(m map[string]any) bool { return m["msg"] == "mcprt ui ready" })
	base := ready["url"].(string)
	// The token line comes before the ready line.
	m := regexp.MustCompile(`sign in with the token ([0-9a-f]{32})`).FindStringSubmatch(p.Stderr())
	if m == nil {
		t.Fatalf("mcprt ui printed no token:\n%s", p.Stderr())
	}
	token := m[1]
	u := newUIClient(t, base)
	u.signIn(token)
	u.waitPage("", 5*time.Second, `data-agent="alpha"`, "presence online")
	if code, body := u.post("compose", url.Values{"csrf": {u.csrf()}, "to": {"alpha"}, "body": {"from the console"}}); code != http.StatusOK {
		t.Fatalf("compose: %d\n%s", code, body)
	}
	if m := alpha.receiveOne(t); astr(m, "payload", "body") != "from the console" {
		t.Errorf("alpha received %v", m)
	}
	u.waitPage("messages?agent=alpha", 5*time.Second, "from the console")
	// The reservations, the task board and the message search of the
	// data directory's store.
	lease := str(list(t, alpha.ok(t, "reserve_paths", `{"paths":["lib/**"],"exclusive":true,"reason":"porting"}`), "leases")[0]["id"])
	taskID := str(alpha.ok(t, "task_post", `{"title":"port the lib","description":"to v2"}`)["taskId"])
	u.waitPage("reservations", 5*time.Second, `data-reservation="`+lease+`" data-agent="alpha"`, "lib/**")
	u.waitPage("tasks", 5*time.Second, `data-task="`+taskID+`"`, "port the lib")
	u.waitPage("messages?q=console", 5*time.Second, `class="hit"`, "[console]")
	if code, body := u.post("reservations/release", url.Values{"csrf": {u.csrf()}, "id": {lease}, "reason": {"mine now"}}); code != http.StatusBadRequest ||
		!strings.Contains(body, "RESERVATION_HOLDER_LIVE") {
		t.Errorf("force-release of online alpha's lease: %d, want 400 RESERVATION_HOLDER_LIVE\n%s", code, body)
	}
	p.Signal(syscall.SIGTERM)
	if code := p.Wait(t); code != 0 {
		t.Errorf("mcprt ui exited %d on SIGTERM, not 0:\n%s", code, p.Stderr())
	}
}

// TestConsoleShutdownWithOpenStream: an open live view does not hold a
// shutting-down server (the cleanup sends SIGTERM and wants exit 0). A
// server held by the stream would wait out its shutdown timeout, set far
// beyond the bound of Wait (which then fails the test), so no wall-clock
// threshold has to tell a held server from a slow one.
func TestConsoleShutdownWithOpenStream(t *testing.T) {
	dir := t.TempDir()
	srv := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Args: []string{"--http"},
		Env: []string{"MCPRT_TRANSPORT_HTTP_ADDR=127.0.0.1:0", "MCPRT_AACP_DATA_DIR=" + dir, "MCPRT_SERVER_SHUTDOWN_TIMEOUT_MS=600000"}})
	mcpURL := srv.ExpectLog(t, `"mcprt ready"`, func(m map[string]any) bool { return m["msg"] == "mcprt ready" })["url"].(string)
	u := newUIClient(t, strings.TrimSuffix(mcpURL, "/mcp")+"/ui/")
	if code, _ := u.get(""); code != http.StatusOK {
		t.Fatalf("GET /ui/: %d", code)
	}
	resp, err := u.c.Get(u.base + "events")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET events: %v %v", resp, err)
	}
	defer resp.Body.Close()
	start := time.Now()
	srv.Signal(syscall.SIGTERM)
	if code := srv.Wait(t); code != 0 {
		t.Errorf("exit %d", code)
	}
	t.Logf("stopped in %v with a live view open", time.Since(start).Round(time.Millisecond))
}
