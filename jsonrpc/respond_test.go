package jsonrpc

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRespondBeforeReturn: Respond sends the answer at once and frees the
// id; a second answer and the handler's own result are not sent.
func TestRespondBeforeReturn(t *testing.T) {
	responded := make(chan bool, 2)
	release := make(chan struct{})
	d := newTestDisp(false).handle("early", Route{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		responded <- Respond(ctx, "early")
		responded <- RespondError(ctx, NewError(CodeInvalidParams, "again"))
		<-release
		return "late", nil
	})})
	c, s := newRecConn(t, d, Options{})
	s.send(`{"jsonrpc":"2.0","id":5,"method":"early"}`)
	if m := s.next(t); string(m.Data) != `{"jsonrpc":"2.0","id":5,"result":"early"}`+"\n" || !m.Response || m.Related != Int64ID(5) {
		t.Fatalf("early response %s (response %v, related %v)", m.Data, m.Response, m.Related)
	}
	if first, second := <-responded, <-responded; !first || second {
		t.Fatalf("Respond reported %v then %v, want true then false", first, second)
	}
	// The id is free again while the handler still runs.
	s.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if m := s.next(t); string(m.Data) != okLine("5") {
		t.Fatalf("id reused after Respond: %s", m.Data)
	}
	close(release)
	if err := c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.send(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	if m := s.next(t); string(m.Data) != okLine("6") {
		t.Fatalf("the handler's own result was sent too: %s", m.Data)
	}
}

// TestRespondError: RespondError sends an error answer (with the
// connection's error data) and ErrNoResponse keeps the handler silent.
func TestRespondError(t *testing.T) {
	d := newTestDisp(false).handle("refuse", inline(func(ctx context.Context, req *Request) (any, error) {
		RespondError(ctx, NewError(CodeInvalidParams, "Invalid params: no"))
		return nil, ErrNoResponse
	}))
	_, s := newRecConn(t, d, Options{ErrorData: cidErrorData(testCID)})
	s.send(`{"jsonrpc":"2.0","id":"r","method":"refuse","params":{"_meta":{"correlationId":"c-9"}}}`)
	want := `{"jsonrpc":"2.0","id":"r","error":{"code":-32602,"message":"Invalid params: no","data":{"correlationId":"c-9"}}}` + "\n"
	if m := s.next(t); string(m.Data) != want {
		t.Fatalf("got %s, want %s", m.Data, want)
	}
}

// TestCancelRequestStillAnswers: CancelRequest cancels the handler's
// context with its cause, as a deadline of the layer above would, and the
// handler's answer is still sent.
func TestCancelRequestStillAnswers(t *testing.T) {
	errDeadline := errors.New("deadline")
	d := newTestDisp(false).handle("limited", Route{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if !CancelRequest(ctx, errDeadline) {
			return nil, errors.New("not a request's context")
		}
		<-ctx.Done()
		return nil, NewError(-32001, "timed out: "+context.Cause(ctx).Error())
	})})
	_, s := newRecConn(t, d, Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"limited"}`)
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"timed out: deadline"}}` + "\n"
	if m := s.next(t); string(m.Data) != want {
		t.Fatalf("got %s, want %s", m.Data, want)
	}
}

// TestRespondAfterPeerCancel: once the peer cancelled a request, Respond
// reports false and sends nothing.
func TestRespondAfterPeerCancel(t *testing.T) {
	started := make(chan struct{})
	responded := make(chan bool, 1)
	d := newTestDisp(false).handle("wait", Route{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		close(started)
		<-ctx.Done()
		responded <- Respond(ctx, "too late")
		return "too late", nil
	})})
	c, s := newRecConn(t, d, Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"wait"}`)
	<-started
	if !c.Cancel(Int64ID(1), errors.New("peer")) {
		t.Fatal("nothing to cancel")
	}
	if <-responded {
		t.Fatal("Respond after the peer's cancellation reported true")
	}
	if err := c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := s.next(t); string(m.Data) != okLine("2") {
		t.Fatalf("a cancelled request was answered: %s", m.Data)
	}
}

// TestRequestContext: a handler's context names its connection and its
// request; other contexts name neither, and answering through them fails.
func TestRequestContext(t *testing.T) {
	type seen struct {
		conn *Conn
		id   ID
		ok   bool
	}
	got := make(chan seen, 1)
	d := newTestDisp(false).handle("who", inline(func(ctx context.Context, req *Request) (any, error) {
		id, ok := RequestID(ctx)
		got <- seen{ConnFromContext(ctx), id, ok}
		return nil, nil
	}))
	c, s := newRecConn(t, d, Options{})
	s.send(`{"jsonrpc":"2.0","id":"q\u0041","method":"who"}`)
	g := <-got
	if g.conn != c || !g.ok || g.id.String() != `"q\u0041"` {
		t.Fatalf("ConnFromContext %p (want %p), RequestID %v %v", g.conn, c, g.id, g.ok)
	}
	if m := s.next(t); string(m.Data) != `{"jsonrpc":"2.0","id":"q\u0041","result":null}`+"\n" {
		t.Fatalf("got %s", m.Data)
	}
	ctx := context.Background()
	if _, ok := RequestID(ctx); ok || ConnFromContext(ctx) != nil {
		t.Fatal("a background context names a request or connection")
	}
	if Respond(ctx, 1) || RespondError(ctx, errors.New("x")) || CancelRequest(ctx, errors.New("x")) {
		t.Fatal("answering through a context that is no request's succeeded")
	}
}

// TestCloseCancelsAnsweredHandlers: a handler that answered early with
// Respond and runs on still has its context cancelled, with ErrClosed,
// when the connection closes (its request left the in-flight table when
// it answered); and once such a handler returns, the connection keeps
// nothing of it.
func TestCloseCancelsAnsweredHandlers(t *testing.T) {
	for _, tc := range []struct {
		name        string
		returnFirst bool // the handler returns before the close
	}{{"still running at the close", false}, {"returned before the close", true}} {
		t.Run(tc.name, func(t *testing.T) {
			causes := make(chan error, 1)
			release := make(chan struct{})
			d := newTestDisp(false).handle("early", Route{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				Respond(ctx, "early")
				select {
				case <-ctx.Done():
					causes <- context.Cause(ctx)
				case <-release:
					causes <- nil
				}
				return "late", nil
			})})
			c, s := newRecConn(t, d, Options{})
			s.send(`{"jsonrpc":"2.0","id":1,"method":"early"}`)
			if m := s.next(t); string(m.Data) != `{"jsonrpc":"2.0","id":1,"result":"early"}`+"\n" {
				t.Fatalf("early response %s", m.Data)
			}
			if tc.returnFirst {
				close(release)
				if cause := <-causes; cause != nil {
					t.Fatalf("the handler's context ended before the close: %v", cause)
				}
				if err := c.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				c.mu.Lock()
				n := len(c.detached)
				c.mu.Unlock()
				if n != 0 {
					t.Fatalf("%d answered handlers kept after they returned, want 0", n)
				}
				c.Close()
				return
			}
			defer close(release) // frees the handler if the close did not
			c.Close()
			select {
			case cause := <-causes:
				if !errors.Is(cause, ErrClosed) {
					t.Fatalf("the answered handler's context cause %v, want ErrClosed", cause)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the close did not cancel the answered handler's context within 10 s")
			}
		})
	}
}
