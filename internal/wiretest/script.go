package wiretest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Run plays script (see the package documentation) against p. A line that
// fails names its line number in the script.
func Run(t testing.TB, p *Proc, script string) {
	t.Helper()
	for i, raw := range strings.Split(script, "\n") {
		n := i + 1
		line := strings.TrimRight(raw, "\r")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "", strings.HasPrefix(trimmed, "#"), strings.HasPrefix(trimmed, "env "):
		case strings.HasPrefix(line, "> "):
			p.Send(line[2:])
		case strings.HasPrefix(line, "< "):
			got := p.Expect(t)
			if err := Match(line[2:], got); err != nil {
				t.Fatalf("script line %d: %v\n  want %s\n  got  %s", n, err, line[2:], clip(got))
			}
		case strings.HasPrefix(trimmed, "silence "):
			d, err := time.ParseDuration(strings.TrimSpace(trimmed[len("silence "):]))
			if err != nil {
				t.Fatalf("script line %d: %v", n, err)
			}
			p.ExpectSilence(t, d)
		case trimmed == "close":
			p.CloseStdin()
		case strings.HasPrefix(trimmed, "exit "):
			want, err := strconv.Atoi(strings.TrimSpace(trimmed[len("exit "):]))
			if err != nil {
				t.Fatalf("script line %d: %v", n, err)
			}
			if got := p.Wait(t); got != want {
				t.Fatalf("script line %d: exit code %d, want %d", n, got, want)
			}
		default:
			t.Fatalf("script line %d: unknown directive %q", n, line)
		}
	}
}

// ScriptEnv returns the "env K=V" entries of script, in order.
func ScriptEnv(script string) []string {
	var env []string
	for line := range strings.SplitSeq(script, "\n") {
		line = strings.TrimSpace(line)
		if kv, ok := strings.CutPrefix(line, "env "); ok {
			env = append(env, strings.TrimSpace(kv))
		}
	}
	return env
}

// Match reports how the JSON text got differs from the expectation want (see
// the package documentation for the rules), or nil when it matches.
func Match(want, got string) error {
	w, err := decode([]byte(want))
	if err != nil {
		return fmt.Errorf("the expectation is not valid JSON: %v", err)
	}
	g, err := decode([]byte(got))
	if err != nil {
		return fmt.Errorf("the actual value is not valid JSON: %v", err)
	}
	return match("$", w, g)
}

func match(path string, want, got any) error {
	if s, ok := want.(string); ok && s == "*" {
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %s", path, show(got))
		}
		extra := w["..."] == true
		for _, k := range sortedKeys(w) {
			if k == "..." && extra {
				continue
			}
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s: missing member %q", path, k)
			}
			if err := match(path+"."+k, w[k], gv); err != nil {
				return err
			}
		}
		if !extra {
			for _, k := range sortedKeys(g) {
				if _, ok := w[k]; !ok {
					return fmt.Errorf("%s: unexpected member %q (add \"...\": true to allow extra members)", path, k)
				}
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array, got %s", path, show(got))
		}
		if len(g) != len(w) {
			return fmt.Errorf("%s: want %d elements, got %d", path, len(w), len(g))
		}
		for i := range w {
			if err := match(path+"["+strconv.Itoa(i)+"]", w[i], g[i]); err != nil {
				return err
			}
		}
		return nil
	case json.Number:
		if g, ok := got.(json.Number); !ok || g != w {
			return fmt.Errorf("%s: want %s, got %s", path, w, show(got))
		}
		return nil
	default: // string, bool, nil
		if want != got {
			return fmt.Errorf("%s: want %s, got %s", path, show(want), show(got))
		}
		return nil
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func show(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return clip(strings.TrimSpace(b.String()))
}
