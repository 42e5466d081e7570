package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/transport/streamable"
)

func TestLoadHTTPSectionFromFileAndEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcprt.json")
	if err := os.WriteFile(path, []byte(`{"transport":{"maxInFlight":8,"http":{"addr":"127.0.0.1:9000","allowedHosts":["mcp.example.com"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	all, err := Load(path, []string{
		"MCPRT_TRANSPORT_HTTP_MAX_SESSIONS=7",
		"MCPRT_TRANSPORT_HTTP_ALLOWED_ORIGINS=https://a.example, https://b.example",
		"MCPRT_TRANSPORT_HTTP_AUTH_TOKEN_ENV_VAR=MY_TOKEN",
		"MCPRT_TRANSPORT_HTTP_RESPONSE_MODE=sse",
	}, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	base, cfg := all.Base, all.HTTP
	if base.Transport.MaxInFlight != 8 || base.Server.Version != "1.2.3" {
		t.Fatalf("base sections: %+v", base.Transport)
	}
	if cfg.Addr != "127.0.0.1:9000" || cfg.MaxSessions != 7 || len(cfg.AllowedOrigins) != 2 ||
		cfg.AllowedHosts[0] != "mcp.example.com" || cfg.AuthTokenEnvVar != "MY_TOKEN" || cfg.ResponseMode != streamable.ResponseSSE {
		t.Fatalf("http section: %+v", cfg)
	}
	if cfg.Path != "/mcp" || cfg.ReplayBufferEvents != 64 {
		t.Fatalf("defaults lost: %+v", cfg)
	}
}

func TestLoadRefusesBadHTTPValues(t *testing.T) {
	for _, tc := range []struct {
		env []string
		key string
	}{
		{[]string{"MCPRT_TRANSPORT_HTTP_PATH=mcp"}, "transport.http.path"},
		{[]string{"MCPRT_TRANSPORT_HTTP_ADDR=localhost"}, "transport.http.addr"},
		{[]string{"MCPRT_TRANSPORT_HTTP_ALLOWED_ORIGINS=evil.example"}, "transport.http.allowedOrigins"},
		{[]string{"MCPRT_TRANSPORT_HTTP_ALLOWED_HOSTS=http://x/"}, "transport.http.allowedHosts"},
		{[]string{"MCPRT_TRANSPORT_HTTP_MAX_SESSIONS=0"}, "transport.http.maxSessions"},
		{[]string{"MCPRT_TRANSPORT_HTTP_RESPONSE_MODE=JSON"}, "transport.http.responseMode"},
		{[]string{"MCPRT_TRANSPORT_HTTP_NOPE=1"}, ""},
	} {
		_, err := Load("", tc.env, "1")
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("%v: error %v, want a ConfigError for key %q", tc.env, err, tc.key)
		}
	}
}

// One load knows every section: each key's variable, set to the key's
// default, loads; a variable of no section fails.
func TestLoadKnowsEverySection(t *testing.T) {
	keys, err := Keys("v1")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		for _, section := range []string{"server.", "aacp.backend", "store.", "agent.", "transport.http.", "console.", "nats."} {
			if len(k.Path) >= len(section) && k.Path[:len(section)] == section {
				seen[section] = true
			}
		}
		if _, err := Load("", []string{k.Env + "=" + k.Default}, "v1"); err != nil && k.Default != "" {
			t.Errorf("%s=%s (its default): %v", k.Env, k.Default, err)
		}
	}
	if len(seen) != 7 {
		t.Errorf("sections with keys: %v; want server, aacp.backend, store, agent, transport.http, console and nats", seen)
	}
	_, err = Load("", []string{"MCPRT_NO_SUCH_SECTION_KEY=1"}, "v1")
	var ce *Error
	if !errors.As(err, &ce) {
		t.Errorf("an unknown variable loaded: %v", err)
	}
}

// A bad tools.enabled or tools.profile is a ConfigError of its key.
func TestServerOptionsToolSetErrors(t *testing.T) {
	for _, tc := range []struct {
		tweak func(*Base)
		key   string
	}{
		{func(c *Base) { c.Tools.Enabled = []string{"a b"} }, "tools.enabled"},
		{func(c *Base) { c.Tools.Profile = "a b" }, "tools.profile"},
	} {
		base := DefaultBase("v1")
		tc.tweak(&base)
		_, err := ServerOptions(base, mcp.Options{})
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tc.key || ce.Env != EnvName(tc.key) {
			t.Errorf("ServerOptions with a bad %s = %v, want a ConfigError of it", tc.key, err)
		}
	}
}

// The defaults of the configuration are the defaults of mcp.Options: a
// server built from either has the same limits.
func TestServerOptionsDefaultsAgreeWithMCP(t *testing.T) {
	opts, err := ServerOptions(DefaultBase("v1"), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fromConfig, err := mcp.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := mcp.NewServer(mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fromConfig.Limits(), plain.Limits(); got != want {
		t.Errorf("limits from the default configuration %+v, mcp's defaults %+v", got, want)
	}
	if fromConfig.Mode() != plain.Mode() || fromConfig.Info().Name != plain.Info().Name {
		t.Errorf("mode/name from the configuration %s/%s, mcp's %s/%s", fromConfig.Mode(), fromConfig.Info().Name,
			plain.Mode(), plain.Info().Name)
	}
}
