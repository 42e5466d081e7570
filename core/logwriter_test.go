package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingDst records what reaches the destination, one Write at a time.
type recordingDst struct {
	mu      sync.Mutex
	b       bytes.Buffer
	writes  int
	entered chan struct{} // when set, each Write sends here first
	gate    chan struct{} // when set, each Write then waits for a token (or its close)
	fail    int           // the first fail Writes return an error
}

func (l *recordingDst) Write(p []byte) (int, error) {
	if l.entered != nil {
		l.entered <- struct{}{}
	}
	if l.gate != nil {
		<-l.gate
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	if l.fail > 0 {
		l.fail--
		return 0, errors.New("write failed")
	}
	return l.b.Write(p)
}

func (l *recordingDst) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mustNotBlock runs f and fails the test if it has not returned within a
// generous bound (a guard against a hang, not a synchronisation).
func mustNotBlock(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

var summaryTime = time.Date(2025, 6, 1, 12, 0, 0, 500, time.UTC)

func summaryLine(n int) string {
	return fmt.Sprintf(`{"time":"2025-06-01T12:00:00.0000005Z","level":"WARN","msg":"log entries dropped while stderr was not being read","dropped":%d}`+"\n", n)
}

func TestLogWriterKeepsEveryRecordOnClose(t *testing.T) {
	dst := &recordingDst{}
	w := NewLogWriter(dst, LogWriterOptions{FlushInterval: time.Hour})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				fmt.Fprintf(w, "{\"g\":%d,\"i\":%d}\n", g, i)
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(dst.String(), "\n"), "\n")
	if len(lines) != 4000 {
		t.Fatalf("got %d records, want 4000", len(lines))
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if !strings.HasPrefix(l, `{"g":`) || !strings.HasSuffix(l, "}") || seen[l] {
			t.Fatalf("interleaved or duplicated record %q", l)
		}
		seen[l] = true
	}
	if dst.writes > 10 {
		t.Errorf("%d writes for 4000 records: not batched", dst.writes)
	}
	if w.Dropped() != 0 {
		t.Errorf("Dropped() = %d", w.Dropped())
	}
	// After Close, entries are dropped and counted.
	fmt.Fprintln(w, "after")
	if strings.Contains(dst.String(), "after") || w.Dropped() != 1 {
		t.Errorf("write after Close: output %q, Dropped() = %d", dst.String()[len(dst.String())-20:], w.Dropped())
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestLogWriterFlushesOnItsOwn(t *testing.T) {
	dst := &recordingDst{entered: make(chan struct{}, 1)}
	w := NewLogWriter(dst, LogWriterOptions{FlushInterval: time.Millisecond})
	defer w.Close()
	fmt.Fprintln(w, "x")
	mustNotBlock(t, "the interval flush", func() { <-dst.entered })
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := dst.String(); got != "x\n" {
		t.Errorf("got %q", got)
	}
}

func TestLogWriterFlush(t *testing.T) {
	dst := &recordingDst{}
	w := NewLogWriter(dst, LogWriterOptions{FlushInterval: time.Hour})
	defer w.Close()
	if err := w.Flush(context.Background()); err != nil { // nothing buffered
		t.Fatal(err)
	}
	fmt.Fprintln(w, "a")
	fmt.Fprintln(w, "b")
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := dst.String(); got != "a\nb\n" || dst.writes != 1 {
		t.Errorf("got %q in %d writes", got, dst.writes)
	}
}

// A stalled destination: Write never blocks, whole entries beyond the
// bound are dropped and counted, and the first write after the stall
// starts with the summary line.
func TestLogWriterDropsWhileStalled(t *testing.T) {
	dst := &recordingDst{entered: make(chan struct{}, 10), gate: make(chan struct{})}
	w := NewLogWriter(dst, LogWriterOptions{FlushInterval: time.Hour, MaxBuffered: 100,
		Clock: NewManualClock(summaryTime)})
	first := strings.Repeat("1", 59) + "\n"  // 60 bytes >= 50: wakes the writer
	second := strings.Repeat("2", 39) + "\n" // 40 bytes
	third := strings.Repeat("3", 39) + "\n"  // 40: the buffer holds 80
	mustNotBlock(t, "Write", func() { fmt.Fprint(w, first) })
	<-dst.entered // the writer is now blocked writing the first entry
	mustNotBlock(t, "Write to a stalled destination", func() {
		fmt.Fprint(w, second)
		fmt.Fprint(w, third)
		for range 5 {
			fmt.Fprint(w, "dropped: it does not fit\n")
		}
		fmt.Fprint(w, strings.Repeat("x", 101)) // larger than the whole buffer
	})
	if got := w.Dropped(); got != 6 {
		t.Errorf("Dropped() = %d, want 6", got)
	}
	close(dst.gate) // the destination gives way
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := first + summaryLine(6) + second + third
	if got := dst.String(); got != want {
		t.Errorf("output\n%s\nwant\n%s", got, want)
	}
}

// Entries lost to a failing write are counted and reported by the next
// write that succeeds.
func TestLogWriterCountsFailedWrites(t *testing.T) {
	dst := &recordingDst{fail: 1}
	w := NewLogWriter(dst, LogWriterOptions{FlushInterval: time.Hour, Clock: NewManualClock(summaryTime)})
	fmt.Fprintln(w, "lost 1")
	fmt.Fprintln(w, "lost 2")
	if err := w.Flush(context.Background()); err == nil {
		t.Error("Flush after a failed write returned nil")
	}
	fmt.Fprintln(w, "kept")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := dst.String(), summaryLine(2)+"kept\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	if w.Dropped() != 2 {
		t.Errorf("Dropped() = %d, want 2", w.Dropped())
	}
}

func TestLogWriterBoundedFlushAndClose(t *testing.T) {
	dst := &recordingDst{entered: make(chan struct{}, 10), gate: make(chan struct{})}
	defer close(dst.gate) // free the writer goroutine at the end
	w := NewLogWriter(dst, LogWriterOptions{FlushInterval: time.Hour, CloseTimeout: 20 * time.Millisecond})
	fmt.Fprintln(w, "stuck")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Flush(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Flush with a done context = %v", err)
	}
	<-dst.entered // the writer is blocked in the destination
	for _, tc := range []struct {
		name  string
		close func() error
		want  error
	}{
		{"CloseContext, cancelled", func() error { return w.CloseContext(ctx) }, context.Canceled},
		{"Close, CloseTimeout", w.Close, context.DeadlineExceeded},
	} {
		var err error
		mustNotBlock(t, tc.name, func() { err = tc.close() })
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "6 bytes not yet written") {
			t.Errorf("%s = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// A pipe nobody reads: Write never blocks, and Close returns in time.
func TestLogWriterPipeNobodyReads(t *testing.T) {
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	w := NewLogWriter(pw, LogWriterOptions{MaxBuffered: 64 << 10, CloseTimeout: 50 * time.Millisecond})
	entry := []byte(strings.Repeat("e", 1023) + "\n")
	mustNotBlock(t, "4 MiB of Writes", func() {
		for range 4096 {
			if n, err := w.Write(entry); n != len(entry) || err != nil {
				t.Errorf("Write = %d, %v", n, err)
				return
			}
		}
	})
	if w.Dropped() == 0 {
		t.Error("nothing dropped: the pipe took 4 MiB?")
	}
	var closeErr error
	mustNotBlock(t, "Close", func() { closeErr = w.Close() })
	if !errors.Is(closeErr, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want a deadline error", closeErr)
	}
	// Close the reading end: the stalled write fails and the goroutine ends.
	r.Close()
}

func TestLogWriterConcurrentWithStall(t *testing.T) {
	dst := &recordingDst{gate: make(chan struct{})}
	w := NewLogWriter(dst, LogWriterOptions{FlushInterval: time.Millisecond, MaxBuffered: 4096,
		Clock: NewManualClock(summaryTime)})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				fmt.Fprintf(w, "{\"g\":%d,\"i\":%d}\n", g, i)
				_ = w.Dropped()
			}
		})
	}
	mustNotBlock(t, "Writes", wg.Wait)
	close(dst.gate)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Every entry was either written or counted, plus summary lines.
	written, summaries := 0, uint64(0)
	for line := range strings.SplitSeq(strings.TrimSuffix(dst.String(), "\n"), "\n") {
		if n, ok := strings.CutPrefix(line, `{"time":"2025-06-01T12:00:00.0000005Z","level":"WARN","msg":"log entries dropped while stderr was not being read","dropped":`); ok {
			var k uint64
			fmt.Sscanf(n, "%d}", &k)
			summaries += k
			continue
		}
		written++
	}
	if uint64(written)+w.Dropped() != 1600 || summaries != w.Dropped() {
		t.Errorf("written %d + dropped %d != 1600, or summaries say %d", written, w.Dropped(), summaries)
	}
}

var _ io.WriteCloser = (*LogWriter)(nil)
