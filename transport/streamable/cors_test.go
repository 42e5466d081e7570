package streamable

import (
	"net/http"
	"strings"
	"testing"
)

// A browser client of the stateless revision sends Mcp-Method, Mcp-Name
// and a tool's Mcp-Param-* headers: its preflight must allow them.
func TestPreflightAllowsTheStatelessHeaders(t *testing.T) {
	f := newFixture(t, fixtureOpts{http: func(c *Config) { c.AllowedOrigins = []string{"https://app.example.com"} }})
	resp := f.do(http.MethodOptions, "", "Origin", "https://app.example.com",
		"Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "content-type, mcp-method, mcp-name, mcp-param-region, x-other")
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("preflight: %s", resp.Status)
	}
	allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"content-type", "authorization", "mcp-session-id", "mcp-method", "mcp-name", "mcp-tools", "mcp-param-region"} {
		if !strings.Contains(allowed, h) {
			t.Errorf("Access-Control-Allow-Headers %q lacks %s", allowed, h)
		}
	}
	if strings.Contains(allowed, "x-other") {
		t.Errorf("Access-Control-Allow-Headers %q allows a header no client of ours sends", allowed)
	}
}

func TestPreflightHeaders(t *testing.T) {
	for _, tc := range []struct {
		requested string
		extra     string
	}{
		{"", ""},
		{"Mcp-Param-Region", ", Mcp-Param-Region"},
		{"mcp-param-", ""},
		{"mcp-param-a b", ""},
		{"mcp-param-x:y", ""},
		{"authorization, MCP-PARAM-Z", ", MCP-PARAM-Z"},
	} {
		if got := preflightHeaders(tc.requested); got != corsHeaders+tc.extra {
			t.Errorf("preflightHeaders(%q) = %q, want %q", tc.requested, got, corsHeaders+tc.extra)
		}
	}
}
