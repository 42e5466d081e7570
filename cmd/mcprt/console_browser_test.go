package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// The console in a real browser: headless Chromium from the distribution
// (make test installs it), driven with chromedp.

// browserPath finds a Chromium. Without one the group is skipped with a
// loud message, unless MCPRT_REQUIRE_BROWSER=1 (set by make test once it
// has installed Chromium), where the absence fails.
func browserPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-headless-shell", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "NO CHROMIUM FOUND: the console's browser tests DID NOT RUN. Install it (apt-get install -y chromium) or run make test, which installs it."
	if os.Getenv("MCPRT_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg)
	}
	t.Log(strings.Repeat("!", 78))
	t.Skip(msg)
	return ""
}

// screenshotDir is where the pages' screenshots go: $MCPRT_CONSOLE_SCREENSHOTS,
// or a directory under the system's temporary directory.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("MCPRT_CONSOLE_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "mcprt-console-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestConsoleInBrowser(t *testing.T) {
	chrome := browserPath(t)
	start := time.Now()
	dir := t.TempDir()
	const token = "console-browser-token-5678"
	bin := wiretest.Build(t)
	_, mcpURL := startHTTPServer(t, bin, token, "MCPRT_AACP_DATA_DIR="+dir, "MCPRT_AACP_AGENT_ID=lead",
		"MCPRT_TRANSPORT_HTTP_AUTH_TOKEN_ENV_VAR=MCPRT_CONSOLE_TEST_TOKEN", "MCPRT_CONSOLE_TEST_TOKEN="+token)
	base := strings.TrimSuffix(mcpURL, "/mcp") + "/ui/"
	alpha := startAgent(t, dir, "alpha", "Implementation")
	beta := startAgent(t, dir, "beta", "Implementation")
	alpha.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)
	beta.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)
	alpha.ok(t, "memory_store", `{"namespace":"notes","key":"plan","value":{"step":"<script>document.title='pwned'</script>"}}`)
	// Reservations of both agents, and a small task board.
	alphaLease := str(list(t, alpha.ok(t, "reserve_paths", `{"paths":["src/parser/**"],"exclusive":true,"reason":"rewriting the parser"}`), "leases")[0]["id"])
	betaLease := str(list(t, beta.ok(t, "reserve_paths", `{"paths":["docs/*.md"],"exclusive":true,"reason":"release notes"}`), "leases")[0]["id"])
	alpha.ok(t, "reserve_paths", `{"paths":["go.mod"],"exclusive":false,"reason":"reading"}`)
	parser := str(alpha.ok(t, "task_post", `{"title":"Rewrite the parser","description":"streaming","priority":4}`)["taskId"])
	tests := str(alpha.ok(t, "task_post", `{"title":"Fuzz the parser","description":"after the rewrite","dependsOn":["`+parser+`"]}`)["taskId"])
	notes := str(alpha.ok(t, "task_post", `{"title":"Write the release notes","description":"v2","assignee":"beta"}`)["taskId"])
	alpha.ok(t, "task_claim", `{"taskId":"`+parser+`"}`)
	alpha.ok(t, "task_update", `{"taskId":"`+parser+`","status":"in_progress","note":"halfway"}`)
	beta.ok(t, "task_claim", `{"taskId":"`+notes+`"}`)
	done := str(alpha.ok(t, "task_post", `{"title":"Pin the toolchain","description":"go 1.24"}`)["taskId"])
	alpha.ok(t, "task_claim", `{"taskId":"`+done+`"}`)
	alpha.ok(t, "task_update", `{"taskId":"`+done+`","status":"done","result":"pinned"}`)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	shots := screenshotDir(t)
	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var png []byte
			if err := chromedp.FullScreenshot(&png, 100).Do(ctx); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
		})
	}
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			var text string
			_ = chromedp.Run(ctx, chromedp.Evaluate(`document.body ? document.body.innerText : ""`, &text))
			t.Fatalf("%s: %v\nthe page shows:\n%s", what, err, text)
		}
	}
	// submit clicks a form's button and waits until the page it leads to
	// has loaded (after the POST's redirect).
	submit := func(what, sel string) {
		t.Helper()
		if _, err := chromedp.RunResponse(ctx, chromedp.Click(sel)); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// waitText waits until the page's main content holds s.
	waitText := func(s string) chromedp.Action {
		return chromedp.Poll(`document.getElementById("main") && document.getElementById("main").innerText.includes(`+jsonString(s)+`)`,
			nil, chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))
	}

	// Sign in with the token.
	run("sign in", chromedp.Navigate(base), chromedp.WaitVisible(`input[name=token]`), shot("signin"),
		chromedp.SendKeys(`input[name=token]`, token), chromedp.Submit(`input[name=token]`),
		chromedp.WaitVisible(`table.agents`))
	// Two live agents from two real processes.
	run("see the agents", waitText("alpha"), waitText("beta"),
		chromedp.WaitVisible(`tr[data-agent=alpha] .presence.online`), chromedp.WaitVisible(`tr[data-agent=beta] .presence.online`),
		chromedp.WaitVisible(`#live.on`))

	// Live: a message alpha sends shows on the open messages page without
	// a reload; its <img onerror> payload stays text.
	var marker bool
	run("open messages", chromedp.Navigate(base+"messages"), chromedp.WaitVisible(`#live.on`),
		chromedp.Evaluate(`window.__noReload = true`, nil))
	alpha.ok(t, "aacp_send", sendArgsTo("human", "CUSTOM_NOTE", `{"note":"<img src=x onerror=\"document.title='pwned'\">"}`))
	sent := time.Now()
	run("see the message live", waitText("onerror"), chromedp.Evaluate(`window.__noReload === true`, &marker))
	// Within a second on an idle machine; the bound allows for a loaded one.
	if d := time.Since(sent); d > 3*time.Second {
		t.Errorf("the message showed %v after it was sent", d)
	} else {
		t.Logf("the message showed %v after it was sent", d.Round(time.Millisecond))
	}
	if !marker {
		t.Error("the page was reloaded rather than updated live")
	}

	// Compose a message; alpha receives it.
	run("compose", chromedp.Navigate(base+"compose?to=alpha"), chromedp.WaitVisible(`textarea[name=body]`),
		chromedp.SendKeys(`input[name=subject]`, "from the browser"), chromedp.SendKeys(`textarea[name=body]`, "please report"),
		shot("compose"), chromedp.Submit(`textarea[name=body]`), chromedp.WaitVisible(`#sent`))
	m := alpha.receiveOne(t, "CUSTOM_HUMAN_MESSAGE")
	if astr(m, "payload", "subject") != "from the browser" || astr(m, "sender", "agentId") != "human" {
		t.Errorf("alpha received %v", m)
	}
	alpha.ok(t, "aacp_ack", `{"messageId":`+jsonString(astr(m, "messageId"))+`,"status":"processed"}`)

	// A message beta rejects for good (a NACK without retry) becomes a
	// dead letter: messages fail by their ttl or such a NACK, not by an
	// ack timeout. Requeue it.
	run("compose to beta", chromedp.Navigate(base+"compose?to=beta"), chromedp.WaitVisible(`textarea[name=body]`),
		chromedp.SendKeys(`textarea[name=body]`, "are you there?"), chromedp.Submit(`textarea[name=body]`), chromedp.WaitVisible(`#sent`))
	rejected := astr(beta.receiveOne(t, "CUSTOM_HUMAN_MESSAGE"), "messageId")
	beta.ok(t, "aacp_nack", `{"messageId":`+jsonString(rejected)+`,"reason":"not my area","canRetry":false}`)
	var deadID string
	var left int
	run("requeue", chromedp.Navigate(base+"messages"),
		chromedp.Poll(`document.querySelectorAll("tr.deadletter[data-sender=human]").length > 0`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.AttributeValue(`tr.deadletter[data-sender=human]`, "data-message", &deadID, nil), shot("messages"))
	submit("requeue", `tr.deadletter[data-sender=human] button.requeue`)
	run("requeued", chromedp.Evaluate(`document.querySelectorAll('tr.deadletter[data-message="`+deadID+`"]').length`, &left))
	if deadID != rejected || left != 0 {
		t.Errorf("the dead letter %q (want the rejected %q) is still listed after its requeue", deadID, rejected)
	}
	run("a message", chromedp.Navigate(base+"messages/"+rejected), chromedp.WaitVisible(`h1`), shot("message"))

	// The task board: each task in its status's column, with what it waits for.
	var inCol, after int
	run("tasks", chromedp.Navigate(base+"tasks"), chromedp.WaitVisible(`article[data-task="`+tests+`"]`), shot("tasks"),
		chromedp.Evaluate(`document.querySelectorAll('[data-status=in_progress] [data-task="`+parser+`"], [data-status=open] [data-task="`+tests+`"], `+
			`[data-status=claimed] [data-task="`+notes+`"], [data-status=done] [data-task="`+done+`"]').length`, &inCol),
		chromedp.Evaluate(`document.querySelector('[data-task="`+tests+`"]').innerText.includes("after `+parser+`") ? 1 : 0`, &after))
	if inCol != 4 || after != 1 {
		t.Errorf("the board shows %d of 4 tasks in their columns, dependency shown: %v", inCol, after == 1)
	}

	// Force-release: refused while the holder is live, done once its
	// process is killed (offline), with the reason recorded.
	forceRelease := func(id, reason string) {
		t.Helper()
		row := `tr[data-reservation="` + id + `"]`
		run("open reservations", chromedp.Navigate(base+"reservations"), chromedp.WaitVisible(row), chromedp.SendKeys(row+` input[name=reason]`, reason))
		submit("force-release "+id, row+` button.force-release`)
	}
	run("reservations", chromedp.Navigate(base+"reservations"), chromedp.WaitVisible(`tr[data-reservation="`+betaLease+`"]`), shot("reservations"))
	forceRelease(alphaLease, "take over")
	run("force-release a live holder's", waitText("RESERVATION_HOLDER_LIVE"), chromedp.WaitVisible(`p.error`),
		chromedp.WaitVisible(`tr[data-reservation="`+alphaLease+`"]`))
	beta.p.Signal(syscall.SIGKILL)
	beta.p.Wait(t)
	run("beta offline", chromedp.Navigate(base), chromedp.WaitVisible(`tr[data-agent=beta] .presence.offline`))
	forceRelease(betaLease, "beta was killed")
	run("force-release an offline holder's", chromedp.Poll(`document.querySelectorAll('tr[data-reservation="`+betaLease+`"]').length === 0 && document.querySelectorAll('tr[data-reservation="`+alphaLease+`"]').length === 1`,
		nil, chromedp.WithPollingTimeout(10*time.Second)))
	if l := list(t, alpha.ok(t, "list_reservations", `{"agentId":"beta"}`), "leases"); len(l) != 0 {
		t.Errorf("beta still holds %v after the force-release", l)
	}
	run("force-release recorded", chromedp.Navigate(base+"traces?tool=console.force_release"), waitText("console.force_release"))

	// The other pages, and a trace's timeline.
	run("overview shot", chromedp.Navigate(base), chromedp.WaitVisible(`table.agents`), shot("overview"))
	run("memory", chromedp.Navigate(base+"memory"), waitText("plan"), shot("memory"))
	for _, p := range []string{"sessions", "guard"} {
		run(p, chromedp.Navigate(base+p), chromedp.WaitVisible(`h1`), shot(p))
	}
	alpha.ok(t, "workflow_run", `{"workflowId":"remember-and-recall","input":{"key":"release-notes","note":{"text":"ship it"}}}`)
	alpha.fails(t, "workflow_run", `{"workflowId":"no-such-flow"}`, "WORKFLOW_NOT_FOUND")
	// Reading traces writes what alpha's recorder still holds (its linger
	// timer alone was seen to leave the last events queued for long).
	alpha.ok(t, "trace_list", `{"limit":1}`)
	var steps int
	run("traces", chromedp.Navigate(base+"traces"), chromedp.WaitVisible(`figure.chart`), waitText("workflow_run"), shot("traces"),
		chromedp.Navigate(base+"traces?tool=memory_store"), chromedp.WaitVisible(`table.traces a`),
		chromedp.Click(`table.traces a`), chromedp.WaitVisible(`ol.waterfall`), shot("trace"),
		chromedp.Evaluate(`document.querySelectorAll("ol.waterfall li.step").length`, &steps))
	if steps < 2 {
		t.Errorf("the workflow's trace shows %d step(s), want its nested steps", steps)
	}

	// Nothing the agents wrote ran.
	var title string
	var imgs int
	run("check escaping", chromedp.Navigate(base+"messages"), waitText("onerror"), chromedp.Title(&title),
		chromedp.Evaluate(`document.querySelectorAll("main img, main script").length`, &imgs))
	run("memory escaping", chromedp.Navigate(base+"memory"), waitText("<script>"), chromedp.Title(&title))
	if strings.Contains(title, "pwned") || imgs != 0 {
		t.Errorf("an agent's markup ran or rendered: title %q, %d img/script elements in main", title, imgs)
	}
	t.Logf("screenshots in %s; the browser group took %v", shots, time.Since(start).Round(time.Millisecond))
}
