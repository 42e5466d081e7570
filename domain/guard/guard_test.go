package guard

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/session"
)

func wantCode(t *testing.T, err error, code core.Code) *core.Error {
	t.Helper()
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
	return ce
}

func TestNormalizePath(t *testing.T) {
	cases := []struct{ in, want string }{
		{"src/main.go", "src/main.go"},
		{"./src//main.go", "src/main.go"},
		{"a/../secret", "secret"},
		{"a/b/../../c", "c"},
		{`a\..\secret.pem`, "secret.pem"},
		{"docs/cafe\u0301.md", "docs/caf\u00e9.md"}, // NFD → NFC
		{"a/．．/b", "a/．．/b"},                        // fullwidth dots are a name, not ".."
		{"dir/", "dir"},
		{"..hidden/x", "..hidden/x"},
		{"", ""},
		{"/etc/passwd", ""},
		{`\etc\passwd`, ""},
		{"C:/x", ""},
		{`c:\x`, ""},
		{"..", ""},
		{"../x", ""},
		{"a/../../x", ""},
		{"a/../..", ""},
		{".", ""},
		{"a/..", ""},
		{"a\x00b", ""},
		{"a\nb", ""},
		{"a\u0085b", ""}, // C1 control
		{"a\xffb", ""},
		{strings.Repeat("a", MaxPathBytes+1), ""},
	}
	for _, c := range cases {
		got, err := NormalizePath(c.in)
		if c.want == "" {
			if err == nil {
				t.Errorf("NormalizePath(%q) = %q, want an error", c.in, got)
			} else {
				wantCode(t, err, core.CodeInvalidArgument)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("NormalizePath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestNormalizePattern(t *testing.T) {
	good := []string{"**", "src/**/*.go", "**/*.{md,txt}", "[a-z]*/x", "docs/cafe\u0301/**", `\*.md`}
	for _, p := range good {
		if _, err := NormalizePattern(p); err != nil {
			t.Errorf("NormalizePattern(%q): %v", p, err)
		}
	}
	bad := []string{"", "[a-", "{a,b", "/abs/**", "a/../b", "./x", "a//b", "x\x00", "a\xff"}
	for _, p := range bad {
		_, err := NormalizePattern(p)
		wantCode(t, err, CodeInvalidPathPattern)
	}
}

func policy(allowed, forbidden []string, limit int) Policy {
	p, err := Policy{ID: "p", AllowedPaths: allowed, ForbiddenPaths: forbidden,
		Gates: []string{GatePathViolation, GateChangeRadius}, ChangeRadiusLimit: limit}.normalize()
	if err != nil {
		panic(err)
	}
	return p
}

// violations returns "type:path" of every violation, in order.
func violations(r Result) string {
	var s []string
	for _, g := range r.Gates {
		for _, v := range g.Violations {
			s = append(s, v.Type+":"+v.Path)
		}
	}
	return strings.Join(s, " ")
}

func TestCheck(t *testing.T) {
	src := policy([]string{"src/**", "docs/caf\u00e9/**"}, []string{"**/*.pem", "src/secret/**", ".git/**"}, 3)
	cases := []struct {
		name  string
		p     Policy
		paths []string
		want  string
	}{
		{"allowed", src, []string{"src/a.go", "src/b/c.go"}, ""},
		{"not allowed", src, []string{"README.md"}, "path_not_allowed:README.md"},
		{"forbidden wins over allowed", src, []string{"src/secret/k.txt"}, "path_forbidden:src/secret/k.txt"},
		{"both at once", src, []string{"key.pem"}, "path_not_allowed:key.pem path_forbidden:key.pem"},
		{"traversal cleaned then judged", src, []string{"src/../key.pem"}, "path_not_allowed:key.pem path_forbidden:key.pem"},
		{"traversal into forbidden", src, []string{"src/x/../secret/a"}, "path_forbidden:src/secret/a"},
		{"backslash traversal", src, []string{`src\..\.git\config`}, "path_not_allowed:.git/config path_forbidden:.git/config"},
		{"unicode NFD path matches NFC glob", src, []string{"docs/cafe\u0301/menu.md"}, ""},
		{"duplicates count once", src, []string{"src/a.go", "./src/a.go", "src//a.go", "src/b.go", "src/c.go"}, ""},
		{"radius exceeded", src, []string{"src/1", "src/2", "src/3", "src/4"}, "change_radius_exceeded:"},
		{"every violation reported", src, []string{"a", "b.pem", "src/1", "src/2"},
			"path_not_allowed:a path_not_allowed:b.pem path_forbidden:b.pem change_radius_exceeded:"},
		{"empty allow list allows all", policy(nil, []string{"x/**"}, 10), []string{"anything/at/all", "x/y"}, "path_forbidden:x/y"},
		{"star stays in a segment", policy([]string{"src/*.go"}, nil, 10), []string{"src/a.go", "src/sub/b.go"}, "path_not_allowed:src/sub/b.go"},
		{"dotfiles match **", policy(nil, []string{"**/.env"}, 10), []string{".env", "a/b/.env"}, "path_forbidden:.env path_forbidden:a/b/.env"},
		{"no paths", src, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Check(c.p, c.paths)
			if err != nil {
				t.Fatal(err)
			}
			if got := violations(r); got != c.want {
				t.Fatalf("violations %q, want %q", got, c.want)
			}
			if r.Passed != (c.want == "") || r.Summary == "" || len(r.Gates) != 2 {
				t.Fatalf("result %+v", r)
			}
		})
	}
	_, err := Check(src, []string{"ok.go", "/abs", "../up", "fine"})
	ce := wantCode(t, err, core.CodeInvalidArgument)
	if bads, ok := ce.Details["invalidPaths"]; !ok || !strings.Contains(ce.Message, "2 of 4") {
		t.Fatalf("error %+v %v: want both bad paths listed", ce, bads)
	}
	_, err = Check(src, make([]string, MaxChangedPaths+1))
	wantCode(t, err, core.CodeInvalidArgument)
}

func writePolicy(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadDir(t *testing.T) {
	if ps, err := LoadDir(filepath.Join(t.TempDir(), "missing")); err != nil || len(ps) != 0 {
		t.Fatalf("missing dir: %v %v", ps, err)
	}
	cases := []struct {
		name, body string
		code       core.Code
	}{
		{"bad glob", `{"policyId":"x","allowedPaths":["src/[a-"],"gates":["path_violation"]}`, CodeInvalidPathPattern},
		{"absolute glob", `{"policyId":"x","forbiddenPaths":["/etc/**"],"gates":["path_violation"]}`, CodeInvalidPathPattern},
		{"unknown member", `{"policyId":"x","gates":["path_violation"],"colour":"red"}`, core.CodeInvalidArgument},
		{"unknown gate", `{"policyId":"x","gates":["dependency"]}`, core.CodeInvalidArgument},
		{"no gates", `{"policyId":"x"}`, core.CodeInvalidArgument},
		{"radius gate without limit", `{"policyId":"x","gates":["change_radius"]}`, core.CodeInvalidArgument},
		{"bad id", `{"policyId":"a b","gates":["path_violation"]}`, core.CodeInvalidArgument},
		{"not JSON", `{`, core.CodeInvalidArgument},
		{"two values", `{"policyId":"x","gates":["path_violation"]} {}`, core.CodeInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writePolicy(t, dir, "p.json", c.body)
			_, err := LoadDir(dir)
			ce := wantCode(t, err, c.code)
			if !strings.Contains(ce.Message, "p.json") {
				t.Fatalf("message %q does not name the file", ce.Message)
			}
		})
	}
	dir := t.TempDir()
	writePolicy(t, dir, "a.json", `{"policyId":"same","gates":["path_violation"]}`)
	writePolicy(t, dir, "b.json", `{"policyId":"same","gates":["path_violation"]}`)
	_, err := LoadDir(dir)
	wantCode(t, err, core.CodeInvalidArgument)
}

func TestService(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	writePolicy(t, dir, "go.json", `{"policyId":"go-only","description":"Go sources","allowedPaths":["**/*.go"],
		"forbiddenPaths":["vendor/**"],"gates":["path_violation","change_radius"],"changeRadiusLimit":5}`)
	writePolicy(t, dir, "default.json", `{"policyId":"default","allowedPaths":["**"],"gates":["path_violation"]}`)
	sessions := session.NewService(session.NewMemStore(), nil, nil)
	svc, err := NewService(dir, sessions)
	if err != nil {
		t.Fatal(err)
	}
	ps, total, err := svc.List(ctx, 0)
	if err != nil || total != 3 || ps[0].ID != "default" || ps[1].ID != "docs-only" || ps[2].ID != "go-only" {
		t.Fatalf("List = %+v %d %v", ps, total, err)
	}
	if ps[0].Source != filepath.Join(dir, "default.json") {
		t.Fatalf("the file must replace the built-in default: %+v", ps[0])
	}
	if ps, _, _ := svc.List(ctx, 1); len(ps) != 1 {
		t.Fatalf("limit 1: %d", len(ps))
	}
	_, _, err = svc.List(ctx, -1)
	wantCode(t, err, core.CodeInvalidArgument)

	r, err := svc.Check(ctx, "go-only", []string{"main.go", "vendor/x.go", "notes.txt"}, "")
	if err != nil || r.Passed || violations(r) != "path_not_allowed:notes.txt path_forbidden:vendor/x.go" {
		t.Fatalf("Check = %+v %v", r, err)
	}
	_, err = svc.Check(ctx, "nope", []string{"a"}, "")
	wantCode(t, err, CodePolicyNotFound)
	_, err = svc.Check(ctx, "go-only", []string{"a.go"}, "no-such-session")
	wantCode(t, err, session.CodeNotFound)

	s, err := sessions.Create(ctx, session.CreateRequest{Initiator: "a", Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Check(ctx, "go-only", []string{"a.go"}, s.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := svc.Apply(ctx, s.ID, "go-only"); err != nil || len(got.Policies) != 1 {
		t.Fatalf("Apply = %+v %v", got, err)
	}
	_, err = svc.Apply(ctx, s.ID, "go-only")
	wantCode(t, err, CodePolicyAlreadyApplied)
	_, err = svc.Apply(ctx, s.ID, "nope")
	wantCode(t, err, CodePolicyNotFound)
	_, err = svc.Apply(ctx, "no-such-session", "go-only")
	wantCode(t, err, session.CodeNotFound)
	sessions.Complete(ctx, s.ID, "")
	_, err = svc.Apply(ctx, s.ID, "default")
	wantCode(t, err, session.CodeAlreadyCompleted)

	err = svc.Add(Policy{ID: "bad", AllowedPaths: []string{"{"}, Gates: []string{GatePathViolation}})
	wantCode(t, err, CodeInvalidPathPattern)
	if err := svc.Add(Policy{ID: "api", Gates: []string{GatePathViolation}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Policy("api"); err != nil {
		t.Fatal(err)
	}

	// A bad file on Reload keeps the policies that were loaded.
	writePolicy(t, dir, "zz.json", `{"policyId":"zz","allowedPaths":["[x"],"gates":["path_violation"]}`)
	wantCode(t, svc.Reload(), CodeInvalidPathPattern)
	if _, err := svc.Policy("go-only"); err != nil {
		t.Fatal(err)
	}
	_, err = NewService(dir, nil)
	wantCode(t, err, CodeInvalidPathPattern)
}

func TestBuiltinPoliciesAreValid(t *testing.T) {
	svc, err := NewService("", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := svc.Check(context.Background(), "default", []string{"src/a.go", ".env", "deploy/tls/server.pem", ".git/HEAD"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if violations(r) != "path_forbidden:.env path_forbidden:.git/HEAD path_forbidden:deploy/tls/server.pem" {
		t.Fatalf("default policy: %s", violations(r))
	}
	_, err = svc.Apply(context.Background(), "s", "default")
	wantCode(t, err, core.CodeNotImplemented)
}
