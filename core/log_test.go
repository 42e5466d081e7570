package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// secretMark is in every secret value the tests log; it must never show.
const secretMark = "!SECRET!"

// decodeLines decodes each JSON line of out.
func decodeLines(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("log line is not a JSON object: %v\n%s", err, line)
		}
		lines = append(lines, m)
	}
	return lines
}

// checkClean walks a decoded JSON value and reports any control character
// in a key or string, any secretMark, and any value of a redacted key that
// is not RedactedValue.
func checkClean(t *testing.T, r *Redactor, v any, path string) {
	t.Helper()
	checkString := func(s, where string) {
		if hasControl(s) {
			t.Errorf("%s: control character in %q", where, s)
		}
		if strings.Contains(s, secretMark) {
			t.Errorf("%s: secret leaked in %q", where, s)
		}
	}
	switch x := v.(type) {
	case string:
		checkString(x, path)
	case []any:
		for i, e := range x {
			checkClean(t, r, e, path+"["+string(rune('0'+i%10))+"]")
		}
	case map[string]any:
		for k, e := range x {
			checkString(k, path+" key")
			if r.IsRedacted(k) && e != RedactedValue {
				t.Errorf("%s.%s = %#v, want %q", path, k, e, RedactedValue)
			}
			checkClean(t, r, e, path+"."+k)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// logLine runs log against a fresh logger with the default keys and
// returns the one decoded line it wrote.
func logLine(t *testing.T, log func(l *slog.Logger)) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	log(NewLogger(&buf, LogOptions{RedactKeys: testRedactKeys}))
	lines := decodeLines(t, buf.Bytes())
	if len(lines) != 1 {
		t.Fatalf("got %d log lines, want 1:\n%s", len(lines), buf.Bytes())
	}
	checkClean(t, NewRedactor(testRedactKeys), lines[0], "line")
	return lines[0]
}

type testValuer struct{}

func (testValuer) LogValue() slog.Value {
	return slog.GroupValue(slog.String("token", secretMark), slog.String("user", "u\n"))
}

func TestLoggerRedaction(t *testing.T) {
	tests := []struct {
		name string
		log  func(l *slog.Logger)
		want map[string]any // expected fields besides time, level, msg
	}{
		{"top level", func(l *slog.Logger) {
			l.Info("m", "token", secretMark, "Authorization", secretMark, "monkey", "ok", "n", 3)
		}, map[string]any{"token": RedactedValue, "Authorization": RedactedValue, "monkey": "ok", "n": json.Number("3")}},
		{"redacted key of any kind", func(l *slog.Logger) {
			l.Info("m", slog.Int("apikey", 42), slog.Bool("SECRET", true), slog.Group("password", "a", secretMark))
		}, map[string]any{"apikey": RedactedValue, "SECRET": RedactedValue, "password": RedactedValue}},
		{"group", func(l *slog.Logger) {
			l.Info("m", slog.Group("req", slog.String("cookie", secretMark), slog.Group("h", "Bearer", secretMark, "x", "y\n")))
		}, map[string]any{"req": map[string]any{"cookie": RedactedValue, "h": map[string]any{"Bearer": RedactedValue, "x": `y\u000a`}}}},
		{"WithAttrs", func(l *slog.Logger) {
			l.With("session", secretMark, "conn", "c\r").Info("m", "a", "b")
		}, map[string]any{"session": RedactedValue, "conn": `c\u000d`, "a": "b"}},
		{"WithGroup", func(l *slog.Logger) {
			l.WithGroup("req").With("token", secretMark).WithGroup("inner").Info("m", "key", secretMark, "v", "\x1b")
		}, map[string]any{"req": map[string]any{"token": RedactedValue, "inner": map[string]any{"key": RedactedValue, "v": `\u001b`}}}},
		{"redacted group name", func(l *slog.Logger) {
			l.With("a", 1).WithGroup("Secret").With("x", secretMark).WithGroup("g").Info("m", "y", secretMark)
		}, map[string]any{"a": json.Number("1"), "Secret": RedactedValue}},
		{"redacted group name, record attrs only", func(l *slog.Logger) {
			l.WithGroup("PASSWORD").Info("m", "y", secretMark)
		}, map[string]any{"PASSWORD": RedactedValue}},
		{"redacted group name, empty", func(l *slog.Logger) {
			l.WithGroup("token").Info("m")
		}, map[string]any{}},
		{"any map", func(l *slog.Logger) {
			l.Info("m", "args", map[string]any{"apiKey": secretMark, "list": []any{map[string]any{"Token": secretMark}, "a\tb"}})
		}, map[string]any{"args": map[string]any{"apiKey": RedactedValue, "list": []any{map[string]any{"Token": RedactedValue}, `a\u0009b`}}}},
		{"any struct", func(l *slog.Logger) {
			l.Info("m", "c", testCreds{User: "u", Password: secretMark, APIKey: secretMark, Hidden: secretMark})
		}, map[string]any{"c": map[string]any{"user": "u", "password": RedactedValue, "APIKey": RedactedValue,
			"headers": nil, "count": json.Number("0")}}},
		{"any pointer", func(l *slog.Logger) {
			l.Info("m", "p", &testInner{Secret: secretMark, Note: "n"})
		}, map[string]any{"p": map[string]any{"secret": RedactedValue, "note": "n"}}},
		{"raw message", func(l *slog.Logger) {
			l.Info("m", "args", json.RawMessage(`{"password":"`+secretMark+`","q":"x\ny"}`))
		}, map[string]any{"args": map[string]any{"password": RedactedValue, "q": `x\u000ay`}}},
		{"error", func(l *slog.Logger) {
			l.Error("m", "err", errors.New("bad\nthing"))
		}, map[string]any{"err": `bad\u000athing`}},
		{"nil pointer error", func(l *slog.Logger) {
			l.Error("m", "err", error((*testNilErr)(nil)))
		}, map[string]any{"err": "<nil>"}},
		{"LogValuer", func(l *slog.Logger) {
			l.Info("m", "v", testValuer{})
		}, map[string]any{"v": map[string]any{"token": RedactedValue, "user": `u\u000a`}}},
		{"simple kinds", func(l *slog.Logger) {
			l.Info("m", slog.Duration("d", time.Second), slog.Float64("f", 1.5), slog.Uint64("u", 7), slog.Bool("b", true))
		}, map[string]any{"d": json.Number("1000000000"), "f": json.Number("1.5"), "u": json.Number("7"), "b": true}},
		{"control characters in keys", func(l *slog.Logger) {
			l.WithGroup("g\n").Info("m", "k\x00", "v")
		}, map[string]any{`g\u000a`: map[string]any{`k\u0000`: "v"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := logLine(t, tt.log)
			for _, k := range []string{"time", "level", "msg"} {
				if _, ok := line[k]; !ok {
					t.Errorf("line has no %q: %v", k, line)
				}
				delete(line, k)
			}
			if !reflect.DeepEqual(line, tt.want) {
				t.Errorf("fields = %#v\nwant     %#v", line, tt.want)
			}
		})
	}
}

func TestLoggerMessageSanitized(t *testing.T) {
	for _, msg := range []string{"line1\nline2", "\x1b[2Jclear", "tab\there", "nul\x00"} {
		line := logLine(t, func(l *slog.Logger) { l.Warn(msg) })
		if got, want := line["msg"], Sanitize(msg); got != want {
			t.Errorf("msg = %q, want %q", got, want)
		}
		if line["level"] != "WARN" {
			t.Errorf("level = %v, want WARN", line["level"])
		}
		line = logLine(t, func(l *slog.Logger) { l.WithGroup("token").Warn(msg, "a", 1) })
		if got, want := line["msg"], Sanitize(msg); got != want {
			t.Errorf("msg inside a redacted group = %q, want %q", got, want)
		}
	}
}

func TestLoggerDoesNotModifyValues(t *testing.T) {
	mk := func() (map[string]any, []any, testCreds) {
		return map[string]any{"token": "t", "m": map[string]any{"s": "a\nb"}},
			[]any{"x\n", map[string]any{"password": "p"}},
			testCreds{Password: "p", Headers: map[string]string{"cookie": "c"}}
	}
	m, s, c := mk()
	m0, s0, c0 := mk()
	attrs := []any{"m", m, "s", s, "c", &c, slog.Group("g", "l", s)}
	var buf bytes.Buffer
	l := NewLogger(&buf, LogOptions{RedactKeys: testRedactKeys})
	l.With(attrs...).Info("m", attrs...)
	if !reflect.DeepEqual(m, m0) || !reflect.DeepEqual(s, s0) || !reflect.DeepEqual(c, c0) {
		t.Errorf("logging modified the values: %v %v %v", m, s, c)
	}
}

func TestLoggerLevel(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogger(&buf, LogOptions{})
	l.Debug("hidden")
	l.Info("shown", "token", "x")
	lines := decodeLines(t, buf.Bytes())
	if len(lines) != 1 || lines[0]["msg"] != "shown" || lines[0]["token"] != "x" {
		t.Errorf("zero LogOptions: got %v, want one info line without redaction", lines)
	}
	buf.Reset()
	l = NewLogger(&buf, LogOptions{Level: slog.LevelWarn})
	l.Info("hidden")
	l.Error("shown")
	if lines := decodeLines(t, buf.Bytes()); len(lines) != 1 || lines[0]["level"] != "ERROR" {
		t.Errorf("level warn: got %v, want one error line", lines)
	}
	if l.Enabled(context.Background(), slog.LevelInfo) {
		t.Errorf("level warn logger is enabled for info")
	}
}

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in      string
		want    slog.Level
		wantErr bool
	}{
		{"debug", slog.LevelDebug, false},
		{"info", slog.LevelInfo, false},
		{"warn", slog.LevelWarn, false},
		{"error", slog.LevelError, false},
		{"", 0, true},
		{"INFO", 0, true},
		{"warning", 0, true},
		{"trace", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseLevel(tt.in)
		if tt.wantErr {
			if err == nil {
				t.Errorf("ParseLevel(%q) = %v, want an error", tt.in, got)
			} else if !strings.Contains(err.Error(), "debug, info, warn, error") || !strings.Contains(err.Error(), `"`+tt.in+`"`) {
				t.Errorf("ParseLevel(%q) error %q does not name the value and the allowed values", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestLoggerConcurrent(t *testing.T) {
	var buf lockedBuffer
	l := NewLogger(&buf, LogOptions{RedactKeys: testRedactKeys}).With("token", secretMark)
	done := make(chan struct{})
	for i := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			g := l.WithGroup("g")
			for j := range 50 {
				g.Info("m\n", "i", i, "j", j, "args", map[string]any{"key": secretMark})
			}
		}()
	}
	for range 8 {
		<-done
	}
	lines := decodeLines(t, buf.Bytes())
	if len(lines) != 400 {
		t.Fatalf("got %d lines, want 400", len(lines))
	}
	for _, line := range lines {
		checkClean(t, NewRedactor(testRedactKeys), line, "line")
	}
}

func BenchmarkLoggerInfo(b *testing.B) {
	l := NewLogger(io.Discard, LogOptions{RedactKeys: testRedactKeys})
	b.ReportAllocs()
	for b.Loop() {
		l.Info("tool call completed", "connectionCorrelationId", "9b2f7c1e-0d7a-4c8e-9a3b-5f6e7d8c9b0a",
			"correlationId", "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "runId", "7e8f9a0b-1c2d-4e3f-8a5b-6c7d8e9f0a1b",
			"tool", "noop", "outcome", "success")
	}
}

func BenchmarkLoggerInfoRedacted(b *testing.B) {
	l := NewLogger(io.Discard, LogOptions{RedactKeys: testRedactKeys})
	b.ReportAllocs()
	for b.Loop() {
		l.Info("login\n", "user", "alice", "token", "t0k3n", "ip", "10.0.0.1", "agent", "curl\r\n", "ok", "yes")
	}
}

func BenchmarkLoggerInfoAnyMap(b *testing.B) {
	l := NewLogger(io.Discard, LogOptions{RedactKeys: testRedactKeys})
	args := map[string]any{"query": "select", "limit": 10, "apiKey": "k"}
	b.ReportAllocs()
	for b.Loop() {
		l.Info("call", "args", args)
	}
}

func TestLoggerDeepGroupTruncated(t *testing.T) {
	attr := slog.String("leaf", "x")
	for range MaxRedactDepth + 5 {
		attr = slog.Group("g", attr)
	}
	line := logLine(t, func(l *slog.Logger) { l.Info("m", attr) })
	v := any(line["g"])
	depth := 1
	for {
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		v = m["g"]
		depth++
	}
	if v != TruncatedValue || depth != MaxRedactDepth+1 {
		t.Errorf("deep group ended in %#v at depth %d, want %q at %d", v, depth, TruncatedValue, MaxRedactDepth+1)
	}
}
