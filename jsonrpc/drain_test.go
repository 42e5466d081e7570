package jsonrpc

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestLineCloseWritesWhatItAccepted: lines a Write accepted before Close
// are still written (a layer that recorded them as answered told the
// truth); Drain waits for them; a Write after Close is refused.
func TestLineCloseWritesWhatItAccepted(t *testing.T) {
	sink := newLineSink(true)
	l := NewLine(strings.NewReader(""), sink, LineOptions{})
	ctx := context.Background()
	// The first write blocks in the gated sink; the next ones gather.
	go func() { _ = l.Write(ctx, Outgoing{Data: []byte("first\n")}) }()
	<-sink.entered
	for i := range 50 {
		if err := l.Write(ctx, Outgoing{Data: fmt.Appendf(nil, "queued-%d\n", i)}); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	_ = l.Close()
	if err := l.Write(ctx, Outgoing{Data: []byte("late\n")}); err != ErrClosed {
		t.Fatalf("Write after Close = %v, want ErrClosed", err)
	}
	drained := make(chan struct{})
	go func() { l.Drain(make(chan struct{})); close(drained) }()
	close(sink.gate)
	select {
	case <-drained:
	case <-time.After(10 * time.Second):
		t.Fatal("Drain did not return after the output caught up")
	}
	if got := sink.next(t); got != "first" {
		t.Fatalf("first line %q", got)
	}
	for i := range 50 {
		if got := sink.next(t); got != fmt.Sprintf("queued-%d", i) {
			t.Fatalf("line %d = %q", i, got)
		}
	}
	sink.none(t, "the write after Close was refused")
}

// TestLineCloseDrainsACorkedBatch: a batch gathered while corked, with no
// write in progress at Close, is written by Close's own goroutine.
func TestLineCloseDrainsACorkedBatch(t *testing.T) {
	sink := newLineSink(false)
	l := NewLine(strings.NewReader(""), sink, LineOptions{})
	l.wr.cork()
	for i := range 3 {
		if err := l.Write(context.Background(), Outgoing{Data: fmt.Appendf(nil, "c-%d\n", i)}); err != nil {
			t.Fatal(err)
		}
	}
	_ = l.Close()
	l.Drain(make(chan struct{}))
	for i := range 3 {
		if got := sink.next(t); got != fmt.Sprintf("c-%d", i) {
			t.Fatalf("line %d = %q", i, got)
		}
	}
}

// TestLineDrainGivesUp: Drain returns when done closes although the
// output never catches up (a client that stopped reading).
func TestLineDrainGivesUp(t *testing.T) {
	sink := newLineSink(true)
	l := NewLine(strings.NewReader(""), sink, LineOptions{})
	go func() { _ = l.Write(context.Background(), Outgoing{Data: []byte("stuck\n")}) }()
	<-sink.entered
	_ = l.Close()
	done := make(chan struct{})
	returned := make(chan struct{})
	go func() { l.Drain(done); close(returned) }()
	close(done)
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("Drain ignored done")
	}
	close(sink.gate)
}
