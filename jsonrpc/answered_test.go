package jsonrpc

import (
	"context"
	"testing"
)

// answerFunc adapts a function to Answerer.
type answerFunc func(bool)

func (f answerFunc) Answered(sent bool) { f(sent) }

// TestOnAnswered: the Answerer hears, once, whether the answer the handler
// returned went out: true for a sent result or error, false when the
// handler sent nothing or Respond answered first.
func TestOnAnswered(t *testing.T) {
	tests := []struct {
		name   string
		handle func(ctx context.Context) (any, error)
		want   string // the response line, "" for none
		sent   bool
	}{
		{"result", func(context.Context) (any, error) { return "ok", nil }, `{"jsonrpc":"2.0","id":1,"result":"ok"}`, true},
		{"error", func(context.Context) (any, error) { return nil, NewError(CodeInvalidParams, "Invalid params: no") },
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: no"}}`, true},
		{"no response", func(context.Context) (any, error) { return nil, ErrNoResponse }, "", false},
		{"responded first", func(ctx context.Context) (any, error) {
			Respond(ctx, "early")
			return "late", nil
		}, `{"jsonrpc":"2.0","id":1,"result":"early"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			heard := make(chan bool, 2)
			d := newTestDisp(false).handle("m", Route{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				if !OnAnswered(ctx, answerFunc(func(sent bool) { heard <- sent })) {
					t.Error("OnAnswered: a request's context not recognised")
				}
				return tt.handle(ctx)
			})})
			_, s := newRecConn(t, d, Options{})
			s.send(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
			if tt.want != "" {
				if m := s.next(t); string(m.Data) != tt.want+"\n" {
					t.Fatalf("got %s, want %s", m.Data, tt.want)
				}
			}
			if got := <-heard; got != tt.sent {
				t.Fatalf("Answered(%v), want Answered(%v)", got, tt.sent)
			}
			s.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			if m := s.next(t); string(m.Data) != okLine("2") {
				t.Fatalf("next answer %s", m.Data)
			}
			if len(heard) != 0 {
				t.Fatal("Answered was called twice")
			}
		})
	}
	if OnAnswered(context.Background(), answerFunc(func(bool) {})) {
		t.Fatal("OnAnswered accepted a context that is no request's")
	}
}
