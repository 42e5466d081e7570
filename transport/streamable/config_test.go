package streamable

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcprt/mcprt/core"
)

func TestLoadConfigFromFileAndEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcprt.json")
	if err := os.WriteFile(path, []byte(`{"transport":{"maxInFlight":8,"http":{"addr":"127.0.0.1:9000","allowedHosts":["mcp.example.com"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base, cfg, err := LoadConfig(path, []string{
		"MCPRT_TRANSPORT_HTTP_MAX_SESSIONS=7",
		"MCPRT_TRANSPORT_HTTP_ALLOWED_ORIGINS=https://a.example, https://b.example",
		"MCPRT_TRANSPORT_HTTP_AUTH_TOKEN_ENV_VAR=MY_TOKEN",
		"MCPRT_TRANSPORT_HTTP_RESPONSE_MODE=sse",
	}, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if base.Transport.MaxInFlight != 8 || base.Server.Version != "1.2.3" {
		t.Fatalf("base sections: %+v", base.Transport)
	}
	if cfg.Addr != "127.0.0.1:9000" || cfg.MaxSessions != 7 || len(cfg.AllowedOrigins) != 2 ||
		cfg.AllowedHosts[0] != "mcp.example.com" || cfg.AuthTokenEnvVar != "MY_TOKEN" || cfg.ResponseMode != ResponseSSE {
		t.Fatalf("http section: %+v", cfg)
	}
	if cfg.Path != "/mcp" || cfg.ReplayBufferEvents != 64 {
		t.Fatalf("defaults lost: %+v", cfg)
	}
}

func TestLoadConfigRefusesBadValues(t *testing.T) {
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
		_, _, err := LoadConfig("", tc.env, "1")
		var ce *core.ConfigError
		if !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("%v: error %v, want a ConfigError for key %q", tc.env, err, tc.key)
		}
	}
}

func TestConfigKeysDocumentEveryKey(t *testing.T) {
	keys := ConfigKeys()
	if len(keys) != 16 {
		t.Fatalf("%d keys, want 16", len(keys))
	}
	for _, k := range keys {
		if k.Meaning == "" || k.Env != core.EnvName(k.Path) {
			t.Errorf("key %+v: want a help line and the env name %s", k, core.EnvName(k.Path))
		}
	}
}
