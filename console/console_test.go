package console

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/domain/trace"
	"github.com/mcprt/mcprt/tools/messaging"
)

func TestSignIn(t *testing.T) {
	f := newFixture(t, nil)
	// Not signed in: pages redirect to the form, the event stream is 401.
	if code, _ := f.get(""); code != http.StatusSeeOther {
		t.Fatalf("GET / before sign-in: %d, want 303", code)
	}
	if code, _ := f.get("events"); code != http.StatusUnauthorized {
		t.Fatalf("GET events before sign-in: %d, want 401", code)
	}
	if code, _, _ := f.post("compose", url.Values{"to": {"x"}}); code != http.StatusUnauthorized {
		t.Fatalf("POST compose before sign-in: %d, want 401", code)
	}
	if code, body := f.get("signin"); code != http.StatusOK || !strings.Contains(body, `name="token"`) {
		t.Fatalf("GET signin: %d\n%s", code, body)
	}
	if code, _, _ := f.post("signin", url.Values{"token": {"wrong"}}); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d, want 401", code)
	}
	code, _, hdr := f.post("signin", url.Values{"token": {testToken}})
	if code != http.StatusSeeOther {
		t.Fatalf("the right token: %d, want 303", code)
	}
	ck := hdr.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/ui/"} {
		if !strings.Contains(ck, want) {
			t.Errorf("cookie %q lacks %s", ck, want)
		}
	}
	if strings.Contains(ck, testToken) {
		t.Errorf("the cookie carries the token: %q", ck)
	}
	if code, _ := f.get(""); code != http.StatusOK {
		t.Fatalf("GET / after sign-in: %d", code)
	}
	// Signing out ends the session.
	if code, _, _ := f.post("signout", url.Values{"csrf": {f.csrf()}}); code != http.StatusSeeOther {
		t.Fatalf("sign out: %d", code)
	}
	if code, _ := f.get(""); code != http.StatusSeeOther {
		t.Fatalf("GET / after sign-out: %d, want 303", code)
	}
}

func TestNoTokenGivesASession(t *testing.T) {
	f := newFixture(t, func(o *Options, _ *messaging.Config) { o.Token = "" })
	if code, _ := f.get(""); code != http.StatusOK {
		t.Fatalf("GET / without a configured token: %d, want 200", code)
	}
	// CSRF still applies.
	if code, _, _ := f.post("compose", url.Values{"to": {"x"}}); code != http.StatusForbidden {
		t.Fatalf("POST without CSRF: %d, want 403", code)
	}
}

func TestEveryPage(t *testing.T) {
	f := newFixture(t, nil)
	f.signIn()
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"", 200, "Agents"},
		{"messages", 200, "Dead letters"},
		{"messages?state=open&type=X&priority=HIGH&page=3", 200, "no messages"},
		{"compose", 200, `name="to"`},
		{"reservations", 200, "Not available in this build"},
		{"tasks", 200, "Not available in this build"},
		{"memory", 200, "Memory"},
		{"sessions", 200, "no sessions"},
		{"guard", 200, "docs-only"},
		{"traces", 200, "calls/s"},
		{"traces?status=bogus", 400, "not success or failure"},
		{"traces/nope", 404, "no trace nope"},
		{"sessions/nope", 404, "no session nope"},
		{"messages/nope", 404, "no stored message"},
		{"nowhere", 404, "no console page"},
		{"assets/console.css", 200, "--acc"},
		{"assets/console.js", 200, "EventSource"},
		{"assets/../console.go", 404, ""},
		{"assets/x.txt", 404, ""},
	} {
		code, body := f.get(tc.path)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("GET /ui/%s: %d (want %d), body has %q: %v", tc.path, code, tc.code, tc.want, strings.Contains(body, tc.want))
		}
		if len(body) > 100<<10 {
			t.Errorf("GET /ui/%s: %d bytes, over 100 KB", tc.path, len(body))
		}
	}
}

func TestSecurityHeadersAndHostChecks(t *testing.T) {
	f := newFixture(t, nil)
	f.signIn()
	resp, err := f.client.Get(f.srv.URL + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	for _, tc := range []struct{ host, origin string }{{"evil.example", ""}, {"", "http://evil.example"}} {
		req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/ui/", nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("host %q origin %q: %d, want 403", tc.host, tc.origin, resp.StatusCode)
		}
	}
}

func TestCSRFRefused(t *testing.T) {
	f := newFixture(t, nil)
	f.signIn()
	for _, path := range []string{"compose", "requeue", "reservations/release", "signout"} {
		for _, tok := range []string{"", "0123abcd"} {
			code, body, _ := f.post(path, url.Values{"csrf": {tok}, "to": {"b"}, "messageId": {"m"}})
			if code != http.StatusForbidden || !strings.Contains(body, "CSRF") {
				t.Errorf("POST %s with csrf %q: %d, want 403 naming CSRF", path, tok, code)
			}
		}
	}
}

func TestComposeArrivesAndIsTraced(t *testing.T) {
	f := newFixture(t, nil)
	f.signIn()
	b := f.agent("agent-b")
	code, body, _ := f.post("compose", url.Values{"csrf": {f.csrf()}, "to": {"agent-b"}, "subject": {"stop"}, "body": {"please stop <now>"}})
	if code != http.StatusOK || !strings.Contains(body, `id="sent"`) {
		t.Fatalf("compose: %d\n%s", code, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := b.Receive(ctx, "agent-b", broker.ReceiveInput{WaitMs: 3000})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("receive: %v %+v", err, out)
	}
	m := out.Messages[0]
	if m.Sender.AgentID != "human" || m.Sender.Type != envelope.Manager || m.Priority != envelope.High || m.MessageType != defaultComposeType {
		t.Errorf("the message: sender %+v priority %s type %s", m.Sender, m.Priority, m.MessageType)
	}
	var p map[string]string
	if err := json.Unmarshal(m.Payload, &p); err != nil || p["subject"] != "stop" || p["body"] != "please stop <now>" {
		t.Errorf("payload %s", m.Payload)
	}
	sums, _, err := f.c.db.Traces().List(ctx, trace.ListQuery{Tool: "console.compose", Limit: 10})
	if err != nil || len(sums) != 1 {
		t.Fatalf("the compose is not recorded as a trace: %v %+v", err, sums)
	}
}

func TestComposeRefusesBadInput(t *testing.T) {
	f := newFixture(t, nil)
	f.signIn()
	f.agent("agent-b")
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"to": {""}, "body": {"x"}}, "no receiver"},
		{url.Values{"to": {"../x"}, "body": {"x"}}, "receiver"},
		{url.Values{"to": {"agent-b"}}, "empty"},
		{url.Values{"to": {"agent-b"}, "type": {"TASK_UPDATE"}, "body": {"free text"}}, "JSON payload"},
		{url.Values{"to": {"nobody-here"}, "body": {"x"}}, "nobody-here"},
	} {
		tc.form.Set("csrf", f.csrf())
		code, body, _ := f.post("compose", tc.form)
		if code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("compose %v: %d, want 400 saying %q", tc.form, code, tc.want)
		}
	}
}

func TestAgentContentIsEscaped(t *testing.T) {
	f := newFixture(t, nil)
	f.signIn()
	b := f.agent("agent-b")
	ctx := context.Background()
	if _, err := f.c.ensureHuman(ctx); err != nil {
		t.Fatal(err)
	}
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	raw, _ := json.Marshal(map[string]string{"note": evil})
	out, err := b.Send(ctx, "agent-b", broker.SendInput{Receiver: broker.Receiver{AgentID: "human"}, MessageType: "CUSTOM_NOTE", Payload: raw})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.db.Memory().Put(ctx, memory.Entry{Namespace: "notes", Key: "k<script>", Value: json.RawMessage(`"` + `<img src=x onerror=alert(3)>` + `"`), StoredAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"messages", "messages/" + out.MessageID, "memory", "memory?ns=notes"} {
		code, body := f.get(path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
		for _, bad := range []string{"<script>alert", "<img src=x", "<img src=\\u0022x"} {
			if strings.Contains(body, bad) {
				t.Errorf("GET %s holds the agent's markup %q unescaped", path, bad)
			}
		}
		if !strings.Contains(body, "&lt;") {
			t.Errorf("GET %s does not show the agent's markup as text", path)
		}
	}
}

func TestRequeueDeadLetter(t *testing.T) {
	f := newFixture(t, nil)
	f.signIn()
	b := f.agent("agent-b")
	if code, body, _ := f.post("compose", url.Values{"csrf": {f.csrf()}, "to": {"agent-b"}, "body": {"x"}}); code != http.StatusOK {
		t.Fatalf("compose: %d %s", code, body)
	}
	// A message fails by its ttl or by a NACK that allows no retry (not
	// by an ack timeout): agent-b rejects it for good.
	got, err := b.Receive(context.Background(), "agent-b", broker.ReceiveInput{WaitMs: 5000, Max: 1})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("agent-b received %+v, %v; want the composed message", got, err)
	}
	if _, err := b.Nack(context.Background(), "agent-b", broker.NackInput{MessageID: got.Messages[0].MessageID, Reason: "cannot do it", CanRetry: false}); err != nil {
		t.Fatal(err)
	}
	var id string
	eventually(t, 10*time.Second, "the rejected message becomes a dead letter", func() bool {
		snap, err := f.c.journal.current(context.Background())
		if err != nil || len(snap.activeDead()) == 0 {
			return false
		}
		if n := len(snap.activeDead()); n != 1 {
			t.Fatalf("one rejected message made %d dead letters, want 1", n)
		}
		id = snap.activeDead()[0].MessageID
		return true
	})
	if id != got.Messages[0].MessageID {
		t.Errorf("the dead letter is %q, want the rejected message %q", id, got.Messages[0].MessageID)
	}
	if code, body := f.get("messages"); code != 200 || !strings.Contains(body, `data-message="`+id+`"`) {
		t.Fatalf("the dead letter is not listed")
	}
	if code, body, _ := f.post("requeue", url.Values{"csrf": {f.csrf()}, "messageId": {"no-such-id"}}); code != http.StatusNotFound {
		t.Errorf("requeue of an unknown id: %d %s", code, body)
	}
	if code, body, _ := f.post("requeue", url.Values{"csrf": {f.csrf()}, "messageId": {id}}); code != http.StatusSeeOther {
		t.Fatalf("requeue: %d %s", code, body)
	}
	snap, err := f.c.journal.current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range snap.dead {
		if d.MessageID == id && d.Status == "dead" {
			t.Errorf("the dead letter is still waiting after the requeue")
		}
	}
	sums, _, _ := f.c.db.Traces().List(context.Background(), trace.ListQuery{Tool: "console.requeue", Limit: 10})
	if len(sums) != 2 || sums[0].Failures+sums[1].Failures != 1 {
		t.Errorf("the requeues are not recorded (one failed, one done): %+v", sums)
	}
}

func TestReservationsAndTasks(t *testing.T) {
	res := &fakeReservations{list: []Reservation{{ID: "r1", AgentID: "agent-b", Path: "src/<b>.go", Exclusive: true, CreatedAt: time.Now()}}}
	tasks := fakeTasks{{ID: "t3", Title: "ship", Status: "done"}, {ID: "t1", Title: "write docs", Status: "claimed", Assignee: "agent-b", DependsOn: []string{"t0"}},
		{ID: "t0", Title: "outline", Status: "open"}}
	f := newFixture(t, func(o *Options, _ *messaging.Config) { o.Reservations, o.Tasks = res, tasks })
	f.signIn()
	if code, body := f.get("reservations"); code != 200 || !strings.Contains(body, "src/&lt;b&gt;.go") {
		t.Fatalf("reservations: %d\n%s", code, body)
	}
	code, body := f.get("tasks")
	if code != 200 || !strings.Contains(body, "write docs") || !strings.Contains(body, "after t0") {
		t.Fatalf("tasks: %d\n%s", code, body)
	}
	// The columns in the work queue's order, whatever order the tasks came in.
	if o, c, d := strings.Index(body, `data-status="open"`), strings.Index(body, `data-status="claimed"`), strings.Index(body, `data-status="done"`); o < 0 || !(o < c && c < d) {
		t.Errorf("the board's columns are not open, claimed, done in that order (at %d, %d, %d)", o, c, d)
	}
	if code, _, _ := f.post("reservations/release", url.Values{"csrf": {f.csrf()}, "id": {"r1"}}); code != http.StatusBadRequest {
		t.Errorf("force-release without a reason: %d, want 400", code)
	}
	if code, body, _ := f.post("reservations/release", url.Values{"csrf": {f.csrf()}, "id": {"r9"}, "reason": {"stale"}}); code != http.StatusBadRequest || !strings.Contains(body, "r9") {
		t.Errorf("force-release of an unknown id: %d", code)
	}
	if code, _, _ := f.post("reservations/release", url.Values{"csrf": {f.csrf()}, "id": {"r1"}, "reason": {"stale"}}); code != http.StatusSeeOther {
		t.Fatalf("force-release: %d", code)
	}
	if res.released["r1"] != "stale" {
		t.Errorf("the reason was not passed: %v", res.released)
	}
}

func TestTraceWaterfall(t *testing.T) {
	f := newFixture(t, nil)
	f.signIn()
	now := time.Now().UTC()
	id := "7d1f9a52-8c1e-4b55-9e0a-3c1a2b4d5e6f"
	evs := []trace.Event{
		{RunID: "a1b2c3d4-0000-4000-8000-000000000001", TraceID: id, CorrelationID: id, Tool: "workflow_run", Start: now, Duration: 40 * time.Millisecond, Outcome: "tool_error", ErrorCode: "STEP_FAILED", ErrorMessage: "<b>boom</b>", ServerID: "s"},
		{RunID: "a1b2c3d4-0000-4000-8000-000000000002", TraceID: id, CorrelationID: id + "/lint", ParentID: id, Tool: "guard_check", Start: now.Add(5 * time.Millisecond), Duration: 10 * time.Millisecond, Outcome: "success", Success: true, ServerID: "s"},
	}
	if err := f.c.db.Traces().Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	code, body := f.get("traces/" + id)
	if code != 200 {
		t.Fatalf("trace: %d", code)
	}
	for _, want := range []string{"step failed", "STEP_FAILED", "&lt;b&gt;boom", `class="label d1"`, "<rect x="} {
		if !strings.Contains(body, want) {
			t.Errorf("the waterfall lacks %q", want)
		}
	}
	if _, body := f.get(""); !strings.Contains(body, "<b>1</b> failed workflow runs") {
		t.Errorf("the overview does not count the failed run")
	}
}

// TestLiveEvents: a message another session sends shows on the live view
// at the hub's next poll, and the default poll interval is within a
// second. The console runs on a manual clock, so the poll is timed by
// the test, never by how loaded the machine is.
func TestLiveEvents(t *testing.T) {
	if d := DefaultConfig().PollInterval; d > time.Second {
		t.Fatalf("the default poll interval is %v: a message would not show within a second", d)
	}
	clock := core.NewManualClock(time.Now())
	f := newFixture(t, func(o *Options, _ *messaging.Config) { o.Clock = clock })
	f.signIn()
	b := f.agent("agent-b")
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/ui/events", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // ends a hung test only
	defer cancel()
	resp, err := f.client.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	lines := make(chan string, 64)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				lines <- string(buf[:n])
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	<-lines // the opening comment: the stream is subscribed
	// The store watcher's poll, the stream's keep-alive and the hub's
	// next poll are armed: the hub's first look (the baseline a change is
	// told against) is done, so the message below is a change to it.
	if err := clock.WaitForTimers(ctx, 3); err != nil {
		t.Fatalf("the live view's timers were not armed: %v (%d armed)", err, clock.Timers())
	}
	if _, err := f.c.ensureHuman(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Send(context.Background(), "agent-b", broker.SendInput{Receiver: broker.Receiver{AgentID: "human"},
		MessageType: "CUSTOM_NOTE", Payload: json.RawMessage(`{"x":1}`)}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(f.c.cfg.PollInterval) // one poll interval: the next look
	for {
		select {
		case s, ok := <-lines:
			if !ok {
				t.Fatalf("the stream ended without a change event for the new message (ctx: %v)", ctx.Err())
			}
			if strings.Contains(s, "event: change") && strings.Contains(s, "messages") {
				return
			}
		case <-ctx.Done():
			t.Fatal("no change event for the new message after one poll interval")
		}
	}
}

func TestPaginateCoversEveryRowOnce(t *testing.T) {
	for n := 0; n <= 23; n++ {
		for _, size := range []int{5, 7, 50} {
			seen := make([]int, n)
			pages := max(1, (n+size-1)/size)
			for page := range pages + 2 { // pages past the end show the last
				r := httptest.NewRequest(http.MethodGet, "/ui/messages?agent=a&page="+strconv.Itoa(page), nil)
				p, lo, hi := paginate(r, n, size)
				if hi-lo > size || lo > hi || hi > n {
					t.Fatalf("n=%d size=%d page=%d: rows [%d,%d)", n, size, page, lo, hi)
				}
				if page < pages {
					for i := lo; i < hi; i++ {
						seen[i]++
					}
					if p.HasNext() != (page < pages-1) || p.HasPrev() != (page > 0) {
						t.Errorf("n=%d size=%d page=%d: next %v prev %v", n, size, page, p.HasNext(), p.HasPrev())
					}
				}
				if !strings.Contains(p.Link(1), "agent=a") || !strings.Contains(p.Link(1), "page=1") {
					t.Errorf("link %q loses the filters", p.Link(1))
				}
			}
			for i, k := range seen {
				if k != 1 {
					t.Fatalf("n=%d size=%d: row %d shown %d times", n, size, i, k)
				}
			}
		}
	}
}

func TestRelative(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "never"},
		{now, "just now"},
		{now.Add(-30 * time.Second), "30s ago"},
		{now.Add(-5 * time.Minute), "5m ago"},
		{now.Add(-3 * time.Hour), "3h ago"},
		{now.Add(-72 * time.Hour), "3d ago"},
		{now.Add(10 * time.Minute), "10m from now"},
	} {
		if got := relative(tc.t, now); got != tc.want {
			t.Errorf("relative(%v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}

func TestOverviewShowsAgentsSession(t *testing.T) {
	f := newFixture(t, nil)
	f.signIn()
	f.agent("agent-b")
	ctx := context.Background()
	now := time.Now().UTC()
	s := session.Session{ID: "5e55e55e-0000-4000-8000-000000000001", Initiator: "agent-b", Task: "refactor <the> parser",
		Status: session.StatusActive, CreatedAt: now, UpdatedAt: now,
		Participants: []session.Participant{{AgentID: "agent-b", Role: "initiator", JoinedAt: now}}}
	if err := f.c.db.Sessions().Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	code, body := f.get("")
	if code != 200 || !strings.Contains(body, `href="/ui/sessions/`+s.ID+`">refactor &lt;the&gt; parser`) {
		t.Errorf("the overview does not link agent-b's session:\n%s", body)
	}
	if code, body := f.get("sessions/" + s.ID); code != 200 || !strings.Contains(body, "refactor &lt;the&gt; parser") {
		t.Errorf("the session page: %d", code)
	}
}
