package core

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// repeatStep logs one record after moving the clock.
type repeatStep struct {
	advance time.Duration
	level   slog.Level
	msg     string
}

// loggedLines decodes JSON lines into "msg" or "msg suppressed=N" strings.
func loggedLines(t *testing.T, out string) []string {
	t.Helper()
	var lines []string
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("bad line %q: %v", line, err)
		}
		s := rec["msg"].(string)
		if n, ok := rec[SuppressedKey]; ok {
			s += fmt.Sprintf(" suppressed=%v", n)
		}
		lines = append(lines, s)
	}
	return lines
}

func TestLimitRepeats(t *testing.T) {
	warn := func(msg string) repeatStep { return repeatStep{level: slog.LevelWarn, msg: msg} }
	after := func(d time.Duration, s repeatStep) repeatStep { s.advance = d; return s }
	for _, tc := range []struct {
		name  string
		burst int
		steps []repeatStep
		want  []string
	}{
		{"burst passes, rest suppressed", 2,
			[]repeatStep{warn("a"), warn("a"), warn("a"), warn("a")},
			[]string{"a", "a"}},
		{"count reported in the next window", 2,
			[]repeatStep{warn("a"), warn("a"), warn("a"), warn("a"), warn("a"), after(time.Second, warn("a")), warn("a"), warn("a")},
			[]string{"a", "a", "a suppressed=3", "a"}},
		{"window not yet over", 1,
			[]repeatStep{warn("a"), after(999*time.Millisecond, warn("a")), after(time.Millisecond, warn("a"))},
			[]string{"a", "a suppressed=1"}},
		{"messages limited separately", 1,
			[]repeatStep{warn("a"), warn("b"), warn("a"), warn("b"), warn("c")},
			[]string{"a", "b", "c"}},
		{"below WARN never limited", 1,
			[]repeatStep{{level: slog.LevelInfo, msg: "i"}, {level: slog.LevelInfo, msg: "i"}, {level: slog.LevelDebug, msg: "i"}},
			[]string{"i", "i", "i"}},
		{"ERROR limited too, shares the message's limit", 1,
			[]repeatStep{{level: slog.LevelError, msg: "e"}, warn("e"), {level: slog.LevelError, msg: "e"}, after(time.Hour, warn("e"))},
			[]string{"e", "e suppressed=2"}},
		{"burst < 1 counts as 1", 0,
			[]repeatStep{warn("a"), warn("a")},
			[]string{"a"}},
		{"clock going back starts a new window", 1,
			[]repeatStep{warn("a"), warn("a"), after(-time.Minute, warn("a"))},
			[]string{"a", "a suppressed=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			clock := NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
			log := slog.New(LimitRepeats(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}), clock, tc.burst, time.Second))
			for _, s := range tc.steps {
				clock.Advance(s.advance)
				log.Log(context.Background(), s.level, s.msg)
			}
			if got := loggedLines(t, buf.String()); !slices.Equal(got, tc.want) {
				t.Errorf("logged %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLimitRepeatsDerivedHandlersShareLimits(t *testing.T) {
	var buf bytes.Buffer
	clock := NewManualClock(time.Time{})
	base := slog.New(LimitRepeats(slog.NewJSONHandler(&buf, nil), clock, 1, time.Minute))
	a := base.With("conn", "a")
	b := base.WithGroup("g").With("conn", "b")
	a.Warn("unmatched response")
	b.Warn("unmatched response")
	a.Warn("unmatched response")
	clock.Advance(time.Minute)
	b.Warn("unmatched response", "id", 7)
	want := `{"g":{"conn":"b","id":7,"suppressed":2},"msg":"unmatched response"}` // keys sorted by json.Marshal
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines:\n%s", len(lines), buf.String())
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &got); err != nil {
		t.Fatal(err)
	}
	delete(got, "time")
	delete(got, "level")
	gotJSON, _ := json.Marshal(got)
	if string(gotJSON) != want {
		t.Errorf("second line %s, want %s", gotJSON, want)
	}
}

func TestLimitRepeatsBoundedMemory(t *testing.T) {
	var buf bytes.Buffer
	clock := NewManualClock(time.Time{})
	h := LimitRepeats(slog.NewJSONHandler(&buf, nil), clock, 1, time.Minute)
	log := slog.New(h)
	for i := range MaxRepeatMessages + 100 {
		log.Warn(fmt.Sprintf("m%d", i))
	}
	lim := h.(*repeatHandler).lim
	if n := len(lim.entries); n != MaxRepeatMessages {
		t.Fatalf("tracking %d messages, want %d", n, MaxRepeatMessages)
	}
	// The first untracked message passed; the other 99 shared its limit.
	if got := len(loggedLines(t, buf.String())); got != MaxRepeatMessages+1 {
		t.Errorf("%d lines passed, want %d", got, MaxRepeatMessages+1)
	}
	// Once the windows end, quiet messages are forgotten to make room.
	buf.Reset()
	clock.Advance(time.Minute)
	log.Warn("new")
	if got := loggedLines(t, buf.String()); !slices.Equal(got, []string{"new"}) {
		t.Errorf("after the windows ended: %q", got)
	}
	if _, ok := lim.entries["new"]; !ok || len(lim.entries) > MaxRepeatMessages {
		t.Errorf("new message not tracked (%d tracked)", len(lim.entries))
	}
}

func TestLimitRepeatsConcurrent(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	out := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	clock := NewManualClock(time.Time{})
	log := slog.New(LimitRepeats(slog.NewJSONHandler(out, nil), clock, 5, time.Minute))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				log.Warn("flood")
			}
		})
	}
	wg.Wait()
	clock.Advance(time.Minute)
	log.Warn("flood")
	got := loggedLines(t, buf.String())
	want := []string{"flood", "flood", "flood", "flood", "flood", "flood suppressed=795"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLimitRepeatsDisabled(t *testing.T) {
	inner := slog.NewJSONHandler(&bytes.Buffer{}, nil)
	if h := LimitRepeats(inner, nil, 1, 0); h != inner {
		t.Error("window 0 did not return the handler itself")
	}
}

// writerFunc adapts a function to io.Writer.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
