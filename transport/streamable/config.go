package streamable

import (
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/internal/setting"
)

// ConfigPath is where the section lives in the configuration file:
// {"transport": {"http": {...}}}; its variables are MCPRT_TRANSPORT_HTTP_*.
const ConfigPath = "transport.http"

// Response modes of Config.ResponseMode.
const (
	// ResponseAuto answers a request with one JSON body when the response
	// is the first message the request produces, and with an event stream
	// when a notification or a request to the client comes first.
	ResponseAuto = "auto"
	// ResponseJSON always answers with one JSON body; messages that belong
	// to the request go to the session's GET stream instead.
	ResponseJSON = "json"
	// ResponseSSE always answers with an event stream.
	ResponseSSE = "sse"
)

// Config is the "transport.http" section of the configuration. Its value
// from DefaultConfig holds the defaults; its tags are what the mcprt
// binary's configuration (package config) loads and documents.
type Config struct {
	Addr string `json:"addr" config:"nonempty" help:"host:port to listen on; the default 127.0.0.1 keeps the server reachable from this machine only."`
	Path string `json:"path" config:"nonempty" help:"URL path of the MCP endpoint (starts with /)."`
	// AllowedOrigins and AllowedHosts add to the localhost names, which
	// are always allowed.
	AllowedOrigins []string `json:"allowedOrigins" help:"Origin header values (scheme://host[:port]) allowed besides localhost ones; * allows any. A request with another Origin gets 403."`
	AllowedHosts   []string `json:"allowedHosts" help:"Host header values (host, or host:port) allowed besides localhost and loopback addresses; * allows any. A request with another Host gets 403."`
	// AuthTokenEnvVar names the variable that holds the bearer token; the
	// token itself never appears in the configuration.
	AuthTokenEnvVar    string        `json:"authTokenEnvVar" config:"envvar" help:"Environment variable holding the bearer token every request must carry (Authorization: Bearer ...); empty means no authentication."`
	MaxSessions        int           `json:"maxSessions" help:"Most sessions at once; an initialize beyond it gets 503."`
	SessionIdleTimeout time.Duration `json:"sessionIdleTimeoutMs" help:"A session with no request in progress and no open stream for this many milliseconds is closed."`
	ReplayBufferEvents int           `json:"replayBufferEvents" config:"max=100000" help:"Events each event stream keeps for resumption with Last-Event-ID (its bytes are bounded by transport.maxOutputBytes)."`
	ResponseMode       string        `json:"responseMode" config:"enum=auto|json|sse" help:"How requests are answered: auto (JSON unless the request sends messages first), json, or sse."`
	ReadTimeout        time.Duration `json:"readTimeoutMs" help:"Longest time to read one request, its headers and then its whole body, in milliseconds."`
	WriteTimeout       time.Duration `json:"writeTimeoutMs" help:"Longest time one response body or one stream event may take to write, in milliseconds; a stream whose client stops reading is closed after it."`
	IdleTimeout        time.Duration `json:"idleTimeoutMs" help:"How long an idle keep-alive connection stays open, in milliseconds."`
	// MaxConnections and MaxConnectionsPerClient bound the open
	// connections (conns.go); keep them below the descriptor limit.
	MaxConnections          int `json:"maxConnections" config:"max=1000000" help:"Most open connections; beyond it the oldest connection serving no request (sending its headers, or idle) is closed to make room, or, when every one is serving a request, the new one gets 503 and is closed. Keep it well below the process's descriptor limit (ulimit -n)."`
	MaxListens              int `json:"maxListens" config:"max=1000000" help:"Most open subscriptions/listen requests (stateless revision) at once; they have their own bound, apart from the maxSessions stateless requests, so open listens never keep other requests out. One beyond it gets 503."`
	MaxListensPerClient     int `json:"maxListensPerClient" config:"max=1000000" help:"Most open subscriptions/listen requests from one client address (IP); one beyond it gets 503."`
	MaxConnectionsPerClient int `json:"maxConnectionsPerClient" config:"max=1000000" help:"Most open connections from one client address (IP), with the same rule as maxConnections. Clients on one machine share 127.0.0.1."`
}

// DefaultConfig returns the section's defaults.
func DefaultConfig() Config {
	return Config{
		Addr:                    "127.0.0.1:8080",
		Path:                    "/mcp",
		MaxSessions:             100,
		SessionIdleTimeout:      30 * time.Minute,
		ReplayBufferEvents:      64,
		ResponseMode:            ResponseAuto,
		ReadTimeout:             30 * time.Second,
		WriteTimeout:            30 * time.Second,
		IdleTimeout:             2 * time.Minute,
		MaxConnections:          512,
		MaxConnectionsPerClient: 256,
		MaxListens:              200,
		MaxListensPerClient:     50,
	}
}

// Validate checks the rules that span more than a value's type: the path
// and the shape of the allow-lists. NewHandler calls it, and so does the
// binary's configuration load; the error is a *setting.Error naming the
// key (relative to ConfigPath).
func (c *Config) Validate() error {
	if !strings.HasPrefix(c.Path, "/") {
		return &setting.Error{Key: "path", Reason: "the path must start with /", Allowed: "a URL path such as /mcp"}
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return &setting.Error{Key: "addr", Reason: "not host:port", Allowed: "host:port, e.g. 127.0.0.1:8080 or :8080"}
	}
	for _, o := range c.AllowedOrigins {
		if _, ok := normalizeOrigin(o); !ok && o != "*" {
			return &setting.Error{Key: "allowedOrigins", Reason: "origin " + clipText(o) + " is not scheme://host[:port]",
				Allowed: "origins such as https://app.example.com or http://localhost:3000, or *"}
		}
	}
	for _, hst := range c.AllowedHosts {
		if !validHostEntry(hst) {
			return &setting.Error{Key: "allowedHosts", Reason: "host " + clipText(hst) + " is not host or host:port",
				Allowed: "host names or addresses, optionally with :port, e.g. mcp.example.com or 10.0.0.5:8080, or *"}
		}
	}
	return nil
}

// normalizeOrigin returns an origin as lower-case scheme://host[:port],
// and whether it is one (http or https, a host, nothing after it).
func normalizeOrigin(o string) (string, bool) {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}

// validHostEntry reports whether an allowedHosts entry is a host or
// host:port.
func validHostEntry(s string) bool {
	if s == "*" {
		return true
	}
	if s == "" || strings.ContainsAny(s, "/?#@ ") {
		return false
	}
	if h, p, err := net.SplitHostPort(s); err == nil {
		return h != "" && p != ""
	}
	return !strings.Contains(strings.Trim(s, "[]"), "]")
}

// clipText quotes s, shortened for an error message.
func clipText(s string) string { return jsontext.Quote(s) }
