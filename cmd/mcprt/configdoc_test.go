package main

// docs/configuration.md lists every key the binary accepts, with its
// environment variable, default and meaning, generated from the loader the
// binary uses. After adding a key, regenerate it:
//
//	go test ./cmd/mcprt -run TestConfigurationDocListsEveryKey -update-config-doc

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/config"
)

var updateConfigDoc = flag.Bool("update-config-doc", false, "rewrite the key table of docs/configuration.md")

const (
	configDoc      = "../../docs/configuration.md"
	configDocBegin = "<!-- keys:begin (generated: go test ./cmd/mcprt -run TestConfigurationDocListsEveryKey -update-config-doc) -->"
	configDocEnd   = "<!-- keys:end -->"
)

// allConfigKeys returns every key of the binary's configuration, as
// config.Load knows them.
func allConfigKeys(t *testing.T) []config.Key {
	t.Helper()
	keys, err := config.Keys("(build version)")
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// keyTable renders the keys as one Markdown table per top-level section.
func keyTable(keys []config.Key) string {
	cell := func(s string) string {
		if s == "" {
			return ""
		}
		return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
	}
	var b strings.Builder
	section := ""
	for _, k := range keys {
		if s, _, _ := strings.Cut(k.Path, "."); s != section {
			section = s
			b.WriteString("\n### " + section + "\n\n| Key | Environment variable | Default | Allowed | Meaning |\n|---|---|---|---|---|\n")
		}
		def := "`" + cell(k.Default) + "`"
		if k.Default == "" {
			def = "(empty)"
		}
		b.WriteString("| `" + k.Path + "` | `" + k.Env + "` | " + def + " | " + cell(k.Allowed) + " | " + cell(k.Meaning) + " |\n")
	}
	return b.String()
}

func TestConfigurationDocListsEveryKey(t *testing.T) {
	raw, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	head, rest, ok1 := strings.Cut(doc, configDocBegin)
	_, tail, ok2 := strings.Cut(rest, configDocEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the markers %q and %q around its key table", configDoc, configDocBegin, configDocEnd)
	}
	keys := allConfigKeys(t)
	want := head + configDocBegin + "\n" + keyTable(keys) + "\n" + configDocEnd + tail
	if *updateConfigDoc {
		if err := os.WriteFile(configDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, k := range keys {
		if !strings.Contains(doc, "| `"+k.Path+"` | `"+k.Env+"` |") {
			t.Errorf("%s does not list %s (%s); regenerate it with -update-config-doc", configDoc, k.Path, k.Env)
		}
	}
	if doc != want {
		t.Errorf("%s's key table is out of date; regenerate it with -update-config-doc", configDoc)
	}
}

// The README and docs name only MCPRT_* variables that exist: a setup
// copied from them never trips the unknown-variable check (exit 78), and
// secrets are named outside the prefix. A line that shows the mistake on
// purpose says so ("exits 78").
func TestDocsNameOnlyKnownVariables(t *testing.T) {
	known := map[string]bool{"MCPRT_CONFIG": true}
	for _, k := range allConfigKeys(t) {
		known[k.Env] = true
	}
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	name := regexp.MustCompile(`\bMCPRT_[A-Z0-9_]*[A-Z0-9]`) // not inside a name like CUSTOM_MCPRT_TAKEN
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(line, "exits 78") || strings.Contains(line, "exit 78") {
				continue
			}
			for _, v := range name.FindAllString(line, -1) {
				if !known[v] && !strings.HasSuffix(v, "_") {
					t.Errorf("%s:%d names %s, which is not a configuration variable: mcprt would exit 78 where it is set", f, i+1, v)
				}
			}
		}
	}
}
