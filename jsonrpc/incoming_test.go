package jsonrpc

import (
	"io"
	"testing"
)

// msgStream is a recStream that is a MessageReader: it hands the Conn
// what the test decoded.
type msgStream struct {
	*recStream
	msgs chan Incoming
}

func (s *msgStream) ReadMessage() (Incoming, error) {
	select {
	case in := <-s.msgs:
		return in, nil
	case <-s.done:
		return Incoming{}, io.EOF
	}
}

// TestMessageReaderRoutesDecoded: a MessageReader's decoded message is
// routed as it is (its text is not decoded again: here the text is not
// even JSON), while one without a decoded message (a batch, or a message
// the transport could not decode) is decoded and answered as Read's.
func TestMessageReaderRoutesDecoded(t *testing.T) {
	decoded := func(line string) Message {
		t.Helper()
		msg, derr := Decode([]byte(line))
		if derr != nil {
			t.Fatalf("Decode(%s): %v", line, derr.Err)
		}
		return msg
	}
	for _, tc := range []struct {
		name string
		in   Incoming
		want string
	}{
		{"decoded request", Incoming{Data: []byte("not decoded again"),
			Message: decoded(`{"jsonrpc":"2.0","id":"x","method":"echo","params":[1]}`)},
			`{"jsonrpc":"2.0","id":"x","result":[1]}` + "\n"},
		{"undecoded request", Incoming{Data: []byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)}, okLine("7")},
		{"undecodable", Incoming{Data: []byte(`{"jsonrpc":"2.0","id":8,"method":1}`)},
			`{"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"Invalid Request: member \"method\" must be a string, got 1"}}` + "\n"},
		{"batch", Incoming{Data: []byte(`[{"jsonrpc":"2.0","id":9,"method":"ping"}]`)}, "[" + okLine("9")[:len(okLine("9"))-1] + "]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &msgStream{recStream: newRecStream(), msgs: make(chan Incoming, 1)}
			serveConn(t, NewConn(s, newTestDisp(true), Options{}))
			s.msgs <- tc.in
			if m := s.next(t); string(m.Data) != tc.want {
				t.Fatalf("got %s, want %s", m.Data, tc.want)
			}
		})
	}
}
