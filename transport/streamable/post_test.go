package streamable

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcprt/mcprt/jsonrpc"
)

// TestPostHandsOverDecoded: a POST decodes its message once and hands the
// session's reader the decoded message with the body's text, then answers
// with the response the connection writes. (The probe session has no
// connection: the test is its reader.)
func TestPostHandsOverDecoded(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	s := newSession(f.h, "probe", credNone)
	f.h.mu.Lock()
	f.h.sessions[s.id] = s
	f.h.mu.Unlock()
	t.Cleanup(func() {
		f.h.mu.Lock()
		delete(f.h.sessions, s.id)
		f.h.mu.Unlock()
	})
	const body = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"noop","arguments":{}}}`
	answered := make(chan *http.Response, 1)
	go func() {
		req := f.request(context.Background(), http.MethodPost, " \n"+body+"\r\n",
			"Mcp-Session-Id", s.id, "MCP-Protocol-Version", "2025-11-25")
		resp, err := f.ts.Client().Do(req)
		if err != nil {
			t.Errorf("POST: %v", err)
			close(answered)
			return
		}
		answered <- resp
	}()
	in, err := s.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	req, ok := in.Message.(*jsonrpc.Request)
	if !ok || req.ID != jsonrpc.Int64ID(3) || req.Method != "tools/call" || string(req.Params) != `{"name":"noop","arguments":{}}` {
		t.Fatalf("handed over %#v, want the decoded tools/call request", in.Message)
	}
	if string(in.Data) != body {
		t.Fatalf("handed over the text %q, want the body without the space around it", in.Data)
	}
	if err := s.Write(context.Background(), jsonrpc.Outgoing{Data: []byte(`{"jsonrpc":"2.0","id":3,"result":{}}` + "\n"),
		Related: req.ID, Response: true}); err != nil {
		t.Fatal(err)
	}
	resp := <-answered
	if resp == nil {
		return
	}
	defer resp.Body.Close()
	if got := jsonAnswer(t, resp, http.StatusOK); string(got.ID) != "3" || string(got.Result) != "{}" {
		t.Fatalf("answer %+v, want the response to id 3", got)
	}
}
