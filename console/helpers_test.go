package console

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/tools/messaging"
)

// testToken is the sign-in token of the test consoles.
const testToken = "s3cret-token"

// fixture is a console over temporary directories, served by httptest,
// with a browser-like client (cookie jar, no redirects followed).
type fixture struct {
	t      *testing.T
	dir    string
	c      *Console
	srv    *httptest.Server
	client *http.Client
	aacp   messaging.Config
}

func newFixture(t *testing.T, mod func(*Options, *messaging.Config)) *fixture {
	t.Helper()
	dir := t.TempDir()
	acfg := messaging.DefaultConfig()
	acfg.DataDir, acfg.AgentID, acfg.AgentType = dir, "human", "Manager"
	opts := Options{Config: DefaultConfig(), DataDir: dir, StoreDir: dir + "/store", PoliciesDir: dir + "/policies", Token: testToken}
	opts.Config.PollInterval = 50 * time.Millisecond
	if mod != nil {
		mod(&opts, &acfg)
	}
	if opts.Messaging == nil {
		svc, err := messaging.New(messaging.Options{Config: acfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = svc.Close() })
		opts.Messaging = svc
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	t.Cleanup(func() { srv.Close(); _ = c.Close() })
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &fixture{t: t, dir: dir, c: c, srv: srv, client: client, aacp: acfg}
}

// get fetches a console path and returns the status and body.
func (f *fixture) get(path string) (int, string) {
	f.t.Helper()
	resp, err := f.client.Get(f.srv.URL + "/ui/" + path)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, resp.Body)
	return resp.StatusCode, b.String()
}

// post submits a form to a console path.
func (f *fixture) post(path string, form url.Values) (int, string, http.Header) {
	f.t.Helper()
	resp, err := f.client.PostForm(f.srv.URL+"/ui/"+path, form)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, resp.Body)
	return resp.StatusCode, b.String(), resp.Header
}

// signIn signs the fixture's client in.
func (f *fixture) signIn() {
	f.t.Helper()
	if code, body, _ := f.post("signin", url.Values{"token": {testToken}}); code != http.StatusSeeOther {
		f.t.Fatalf("sign in: %d %s", code, body)
	}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf returns the CSRF token from a signed-in page.
func (f *fixture) csrf() string {
	f.t.Helper()
	_, body := f.get("compose")
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		f.t.Fatalf("no CSRF token in the compose page:\n%s", body)
	}
	return m[1]
}

// agent hosts another agent over the fixture's journal, as another
// session would, and returns its broker.
func (f *fixture) agent(id string) *broker.Broker {
	f.t.Helper()
	cfg := f.aacp
	cfg.AgentID, cfg.AgentType = id, "Implementation"
	svc, err := messaging.New(messaging.Options{Config: cfg})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = svc.Close() })
	b, err := svc.Broker(true)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := b.RegisterAgent(context.Background(), id, broker.RegisterInput{Type: envelope.Implementation}); err != nil {
		f.t.Fatal(err)
	}
	return b
}

// eventually waits (bounded) until cond holds.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", within, what)
		}
		<-tick.C
	}
}

// fakeReservations is an in-memory Reservations.
type fakeReservations struct {
	mu       sync.Mutex
	list     []Reservation
	released map[string]string
}

func (r *fakeReservations) Active(context.Context, int) ([]Reservation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Reservation
	for _, x := range r.list {
		if _, gone := r.released[x.ID]; !gone {
			out = append(out, x)
		}
	}
	return out, nil
}

func (r *fakeReservations) ForceRelease(_ context.Context, id, reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.list {
		if x.ID == id {
			if r.released == nil {
				r.released = map[string]string{}
			}
			r.released[id] = reason
			return nil
		}
	}
	return core.Errorf(core.CodeNotFound, "no reservation %q", id)
}

// fakeTasks is a fixed task list.
type fakeTasks []Task

func (t fakeTasks) List(context.Context, int) ([]Task, error) { return t, nil }
