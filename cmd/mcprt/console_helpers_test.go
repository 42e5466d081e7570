package main

// Helpers of the console's black-box tests (console_*_test.go): a
// browser-like HTTP client of the console that mcprt --http or mcprt ui
// serves.

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// uiClient is a browser without JavaScript: a cookie jar, no redirects
// followed.
type uiClient struct {
	t    testing.TB
	base string // the console's URL, ending in /ui/
	c    *http.Client
}

func newUIClient(t testing.TB, base string) *uiClient {
	jar, _ := cookiejar.New(nil)
	return &uiClient{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 15 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (u *uiClient) get(path string) (int, string) {
	u.t.Helper()
	resp, err := u.c.Get(u.base + path)
	if err != nil {
		u.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (u *uiClient) post(path string, form url.Values) (int, string) {
	u.t.Helper()
	resp, err := u.c.PostForm(u.base+path, form)
	if err != nil {
		u.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (u *uiClient) signIn(token string) {
	u.t.Helper()
	if code, body := u.post("signin", url.Values{"token": {token}}); code != http.StatusSeeOther {
		u.t.Fatalf("sign in: %d\n%s", code, body)
	}
}

var uiCSRF = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func (u *uiClient) csrf() string {
	u.t.Helper()
	_, body := u.get("compose")
	m := uiCSRF.FindStringSubmatch(body)
	if m == nil {
		u.t.Fatalf("no CSRF token on the compose page")
	}
	return m[1]
}

// waitPage polls a page (bounded) until it holds every want.
func (u *uiClient) waitPage(path string, within time.Duration, want ...string) string {
	u.t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		_, body := u.get(path)
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(body, w)
		}
		if ok {
			return body
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("after %v, /ui/%s lacks one of %q:\n%s", within, path, want, body)
		}
		<-tick.C
	}
}
