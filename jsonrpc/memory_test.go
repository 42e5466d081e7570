package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"testing"
)

func mustRead(t *testing.T, s Stream) string {
	t.Helper()
	m, err := s.Read()
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return string(m)
}

func mustWrite(t *testing.T, s Stream, msg string) {
	t.Helper()
	if err := s.Write(context.Background(), Outgoing{Data: []byte(msg + "\n")}); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

// TestMemoryPairCrossesBothWays: each message arrives whole, in order,
// without its newline, and unaffected by what the writer does with its
// buffer afterwards.
func TestMemoryPairCrossesBothWays(t *testing.T) {
	a, b := NewMemoryPair()
	defer a.Close()
	buf := []byte(`{"jsonrpc":"2.0","method":"x"}` + "\n")
	if err := a.Write(context.Background(), Outgoing{Data: buf}); err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXXXXX")
	mustWrite(t, a, `[1,2]`)
	mustWrite(t, b, `{"back":true}`)
	if got := mustRead(t, b); got != `{"jsonrpc":"2.0","method":"x"}` {
		t.Fatalf("b read %q", got)
	}
	if got := mustRead(t, b); got != `[1,2]` {
		t.Fatalf("b read %q", got)
	}
	if got := mustRead(t, a); got != `{"back":true}` {
		t.Fatalf("a read %q", got)
	}
}

// TestMemoryPairClose: closing one end ends both; each reads what was
// already sent to it, then io.EOF; writes fail with ErrClosed.
func TestMemoryPairClose(t *testing.T) {
	for _, closer := range []string{"writer", "reader"} {
		t.Run(closer, func(t *testing.T) {
			a, b := NewMemoryPair()
			mustWrite(t, a, "1")
			mustWrite(t, a, "2")
			if closer == "writer" {
				a.Close()
			} else {
				b.Close()
			}
			b.Close() // twice is fine
			for _, want := range []string{"1", "2"} {
				if got := mustRead(t, b); got != want {
					t.Fatalf("read %q after close, want %q", got, want)
				}
			}
			for _, s := range []Stream{a, b} {
				if _, err := s.Read(); err != io.EOF {
					t.Fatalf("Read after close and drain: %v, want io.EOF", err)
				}
				if err := s.Write(context.Background(), Outgoing{Data: []byte("3\n")}); !errors.Is(err, ErrClosed) {
					t.Fatalf("Write after close: %v, want ErrClosed", err)
				}
			}
		})
	}
}

// TestMemoryPairBackpressure: Write blocks once memoryQueue messages wait
// unread; reading one makes room; a close unblocks a blocked Write.
func TestMemoryPairBackpressure(t *testing.T) {
	a, b := NewMemoryPair()
	for i := range memoryQueue {
		mustWrite(t, a, strconv.Itoa(i))
	}
	// The queue is full: only the context can end this Write.
	errFull := errors.New("would block")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errFull)
	if err := a.Write(ctx, Outgoing{Data: []byte("x\n")}); err != errFull {
		t.Fatalf("Write to a full queue: %v, want the context's cause", err)
	}
	if got := mustRead(t, b); got != "0" {
		t.Fatalf("read %q", got)
	}
	mustWrite(t, a, "64") // room for one more
	blocked := make(chan error, 1)
	go func() { blocked <- a.Write(context.Background(), Outgoing{Data: []byte("65\n")}) }()
	b.Close()
	if err := <-blocked; !errors.Is(err, ErrClosed) {
		t.Fatalf("blocked Write after close: %v, want ErrClosed", err)
	}
	for i := 1; i <= memoryQueue; i++ {
		if got := mustRead(t, b); got != strconv.Itoa(i) {
			t.Fatalf("read %q, want %d", got, i)
		}
	}
	if _, err := b.Read(); err != io.EOF {
		t.Fatalf("Read: %v, want io.EOF", err)
	}
}

// clientDisp is a client's side: it answers roots/list.
type clientDisp struct{}

func (clientDisp) Route(_ context.Context, req *Request) Route {
	if req.Method != "roots/list" {
		return Route{}
	}
	return inline(func(context.Context, *Request) (any, error) {
		return json.RawMessage(`{"roots":["file:///"]}`), nil
	})
}
func (clientDisp) Notification(context.Context, *Notification) {}
func (clientDisp) Batch() *Error                               { return nil }

// TestConnOverMemoryPair serves a whole Conn over a memory pair, with a
// Conn as the client: calls both ways, concurrent calls, notifications,
// and the client's close ending the server's Serve.
func TestConnOverMemoryPair(t *testing.T) {
	d := newTestDisp(false).handle("ask", Route{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		r, err := ConnFromContext(ctx).Call(ctx, "roots/list", nil)
		return json.RawMessage(r), err
	})})
	sa, sb := NewMemoryPair()
	server := NewConn(sa, d, Options{})
	client := NewConn(sb, clientDisp{}, Options{})
	served := serveConn(t, server)
	serveConn(t, client)
	ctx := context.Background()

	r, err := client.Call(ctx, "ask", nil)
	if err != nil || string(r) != `{"roots":["file:///"]}` {
		t.Fatalf("ask: %s, %v", r, err)
	}
	if _, err := client.Call(ctx, "nope", nil); !errors.Is(err, ErrMethodNotFound) {
		t.Fatalf("nope: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*50)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				want := `[` + strconv.Itoa(g) + `,` + strconv.Itoa(i) + `]`
				r, err := client.Call(ctx, "echo", json.RawMessage(want))
				if err == nil && string(r) != want {
					err = errors.New("echo " + want + " came back as " + string(r))
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := client.Notify(ctx, "hello", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Call(ctx, "ping", nil); err != nil { // the notification is handled before it
		t.Fatal(err)
	}
	if n := d.notifications(); len(n) != 1 || n[0] != "hello" {
		t.Fatalf("server's notifications: %v", n)
	}
	client.Close()
	if err := served.wait(t); err != nil {
		t.Fatalf("server's Serve: %v", err)
	}
}
