package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// newRecConn serves a Conn over a recording stream.
func newRecConn(t *testing.T, d Dispatcher, opts Options) (*Conn, *recStream) {
	t.Helper()
	s := newRecStream()
	c := NewConn(s, d, opts)
	serveConn(t, c)
	return c, s
}

// callID returns the id of an outgoing request.
func callID(t *testing.T, m Outgoing) ID {
	t.Helper()
	var r struct{ ID ID }
	if err := json.Unmarshal(m.Data, &r); err != nil || r.ID.IsZero() {
		t.Fatalf("not a request: %s", m.Data)
	}
	return r.ID
}

// TestOutgoingCallAndNotify: Notify writes a notification, Call a request
// with an id of its own and returns the peer's result, or its error as an
// *Error.
func TestOutgoingCallAndNotify(t *testing.T) {
	p := newLineConn(t, newTestDisp(false), Options{}, LineOptions{}, false)
	if err := p.c.Notify(context.Background(), "notifications/x", map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if got := p.out.next(t); got != `{"jsonrpc":"2.0","method":"notifications/x","params":{"a":1}}` {
		t.Fatalf("notify: %s", got)
	}
	type answer struct {
		result []byte
		err    error
	}
	call := func(method string) <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			r, err := p.c.Call(context.Background(), method, nil)
			ch <- answer{r, err}
		}()
		return ch
	}
	res := call("roots/list")
	line := p.out.next(t)
	id := responseID(t, line)
	if want := `{"jsonrpc":"2.0","id":` + id + `,"method":"roots/list"}`; line != want {
		t.Fatalf("call: %s, want %s", line, want)
	}
	p.in.feed(`{"jsonrpc":"2.0","id":` + id + `,"result":{"roots":[]}}` + "\n")
	if a := <-res; a.err != nil || string(a.result) != `{"roots":[]}` {
		t.Fatalf("call result: %s, %v", a.result, a.err)
	}
	res = call("sampling/createMessage")
	id2 := responseID(t, p.out.next(t))
	if id2 == id {
		t.Fatalf("two calls with the id %s", id)
	}
	p.in.feed(`{"jsonrpc":"2.0","id":` + id2 + `,"error":{"code":-32601,"message":"no","data":{"k":1}}}` + "\n")
	a := <-res
	var e *Error
	if !errors.As(a.err, &e) || e.Code != CodeMethodNotFound || e.Message != "no" || !errors.Is(a.err, ErrMethodNotFound) {
		t.Fatalf("call error: %v", a.err)
	}
	if _, err := p.c.Call(context.Background(), "x", func() {}); err == nil {
		t.Fatal("Call with unencodable params succeeded")
	}
}

// TestCallCancelled: a Call whose context ends before the answer returns
// the context's cause and sends the notification Options.CancelCall makes
// of it; none when CancelCall is nil or says "".
func TestCallCancelled(t *testing.T) {
	type cancelled struct {
		id    ID
		cause error
	}
	errGaveUp := errors.New("gave up")
	tests := []struct {
		name   string
		cancel func(id ID, cause error) (string, any)
		want   string // the notification's data (ID: the call's id); "" for none
	}{
		{"notification", func(id ID, cause error) (string, any) {
			return "notifications/cancelled", map[string]any{"requestId": id, "reason": cause.Error()}
		}, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"gave up","requestId":ID}}` + "\n"},
		{"method empty", func(ID, error) (string, any) { return "", nil }, ""},
		{"no CancelCall", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan cancelled, 1)
			opts := Options{}
			if tt.cancel != nil {
				opts.CancelCall = func(id ID, cause error) (string, any) {
					got <- cancelled{id, cause}
					return tt.cancel(id, cause)
				}
			}
			c, s := newRecConn(t, newTestDisp(false), opts)
			ctx, cancel := context.WithCancelCause(context.Background())
			res := make(chan error, 1)
			go func() {
				_, err := c.Call(ctx, "roots/list", nil)
				res <- err
			}()
			id := callID(t, s.next(t))
			cancel(errGaveUp)
			if err := <-res; err != errGaveUp {
				t.Fatalf("Call returned %v, want the context's cause", err)
			}
			if tt.cancel != nil {
				if g := <-got; g.id != id || g.cause != errGaveUp {
					t.Fatalf("CancelCall(%v, %v), want (%v, %v)", g.id, g.cause, id, errGaveUp)
				}
			}
			// The answer, when it comes at last, is dropped.
			s.send(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{}}`)
			// CancelCall's notification is written before Call returns:
			// a marker sent now comes right after it.
			if err := c.Notify(context.Background(), "marker", nil); err != nil {
				t.Fatal(err)
			}
			if tt.want != "" {
				want := strings.Replace(tt.want, "ID", id.String(), 1)
				if m := s.next(t); string(m.Data) != want || m.Response {
					t.Fatalf("cancellation %s (response %v), want %s", m.Data, m.Response, want)
				}
			}
			if m := s.next(t); string(m.Data) != `{"jsonrpc":"2.0","method":"marker"}`+"\n" {
				t.Fatalf("after the cancelled call: %s", m.Data)
			}
		})
	}
}

// TestCallEndsWithTheConnection: a Call waiting for its answer returns
// ErrClosed when the connection closes.
func TestCallEndsWithTheConnection(t *testing.T) {
	c, s := newRecConn(t, newTestDisp(false), Options{CancelCall: func(ID, error) (string, any) {
		t.Error("CancelCall called for a call ended by the close")
		return "", nil
	}})
	res := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), "roots/list", nil)
		res <- err
	}()
	s.next(t)
	c.Close()
	if err := <-res; !errors.Is(err, ErrClosed) {
		t.Fatalf("Call returned %v, want ErrClosed", err)
	}
}

// TestOutgoingRelatedToTheRequest: what a handler sends under its
// request's context (Notify, Call) is marked as related to that request,
// and so is its response; what is sent outside any request is not.
func TestOutgoingRelatedToTheRequest(t *testing.T) {
	d := newTestDisp(false).handle("work", Route{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		c := ConnFromContext(ctx)
		if err := c.Notify(ctx, "progress", map[string]int{"done": 1}); err != nil {
			return nil, err
		}
		r, err := c.Call(ctx, "roots/list", nil)
		if err != nil {
			return nil, err
		}
		return json.RawMessage(r), nil
	})})
	c, s := newRecConn(t, d, Options{})
	s.send(`{"jsonrpc":"2.0","id":7,"method":"work"}`)
	seven := Int64ID(7)
	if m := s.next(t); m.Related != seven || m.Response || string(m.Data) != `{"jsonrpc":"2.0","method":"progress","params":{"done":1}}`+"\n" {
		t.Fatalf("notification %s related %v response %v", m.Data, m.Related, m.Response)
	}
	m := s.next(t)
	if m.Related != seven || m.Response {
		t.Fatalf("call %s related %v response %v", m.Data, m.Related, m.Response)
	}
	s.send(`{"jsonrpc":"2.0","id":` + callID(t, m).String() + `,"result":{"roots":[1]}}`)
	if m := s.next(t); m.Related != seven || !m.Response || string(m.Data) != `{"jsonrpc":"2.0","id":7,"result":{"roots":[1]}}`+"\n" {
		t.Fatalf("response %s related %v response %v", m.Data, m.Related, m.Response)
	}
	if err := c.Notify(context.Background(), "free", nil); err != nil {
		t.Fatal(err)
	}
	if m := s.next(t); !m.Related.IsZero() || m.Response {
		t.Fatalf("notification outside a request: related %v response %v", m.Related, m.Response)
	}
	// Error responses, and responses to batches, are marked too.
	s.send(`{"jsonrpc":"2.0","id":"n","method":"nope"}`)
	if m := s.next(t); m.Related != StringID("n") || !m.Response {
		t.Fatalf("error response related %v response %v", m.Related, m.Response)
	}
}

// A notification sent with the context of another connection's request
// relates to nothing on this one: ids are per connection.
func TestNotifyWithAnotherConnectionsContext(t *testing.T) {
	a, b := newRecStream(), newRecStream()
	started := make(chan context.Context, 1)
	release := make(chan struct{})
	da := newTestDisp(false).handle("hold", Route{Handler: HandlerFunc(func(ctx context.Context, _ *Request) (any, error) {
		started <- ctx
		<-release
		return nil, nil
	})})
	ca := NewConn(a, da, Options{})
	cb := NewConn(b, newTestDisp(false), Options{})
	serveConn(t, ca)
	serveConn(t, cb)
	a.send(req(`"x"`, "hold"))
	ctx := <-started
	if err := cb.Notify(ctx, "n", nil); err != nil {
		t.Fatal(err)
	}
	if got := b.next(t); !got.Related.IsZero() {
		t.Fatalf("Related = %s on the other connection, want none", got.Related)
	}
	if err := ca.Notify(ctx, "n", nil); err != nil {
		t.Fatal(err)
	}
	if got := a.next(t); got.Related.String() != `"x"` {
		t.Fatalf("Related = %s on the request's own connection, want \"x\"", got.Related)
	}
	close(release)
}
