package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// cookieName is the session cookie. It holds a random session id; the
// token the person signed in with is never stored.
const cookieName = "mcprt_console"

// maxSessions bounds the signed-in browsers kept; the least recently
// used goes first.
const maxSessions = 256

// browserSession is one signed-in browser.
type browserSession struct {
	csrf     string
	lastUsed time.Time
}

// sessions keeps the signed-in browsers in memory: a restart signs
// everyone out.
type sessions struct {
	ttl time.Duration

	mu   sync.Mutex
	byID map[string]*browserSession // guarded by mu
}

// secret returns 32 random bytes as hex: session ids and CSRF tokens are
// secrets, so they come from crypto/rand.
func secret() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics on an unusable source)
	return hex.EncodeToString(b[:])
}

// create starts a session and returns its id.
func (s *sessions) create(now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byID) >= maxSessions {
		var oldest string
		for id, b := range s.byID {
			if oldest == "" || b.lastUsed.Before(s.byID[oldest].lastUsed) {
				oldest = id
			}
		}
		delete(s.byID, oldest)
	}
	id := secret()
	s.byID[id] = &browserSession{csrf: secret(), lastUsed: now}
	return id
}

// lookup returns the live session with id (refreshing its use time).
func (s *sessions) lookup(id string, now time.Time) (*browserSession, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.byID[id]
	if !ok {
		return nil, false
	}
	if now.Sub(b.lastUsed) > s.ttl {
		delete(s.byID, id)
		return nil, false
	}
	b.lastUsed = now
	return b, true
}

func (s *sessions) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, id)
}

// tokenMatches compares the pasted token with the configured one in
// constant time.
func tokenMatches(got, want string) bool {
	g, w := sha256.Sum256([]byte(strings.TrimSpace(got))), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// hostAllowed accepts localhost and loopback hosts, and the configured
// ones ("*": any).
func (c *Console) hostAllowed(host string) bool {
	if host == "" {
		return false
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	if loopbackName(name) {
		return true
	}
	for _, a := range c.opts.AllowedHosts {
		if a == "*" || strings.EqualFold(a, host) || strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// originAllowed accepts the console's own origin, localhost origins and
// the configured ones ("*": any).
func (c *Console) originAllowed(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) || loopbackName(u.Hostname()) {
		return true
	}
	for _, a := range c.opts.AllowedOrigins {
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	return false
}

func loopbackName(name string) bool {
	name = strings.TrimSuffix(strings.Trim(name, "[]"), ".")
	if strings.EqualFold(name, "localhost") || strings.HasSuffix(strings.ToLower(name), ".localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// setSecurityHeaders sets the headers of every answer: a strict content
// security policy (no inline script, nothing from elsewhere), no framing,
// no sniffing, no referrer, and no caching of pages.
func setSecurityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // not no-referrer: browsers would then send "Origin: null" with forms
	h.Set("Cache-Control", "no-store")
}
