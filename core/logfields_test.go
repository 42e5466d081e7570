package core

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestLogFieldsMatchesSlog: for a table of records (plain, needing
// escaping, sanitizing or redaction, on loggers with attributes added by
// With), the line LogFields writes itself is byte for byte the line the
// slog handler writes for the same record, and the direct path is taken
// exactly where expected.
func TestLogFieldsMatchesSlog(t *testing.T) {
	at := time.Date(2026, 11, 26, 18, 40, 58, 123456789, time.FixedZone("X", 3600))
	plain := []Field{StringField("correlationId", "c-1"), StringField("runId", "r-1"),
		StringField("tool", "noop"), IntField("durationMs", 0), StringField("outcome", "success"),
		IntField("payloadBytes", 2)}
	for _, tc := range []struct {
		name   string
		redact []string
		with   []any
		level  slog.Level
		msg    string
		fields []Field
		direct bool
	}{
		{name: "completion record", with: []any{"connectionCorrelationId", "conn-1"}, msg: "tool call completed", fields: plain, direct: true},
		{name: "no fields", msg: "m", direct: true},
		{name: "warn", level: slog.LevelWarn, msg: "tool call completed", fields: plain, direct: true},
		{name: "error level", level: slog.LevelError, msg: "x", fields: plain, direct: true},
		{name: "debug level enabled", level: slog.LevelDebug, msg: "x", fields: plain, direct: true},
		{name: "negative and large ints", msg: "m", fields: []Field{IntField("a", -1), IntField("b", 1<<62)}, direct: true},
		{name: "escaping", msg: `a "quoted" <b> & \ back`, fields: []Field{
			StringField("k<&>", `v "q" \ </script>`), StringField("u", "é\u2028\u2029 \x7f"),
			StringField("bad", "\xff\xfe ok")}, direct: true},
		{name: "control characters", msg: "line\nbreak\ttab", fields: []Field{
			StringField("key\r\n", "v\x00\x01\x1f\b\f"), StringField("t", "a\tb")}, direct: true},
		{name: "redacted field", redact: []string{"Tool", "secret"}, msg: "m", fields: append(plain, StringField("SECRET", "s"), IntField("secret", 7)), direct: true},
		{name: "redacted With attr", redact: []string{"token"}, with: []any{"token", "t0p", "user", "u"}, msg: "m", fields: plain, direct: true},
		{name: "With ints and bools", with: []any{"n", 3, "u", uint64(4), "b", true, "s\n", "x\ty"}, msg: "m", fields: plain, direct: true},
		{name: "With twice", with: []any{"a", "1", slog.Int("b", 2)}, msg: "m", fields: plain, direct: true},
		{name: "With a float goes to slog", with: []any{"f", 1.5}, msg: "m", fields: plain},
		{name: "With a group goes to slog", with: []any{slog.Group("g", "a", 1)}, msg: "m", fields: plain},
		{name: "With an any goes to slog", with: []any{"m", map[string]any{"token": 1}}, msg: "m", fields: plain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var viaSlog, direct bytes.Buffer
			opts := LogOptions{Level: slog.LevelDebug, RedactKeys: tc.redact}
			ls, ld := NewLogger(&viaSlog, opts), NewLogger(&direct, opts)
			if len(tc.with) > 0 {
				if tc.name == "With twice" {
					ls, ld = ls.With(tc.with[:2]...).With(tc.with[2:]...), ld.With(tc.with[:2]...).With(tc.with[2:]...)
				} else {
					ls, ld = ls.With(tc.with...), ld.With(tc.with...)
				}
			}
			rec := slog.NewRecord(at, tc.level, tc.msg, 0)
			for _, f := range tc.fields {
				rec.AddAttrs(f.attr())
			}
			if err := ls.Handler().Handle(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			h := ld.Handler().(*redactHandler)
			if h.canDirect != tc.direct {
				t.Fatalf("direct path = %v, want %v", h.canDirect, tc.direct)
			}
			if h.canDirect {
				h.writeFields(at, tc.level, tc.msg, tc.fields)
			} else if err := ld.Handler().Handle(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			if direct.String() != viaSlog.String() {
				t.Fatalf("LogFields wrote\n%s\nslog wrote\n%s", direct.String(), viaSlog.String())
			}
		})
	}
}

// TestLogFieldsSequenceMatchesSlog: records written one after another
// through one handler — keys that repeat, change, move between positions,
// turn redacted; values that repeat, change, need escaping or sanitizing,
// or are too long to keep; more fields than the handler keeps — are each
// byte for byte what the slog handler writes, whatever writeFields kept
// from the records before.
func TestLogFieldsSequenceMatchesSlog(t *testing.T) {
	at := time.Date(2026, 11, 26, 18, 40, 58, 0, time.UTC)
	keys := []string{"correlationId", "runId", "tool", "Token", "k\n", "durationMs", "outcome", "a<b>"}
	vals := []string{"noop", "success", "c-1", "line\nbreak", `q"uote`, "é", strings.Repeat("long ", 20), ""}
	r := rand.New(rand.NewPCG(3, 9))
	opts := LogOptions{Level: slog.LevelDebug, RedactKeys: []string{"token"}}
	var viaSlog, direct bytes.Buffer
	ls := NewLogger(&viaSlog, opts).With("connectionCorrelationId", "conn-1")
	ld := NewLogger(&direct, opts).With("connectionCorrelationId", "conn-1")
	h := ld.Handler().(*redactHandler)
	fields := make([]Field, 0, cachedFields+3)
	for i := range 3000 {
		if i == 0 || r.IntN(3) == 0 { // a new shape; otherwise the last one's keys again
			fields = fields[:0]
			for range r.IntN(cachedFields + 3) {
				fields = append(fields, Field{Key: keys[r.IntN(len(keys))]})
			}
		}
		for j := range fields {
			fields[j].IsInt = r.IntN(4) == 0
			fields[j].Int = r.Int64N(1000) - 500
			fields[j].Str = vals[r.IntN(len(vals))]
		}
		at = at.Add(time.Duration(r.Int64N(int64(300 * time.Millisecond))))
		viaSlog.Reset()
		direct.Reset()
		rec := slog.NewRecord(at, slog.LevelInfo, "tool call completed", 0)
		for _, f := range fields {
			rec.AddAttrs(f.attr())
		}
		if err := ls.Handler().Handle(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		h.writeFields(at, slog.LevelInfo, "tool call completed", fields)
		if direct.String() != viaSlog.String() {
			t.Fatalf("record %d: LogFields wrote\n%s\nslog wrote\n%s", i, direct.String(), viaSlog.String())
		}
	}
}

// TestLogFieldsLevelsAndFallback: LogFields writes nothing below the
// logger's level, and through a logger that is not NewLogger's it writes
// what LogAttrs writes.
func TestLogFieldsLevelsAndFallback(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogger(&buf, LogOptions{Level: slog.LevelWarn})
	LogFields(context.Background(), l, slog.LevelInfo, "hidden", StringField("a", "b"))
	if buf.Len() != 0 {
		t.Fatalf("an info record below level warn was written: %s", buf.String())
	}
	LogFields(context.Background(), l, slog.LevelWarn, "shown", StringField("a", "b"), IntField("n", 1))
	if got := buf.String(); !strings.HasSuffix(got, `"level":"WARN","msg":"shown","a":"b","n":1}`+"\n") || !strings.HasPrefix(got, `{"time":"`) {
		t.Fatalf("LogFields wrote %q", got)
	}

	var text bytes.Buffer
	tl := slog.New(slog.NewTextHandler(&text, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	LogFields(context.Background(), tl, slog.LevelInfo, "m", StringField("a", "b c"), IntField("n", -2))
	if got, want := text.String(), `level=INFO msg=m a="b c" n=-2`+"\n"; got != want {
		t.Fatalf("through a text handler LogFields wrote %q, want %q", got, want)
	}
}

// TestLogFieldsAllocations: the direct path allocates nothing once its
// buffer pool is warm.
func TestLogFieldsAllocations(t *testing.T) {
	l := NewLogger(discard{}, LogOptions{RedactKeys: []string{"token"}}).With("connectionCorrelationId", "c")
	fields := []Field{StringField("correlationId", "c-1"), StringField("tool", "noop"), IntField("durationMs", 0)}
	LogFields(context.Background(), l, slog.LevelInfo, "tool call completed", fields...)
	if n := testing.AllocsPerRun(100, func() {
		LogFields(context.Background(), l, slog.LevelInfo, "tool call completed", fields...)
	}); n > 0 {
		t.Fatalf("LogFields allocated %.1f times per record, want 0", n)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkLogFieldsCompletion is the tools/call completion record as the
// binary writes it: a logger of NewLogger with the connection's
// correlation id added by With, two fresh ids per record and the other
// fields repeating.
func BenchmarkLogFieldsCompletion(b *testing.B) {
	l := NewLogger(discard{}, LogOptions{RedactKeys: []string{"token", "password"}}).With("connectionCorrelationId", "9b2f7c1e-8a4d-4e5f-9c3b-1d2e3f4a5b6c")
	var gen UUIDGenerator
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = gen.NewID()
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		LogFields(context.Background(), l, slog.LevelInfo, "tool call completed",
			StringField("correlationId", ids[i%len(ids)]), StringField("runId", ids[(i+1)%len(ids)]), StringField("tool", "noop"),
			IntField("durationMs", 0), StringField("outcome", "success"), IntField("payloadBytes", 2))
	}
}
