package core

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingDst records what reaches the destination, one Write at a time.
type recordingDst struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
	gate   chan struct{} // when set, each Write waits for a token
}

func (l *recordingDst) Write(p []byte) (int, error) {
	if l.gate != nil {
		<-l.gate
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

func (l *recordingDst) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestLogWriterKeepsEveryRecordOnClose(t *testing.T) {
	dst := &recordingDst{}
	w := NewLogWriter(dst, LogWriterOptions{FlushInterval: time.Hour})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				fmt.Fprintf(w, "{\"g\":%d,\"i\":%d}\n", g, i)
			}
		}()
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
	// After Close, writes go straight through.
	fmt.Fprintln(w, "after")
	if !strings.HasSuffix(dst.String(), "after\n") {
		t.Error("write after Close was lost")
	}
}

func TestLogWriterFlushesOnItsOwn(t *testing.T) {
	dst := &recordingDst{}
	w := NewLogWriter(dst, LogWriterOptions{FlushInterval: time.Millisecond})
	defer w.Close()
	fmt.Fprintln(w, "x")
	deadline := time.Now().Add(5 * time.Second)
	for dst.String() != "x\n" {
		if time.Now().After(deadline) {
			t.Fatal("record not flushed by the interval")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestLogWriterBoundsItsBuffer(t *testing.T) {
	dst := &recordingDst{gate: make(chan struct{})}
	w := NewLogWriter(dst, LogWriterOptions{FlushInterval: time.Hour, MaxBuffered: 64})
	rec := strings.Repeat("r", 40) + "\n"
	fmt.Fprint(w, rec) // buffered
	done := make(chan struct{})
	go func() { fmt.Fprint(w, rec); close(done) }() // must wait: 82 > 64
	select {
	case <-done:
		t.Fatal("write beyond MaxBuffered did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	dst.gate <- struct{}{} // let the first flush through
	<-done
	close(dst.gate)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := dst.String(); got != rec+rec {
		t.Fatalf("got %q", got)
	}
}
