package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
)

const goodProfile = `{"agentId":"reviewer","displayName":"Reviewer","version":"1.0.0","description":"Reviews code",
 "role":"quality","expertise":["go"],"capabilities":["review","lint"],"team":"quality","tags":["x"],"enabled":true,
 "workflow":[{"stepId":"s1","name":"read","type":"prompt"}],
 "orchestration":{"maxDelegationDepth":2,"canReadWorkspaces":["src"],"canWriteToShared":false}}`

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadDirGood(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"b.json":     goodProfile,
		"a.json":     `{"agentId":"alpha","description":"First","enabled":false}`,
		"notes.txt":  "ignored",
		"readme.md":  "# ignored",
		".hidden.js": "{",
	})
	if err := os.Mkdir(filepath.Join(dir, "sub.json"), 0o755); err != nil { // a directory is skipped
		t.Fatal(err)
	}
	ps, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].AgentID != "alpha" || ps[1].AgentID != "reviewer" {
		t.Fatalf("profiles %+v, want alpha and reviewer in order", ps)
	}
	if ps[0].IsEnabled() || !ps[1].IsEnabled() {
		t.Errorf("enabled: alpha %v, reviewer %v; want false, true", ps[0].IsEnabled(), ps[1].IsEnabled())
	}
	if ps[1].DepthLimit(7) != 2 || ps[0].DepthLimit(7) != 7 {
		t.Errorf("depth limits %d %d, want 2 and the default 7", ps[1].DepthLimit(7), ps[0].DepthLimit(7))
	}
	if ps[1].Source != filepath.Join(dir, "b.json") {
		t.Errorf("source %q", ps[1].Source)
	}
	if ps, err := LoadDir(filepath.Join(dir, "missing")); err != nil || ps != nil {
		t.Errorf("a missing directory: %v, %v; want no profiles and no error", ps, err)
	}
}

func TestLoadDirBad(t *testing.T) {
	deep := strings.Repeat("[", 40) + strings.Repeat("]", 40)
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // in the message
	}{
		{"not json", map[string]string{"x.json": `{`}, "not a valid profile"},
		{"unknown field", map[string]string{"x.json": `{"agentId":"a","description":"d","colour":"red"}`}, "colour"},
		{"two values", map[string]string{"x.json": `{"agentId":"a","description":"d"} {}`}, "more than one JSON value"},
		{"no id", map[string]string{"x.json": `{"description":"d"}`}, "agentId"},
		{"bad id", map[string]string{"x.json": `{"agentId":"../etc","description":"d"}`}, "agentId"},
		{"no description", map[string]string{"x.json": `{"agentId":"a"}`}, "description"},
		{"control char", map[string]string{"x.json": `{"agentId":"a","description":"d\u0007"}`}, "control character"},
		{"depth range", map[string]string{"x.json": `{"agentId":"a","description":"d","orchestration":{"maxDelegationDepth":99}}`}, "maxDelegationDepth"},
		{"negative depth", map[string]string{"x.json": `{"agentId":"a","description":"d","orchestration":{"maxDelegationDepth":-1}}`}, "maxDelegationDepth"},
		{"empty step", map[string]string{"x.json": `{"agentId":"a","description":"d","workflow":[{"stepId":"","name":"n","type":"t"}]}`}, "workflow[0].stepId"},
		{"long list", map[string]string{"x.json": `{"agentId":"a","description":"d","tags":[` + strings.Repeat(`"t",`, 70) + `"t"]}`}, "tags"},
		{"deep nesting", map[string]string{"x.json": `{"agentId":"a","description":"d","tags":` + deep + `}`}, "nests"},
		{"duplicate id", map[string]string{"x.json": `{"agentId":"a","description":"d"}`, "y.json": `{"agentId":"a","description":"e"}`}, "already defined"},
		{"too large", map[string]string{"x.json": `{"agentId":"a","description":"` + strings.Repeat("d", MaxProfileBytes) + `"}`}, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadDir(writeFiles(t, tc.files))
			e := core.AsError(err)
			if err == nil || e.Code != core.CodeInvalidArgument || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("LoadDir: %v; want INVALID_ARGUMENT mentioning %q", err, tc.want)
			}
			if !strings.Contains(e.Message, ".json") {
				t.Errorf("message %q does not name the file", e.Message)
			}
		})
	}
}

func TestLoadDirHostileFiles(t *testing.T) {
	t.Run("fifo", func(t *testing.T) {
		dir := t.TempDir()
		if err := mkfifo(filepath.Join(dir, "pipe.json")); err != nil {
			t.Skip("no FIFOs here:", err)
		}
		// Opening a FIFO for reading would block without a writer; the
		// loader must refuse it without reading (so it must not hang).
		if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "regular file") {
			t.Fatalf("LoadDir with a FIFO: %v, want a not-a-regular-file error", err)
		}
	})
	t.Run("symlink to a directory", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Symlink(t.TempDir(), filepath.Join(dir, "d.json")); err != nil {
			t.Skip(err)
		}
		if _, err := LoadDir(dir); err == nil {
			t.Fatal("LoadDir with a symlink to a directory succeeded")
		}
	})
	t.Run("symlink to a profile", func(t *testing.T) {
		src := writeFiles(t, map[string]string{"p.json": goodProfile})
		dir := t.TempDir()
		if err := os.Symlink(filepath.Join(src, "p.json"), filepath.Join(dir, "p.json")); err != nil {
			t.Skip(err)
		}
		if ps, err := LoadDir(dir); err != nil || len(ps) != 1 {
			t.Fatalf("LoadDir through a symlink: %v, %v", ps, err)
		}
	})
	t.Run("not a directory", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"f": "x"})
		if _, err := LoadDir(filepath.Join(dir, "f")); err == nil {
			t.Fatal("LoadDir of a file succeeded")
		}
	})
}
