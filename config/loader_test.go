package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
)

// httpTestSection is a section another package could declare.
type httpTestSection struct {
	Addr           string         `json:"addr" config:"nonempty" help:"Listen address."`
	AllowedOrigins []string       `json:"allowedOrigins" help:"Origins allowed to connect."`
	MaxBodyBytes   int            `json:"maxBodyBytes" config:"max=1048576" help:"Largest request body."`
	Retries        int            `json:"retries" config:"min=0,max=10" help:"Retries; 0 means none."`
	Auth           string         `json:"auth" config:"enum=none|token" help:"Authentication."`
	Token          string         `json:"token" config:"secret" help:"The token itself."`
	TokenEnvVar    string         `json:"tokenEnvVar" config:"envvar" help:"Variable holding the token."`
	Enabled        bool           `json:"enabled" help:"Serve HTTP."`
	TLS            tlsTestSection `json:"tls"`
	Skipped        string         `json:"-"`
	internal       int
}

type tlsTestSection struct {
	CertFile string `json:"certFile" help:"Certificate file."`
	KeyFile  string `json:"keyFile" config:"secret" help:"Key file."`
}

// Validate wants both files or neither; it names the key relative to its
// own struct.
func (t *tlsTestSection) Validate() error {
	if (t.CertFile == "") != (t.KeyFile == "") {
		return &Error{Key: "certFile", Allowed: "both certFile and keyFile, or neither", Reason: "certFile and keyFile go together"}
	}
	return nil
}

// Validate refuses token auth without a token; a plain error.
func (h *httpTestSection) Validate() error {
	if h.Auth == "token" && h.Token == "" && h.TokenEnvVar == "" {
		return errors.New("auth token needs token or tokenEnvVar")
	}
	return nil
}

func defaultHTTP() httpTestSection {
	return httpTestSection{Addr: "127.0.0.1:8080", AllowedOrigins: []string{"http://localhost"}, MaxBodyBytes: 1024, Auth: "none", internal: 7}
}

// newTestLoader returns a loader of the base sections and the HTTP section.
func newTestLoader(t *testing.T) (*loader, *Base, *httpTestSection) {
	t.Helper()
	cfg := DefaultBase("v1")
	h := defaultHTTP()
	l := newBaseLoader(&cfg)
	if err := l.Add("transport.http", &h); err != nil {
		t.Fatal(err)
	}
	return l, &cfg, &h
}

func TestLoaderSection(t *testing.T) {
	l, cfg, h := newTestLoader(t)
	file := writeConfig(t, `{"transport":{"maxInFlight":5,"http":{"addr":":9000","retries":0,"tls":{"certFile":"c.pem","keyFile":"k.pem"}}}}`)
	env := []string{"MCPRT_TRANSPORT_HTTP_ALLOWED_ORIGINS=https://a.example, https://b.example",
		"MCPRT_TRANSPORT_HTTP_ENABLED=1", "MCPRT_TRANSPORT_HTTP_AUTH=token", "MCPRT_TRANSPORT_HTTP_TOKEN_ENV_VAR=MCPRT_HTTP_TOKEN",
		"MCPRT_HTTP_TOKEN=s3cret", "MCPRT_SERVER_NAME=srv"}
	if err := l.Load(file, env); err != nil {
		t.Fatal(err)
	}
	wantCfg := DefaultBase("v1")
	wantCfg.Transport.MaxInFlight = 5
	wantCfg.Server.Name = "srv"
	if !reflect.DeepEqual(*cfg, wantCfg) {
		t.Errorf("base config %+v, want %+v", *cfg, wantCfg)
	}
	wantHTTP := defaultHTTP()
	wantHTTP.Addr = ":9000"
	wantHTTP.AllowedOrigins = []string{"https://a.example", "https://b.example"}
	wantHTTP.Enabled = true
	wantHTTP.Auth = "token"
	wantHTTP.TokenEnvVar = "MCPRT_HTTP_TOKEN"
	wantHTTP.TLS = tlsTestSection{CertFile: "c.pem", KeyFile: "k.pem"}
	if !reflect.DeepEqual(*h, wantHTTP) {
		t.Errorf("http section %+v, want %+v", *h, wantHTTP)
	}

	// Loading again starts from the defaults as added, not from the last
	// load, and shares no slice with the caller.
	h.AllowedOrigins[0] = "changed"
	if err := l.Load("", nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*h, defaultHTTP()) || !reflect.DeepEqual(*cfg, DefaultBase("v1")) {
		t.Errorf("second load: %+v, %+v", *h, *cfg)
	}
}

func TestLoaderSectionInvalid(t *testing.T) {
	const (
		httpKeys   = "addr, allowedOrigins, maxBodyBytes, retries, auth, token, tokenEnvVar, enabled, tls"
		allowedMax = "an integer >= 1 and <= 1048576"
	)
	for _, tc := range []struct {
		name string
		file string
		env  []string
		want Error
	}{
		{"unknown key in the section", `{"transport":{"http":{"adr":"x"}}}`, nil, Error{Key: "transport.http.adr", Value: `"x"`,
			Source: "file", Reason: "unknown key", Allowed: "one of " + httpKeys + "; did you mean addr?"}},
		{"the shared object lists both sections' keys", `{"transport":{"htp":{}}}`, nil, Error{Key: "transport.htp", Value: "{}",
			Source: "file", Reason: "unknown key", Allowed: "one of maxMessageBytes, maxInFlight, maxOutputBytes, maxBatchResponseBytes, http; did you mean http?"}},
		{"unknown key in a nested object", `{"transport":{"http":{"tls":{"ca":"x"}}}}`, nil, Error{Key: "transport.http.tls.ca", Value: `"x"`,
			Source: "file", Reason: "unknown key", Allowed: "one of certFile, keyFile"}},
		{"unknown variable of the section", "", []string{"MCPRT_TRANSPORT_HTTP_ADR=x"}, unknownVar("MCPRT_TRANSPORT_HTTP_ADR", "x",
			allowedVar+"; did you mean MCPRT_TRANSPORT_HTTP_ADDR?"+renameVar)},
		{"max", `{"transport":{"http":{"maxBodyBytes":1048577}}}`, nil, fileErr("transport.http.maxBodyBytes", "1048577", allowedMax, "must be <= 1048576")},
		{"max from env", "", []string{"MCPRT_TRANSPORT_HTTP_MAX_BODY_BYTES=2000000"}, envErr("transport.http.maxBodyBytes", "2000000", allowedMax, "must be <= 1048576")},
		{"min=0 refuses -1", "", []string{"MCPRT_TRANSPORT_HTTP_RETRIES=-1"}, envErr("transport.http.retries", "-1", "an integer >= 0 and <= 10", "must be >= 0")},
		{"far below", `{"transport":{"http":{"retries":-1e300}}}`, nil, fileErr("transport.http.retries", "-1e300", "an integer >= 0 and <= 10", "too small")},
		{"enum", "", []string{"MCPRT_TRANSPORT_HTTP_AUTH=Token"}, envErr("transport.http.auth", "Token", "one of none, token (case-sensitive)",
			"not one of the allowed values (case-sensitive): did you mean token?")},
		{"nonempty", `{"transport":{"http":{"addr":""}}}`, nil, fileErr("transport.http.addr", `""`, "a non-empty string", "must not be empty")},
		{"secret value is never shown", `{"transport":{"http":{"tls":{"keyFile":5}}}}`, nil, fileErr("transport.http.tls.keyFile", "[REDACTED]",
			"any string (may be empty)", "wrong JSON type: got number, want a string")},
		{"envvar", "", []string{"MCPRT_TRANSPORT_HTTP_TOKEN_ENV_VAR=A-B"}, envErr("transport.http.tokenEnvVar", "A-B",
			"empty, or an environment variable name (ASCII letters, digits and _, not starting with a digit)", "not an environment variable name")},
		{"Validate with a relative Error", `{"transport":{"http":{"tls":{"certFile":"c.pem"}}}}`, nil, Error{Key: "transport.http.tls.certFile",
			Env: "MCPRT_TRANSPORT_HTTP_TLS_CERT_FILE", Value: "c.pem", Source: "file", Allowed: "both certFile and keyFile, or neither",
			Reason: "certFile and keyFile go together"}},
		{"Validate with a plain error", "", []string{"MCPRT_TRANSPORT_HTTP_AUTH=token"}, Error{Key: "transport.http", Value: "(the section)",
			Source: "env", Allowed: "a consistent transport.http section", Reason: "auth token needs token or tokenEnvVar"}},
		{"base rules first", `{"transport":{"maxInFlight":0,"http":{"addr":""}}}`, nil, fileErr("transport.maxInFlight", "0", allowedInt, "must be >= 1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, cfg, h := newTestLoader(t)
			path := ""
			if tc.file != "" {
				path = writeConfig(t, tc.file)
			}
			err := l.Load(path, tc.env)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Load error = %v, want a *Error", err)
			}
			if *ce != tc.want {
				t.Errorf("error\n got %#v\nwant %#v", *ce, tc.want)
			}
			// All or nothing: a failed load changes no section.
			if !reflect.DeepEqual(*h, defaultHTTP()) || !reflect.DeepEqual(*cfg, DefaultBase("v1")) {
				t.Errorf("a failed Load changed the sections: %+v", *h)
			}
		})
	}
}

func TestLoaderLists(t *testing.T) {
	type listSection struct {
		Any  []string `json:"any"`
		Some []string `json:"some" config:"nonempty"`
	}
	for _, tc := range []struct {
		name, file string
		env        []string
		want       listSection
		reason     string
	}{
		{"defaults", "", nil, listSection{Some: []string{"x"}}, ""},
		{"env comma list", "", []string{"MCPRT_S_ANY=a,,b ", "MCPRT_S_SOME= c"}, listSection{Any: []string{"a", "b"}, Some: []string{"c"}}, ""},
		{"empty env list", "", []string{"MCPRT_S_ANY="}, listSection{Any: []string{}, Some: []string{"x"}}, ""},
		{"file", `{"s":{"any":[],"some":["y","z"]}}`, nil, listSection{Any: []string{}, Some: []string{"y", "z"}}, ""},
		{"nonempty from env", "", []string{"MCPRT_S_SOME=,"}, listSection{}, "must not be empty"},
		{"nonempty from file", `{"s":{"some":[]}}`, nil, listSection{}, "must not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := listSection{Some: []string{"x"}}
			l := newLoader()
			if err := l.Add("s", &s); err != nil {
				t.Fatal(err)
			}
			path := ""
			if tc.file != "" {
				path = writeConfig(t, tc.file)
			}
			err := l.Load(path, tc.env)
			var ce *Error
			switch {
			case tc.reason == "" && err != nil:
				t.Fatal(err)
			case tc.reason != "" && (!errors.As(err, &ce) || ce.Reason != tc.reason || !strings.Contains(ce.Allowed, "at least one")):
				t.Fatalf("error %v, want reason %q", err, tc.reason)
			case tc.reason == "" && !reflect.DeepEqual(s, tc.want):
				t.Errorf("got %#v, want %#v", s, tc.want)
			}
		})
	}
}

func TestLoaderKeys(t *testing.T) {
	l, _, _ := newTestLoader(t)
	keys := l.Keys()
	base := baseKeys()
	if len(keys) != len(base)+10 {
		t.Fatalf("%d keys, want %d", len(keys), len(base)+10)
	}
	for i, k := range base {
		if k.Path == "server.version" {
			k.Default = "v1"
		}
		if keys[i] != k {
			t.Errorf("key %d = %+v, want %+v", i, keys[i], k)
		}
	}
	want := []Key{
		{"transport.http.addr", "MCPRT_TRANSPORT_HTTP_ADDR", "127.0.0.1:8080", "a non-empty string", "Listen address."},
		{"transport.http.allowedOrigins", "MCPRT_TRANSPORT_HTTP_ALLOWED_ORIGINS", "http://localhost",
			"a list of non-empty strings (file: JSON array; env: comma-separated)", "Origins allowed to connect."},
		{"transport.http.maxBodyBytes", "MCPRT_TRANSPORT_HTTP_MAX_BODY_BYTES", "1024", "an integer >= 1 and <= 1048576", "Largest request body."},
		{"transport.http.retries", "MCPRT_TRANSPORT_HTTP_RETRIES", "0", "an integer >= 0 and <= 10", "Retries; 0 means none."},
		{"transport.http.auth", "MCPRT_TRANSPORT_HTTP_AUTH", "none", "one of none, token (case-sensitive)", "Authentication."},
		{"transport.http.token", "MCPRT_TRANSPORT_HTTP_TOKEN", "", "any string (may be empty)", "The token itself."},
		{"transport.http.tokenEnvVar", "MCPRT_TRANSPORT_HTTP_TOKEN_ENV_VAR", "",
			"empty, or an environment variable name (ASCII letters, digits and _, not starting with a digit)", "Variable holding the token."},
		{"transport.http.enabled", "MCPRT_TRANSPORT_HTTP_ENABLED", "false", "true or false (env: true, false, 1 or 0)", "Serve HTTP."},
		{"transport.http.tls.certFile", "MCPRT_TRANSPORT_HTTP_TLS_CERT_FILE", "", "any string (may be empty)", "Certificate file."},
		{"transport.http.tls.keyFile", "MCPRT_TRANSPORT_HTTP_TLS_KEY_FILE", "", "any string (may be empty)", "Key file."},
	}
	if got := keys[len(base):]; !slices.Equal(got, want) {
		t.Errorf("section keys\n%+v\nwant\n%+v", got, want)
	}
	// A secret default is never shown.
	s := struct {
		Token string `json:"token" config:"secret"`
	}{Token: "s3cret"}
	l = newLoader()
	if err := l.Add("a", &s); err != nil {
		t.Fatal(err)
	}
	if d := l.Keys()[0].Default; d != core.RedactedValue {
		t.Errorf("secret default shown as %q", d)
	}
}

func TestLoaderAddRefuses(t *testing.T) {
	type (
		badType struct {
			F float64 `json:"f"`
		}
		noTag struct {
			F int
		}
		badName struct {
			F int `json:"max_bytes"`
		}
		unknownRule struct {
			F int `json:"f" config:"positive"`
		}
		ruleForType struct {
			F int `json:"f" config:"enum=a|b"`
		}
		minAboveMax struct {
			F int `json:"f" config:"min=5,max=4"`
		}
		badMin struct {
			F int `json:"f" config:"min=x"`
		}
		emptyEnum struct {
			F string `json:"f" config:"enum=a||b"`
		}
		ruleValue struct {
			F string `json:"f" config:"nonempty=1"`
		}
		nestedTag struct {
			F struct {
				G int `json:"g"`
			} `json:"f" config:"secret"`
		}
		empty    struct{}
		embedded struct {
			noTag
		}
		maxInFlight struct {
			MaxInFlight int `json:"maxInFlight"`
		}
		server struct {
			Server string `json:"server"`
		}
		configKey struct {
			Config string `json:"config"`
		}
		twoKeys struct {
			BC int `json:"bC"`
			B  struct {
				C int `json:"c"`
			} `json:"b"`
		}
		good struct {
			G int `json:"g"`
		}
	)
	n := 5
	for _, tc := range []struct {
		name    string
		path    string
		section any
		want    string
	}{
		{"not a pointer", "a", good{}, "not a non-nil pointer to a struct"},
		{"nil pointer", "a", (*good)(nil), "not a non-nil pointer to a struct"},
		{"pointer to an int", "a", &n, "not a non-nil pointer to a struct"},
		{"bad path", "a..b", &good{}, "not a key path"},
		{"path with an underscore", "a_b", &good{}, "not a key path"},
		{"unsupported type", "a", &badType{}, "type float64 is not supported"},
		{"no json tag", "a", &noTag{}, "needs a json tag"},
		{"bad key name", "a", &badName{}, `key "max_bytes" is not`},
		{"unknown rule", "a", &unknownRule{}, `unknown rule "positive"`},
		{"rule for another type", "a", &ruleForType{}, "rule enum does not apply"},
		{"min above max", "a", &minAboveMax{}, "min 5 > max 4"},
		{"bad min", "a", &badMin{}, "min=x is not an integer"},
		{"rule that takes no value", "a", &ruleValue{}, "nonempty takes no value"},
		{"empty enum value", "a", &emptyEnum{}, "enum=a||b has an empty value"},
		{"tag on a nested object", "a", &nestedTag{}, "a nested section takes no config tag"},
		{"no keys", "a", &empty{}, "has no keys"},
		{"embedded field", "a", &embedded{}, "embedded fields are not supported"},
		{"key taken by the base", "transport", &maxInFlight{}, "key transport.maxInFlight is already defined"},
		{"key inside a key", "server.name", &good{}, "key server.name.g is inside server.name, which is a key"},
		{"key that is an object", "", &server{}, "key server is already an object"},
		{"the configuration file's variable", "", &configKey{}, "share the variable MCPRT_CONFIG"},
		{"two keys, one variable", "a", &twoKeys{}, "key a.b.c and a.bC share the variable MCPRT_A_B_C"},
		{"a key, a section key, one variable", "server", &struct {
			N int `json:"Name"`
		}{}, "share the variable MCPRT_SERVER_NAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultBase("v1")
			l := newBaseLoader(&cfg)
			before := l.Keys()
			err := l.Add(tc.path, tc.section)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Add error = %v, want it to contain %q", err, tc.want)
			}
			// A refused section adds nothing.
			if !slices.Equal(l.Keys(), before) {
				t.Error("a refused Add changed the keys")
			}
			if err := l.Load(writeConfig(t, `{"a":{"g":1}}`), nil); err == nil || !strings.Contains(err.Error(), "unknown key") {
				t.Errorf("after a refused Add, a key of it loads: %v", err)
			}
			if err := l.Add("a", &good{}); err != nil {
				t.Errorf("a good section after a refused one: %v", err)
			}
		})
	}
}

// rootTestSection is a section at the top level with a Validate method.
type rootTestSection struct {
	Low  int `json:"low" config:"min=0"`
	High int `json:"high" config:"min=0"`
}

func (r *rootTestSection) Validate() error {
	if r.Low > r.High {
		return errors.New("low above high")
	}
	return nil
}

func TestLoaderValidateAtTheTopLevel(t *testing.T) {
	s := rootTestSection{High: 5}
	l := newLoader()
	if err := l.Add("", &s); err != nil {
		t.Fatal(err)
	}
	err := l.Load(writeConfig(t, `{"low":6}`), nil)
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Load error = %v", err)
	}
	want := Error{Key: "(top level)", Value: "(the section)", Allowed: "a consistent configuration", Source: "file", Reason: "low above high"}
	if *ce != want {
		t.Errorf("error\n got %#v\nwant %#v", *ce, want)
	}
	if err := l.Load("", []string{"MCPRT_LOW=5"}); err != nil || s.Low != 5 {
		t.Errorf("Load = %v, low %d", err, s.Low)
	}
}
