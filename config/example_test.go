package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// HTTPConfig is the section an HTTP transport package would declare. Its
// value, as returned by DefaultHTTPConfig, holds the defaults.
type HTTPConfig struct {
	Addr           string    `json:"addr" config:"nonempty" help:"Address to listen on."`
	AllowedOrigins []string  `json:"allowedOrigins" help:"Origins allowed to connect."`
	MaxBodyBytes   int       `json:"maxBodyBytes" config:"max=16777216" help:"Largest request body, in bytes."`
	Auth           string    `json:"auth" config:"enum=none|token" help:"How clients authenticate."`
	TokenEnvVar    string    `json:"tokenEnvVar" config:"envvar" help:"Variable holding the token (auth token)."`
	TLS            TLSConfig `json:"tls"`
}

// TLSConfig is the nested "tls" object of HTTPConfig.
type TLSConfig struct {
	CertFile string `json:"certFile" help:"PEM certificate; empty serves plain HTTP."`
	KeyFile  string `json:"keyFile" help:"PEM private key; set with certFile."`
}

// Validate checks a rule across keys; the key is relative to TLSConfig.
func (t *TLSConfig) Validate() error {
	if (t.CertFile == "") != (t.KeyFile == "") {
		return &Error{Key: "keyFile", Reason: "certFile and keyFile go together",
			Allowed: "both certFile and keyFile, or neither"}
	}
	return nil
}

// DefaultHTTPConfig returns the section's defaults.
func DefaultHTTPConfig() HTTPConfig {
	return HTTPConfig{Addr: "127.0.0.1:8080", MaxBodyBytes: 1 << 20, Auth: "none"}
}

func Example_section() {
	dir, _ := os.MkdirTemp("", "mcprt-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "mcprt.json")
	os.WriteFile(path, []byte(`{"server":{"mode":"READONLY"},"transport":{"http":{"addr":":9000"}}}`), 0o600)
	environ := []string{"MCPRT_TRANSPORT_HTTP_ALLOWED_ORIGINS=https://a.example, https://b.example"}

	cfg := DefaultBase("1.0.0")
	httpCfg := DefaultHTTPConfig()
	l := newBaseLoader(&cfg)
	if err := l.Add("transport.http", &httpCfg); err != nil {
		panic(err) // a malformed section is a programming error
	}
	if err := l.Load(path, environ); err != nil {
		fmt.Println(err) // the binary exits 78
		return
	}
	fmt.Println(cfg.Server.Mode, httpCfg.Addr, httpCfg.AllowedOrigins)

	// Every key, for --help or the README.
	for _, k := range l.Keys() {
		if k.Path == "transport.http.allowedOrigins" {
			fmt.Println(k.Env)
		}
	}

	// Strict: values are case-sensitive, and the error says what is allowed.
	err := l.Load("", []string{"MCPRT_TRANSPORT_HTTP_AUTH=Token"})
	var ce *Error
	if errors.As(err, &ce) {
		fmt.Println(ce.Key, ce.Env, ce.Value)
		fmt.Println(ce.Allowed)
	}
	// Output:
	// READONLY :9000 [https://a.example https://b.example]
	// MCPRT_TRANSPORT_HTTP_ALLOWED_ORIGINS
	// transport.http.auth MCPRT_TRANSPORT_HTTP_AUTH Token
	// one of none, token (case-sensitive)
}
