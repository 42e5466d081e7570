package jsonrpc

import "context"

// A Stream is one connection of a message transport, as the Conn sees it:
// it reads whole incoming messages and writes whole outgoing ones. How the
// bytes travel (lines on a pipe, HTTP bodies and event streams, channels in
// memory) is the transport's business; the Conn never sees a byte stream.
//
// Read is called by one goroutine at a time. Write may be called by many
// goroutines at once and must never interleave two messages. Close may be
// called at any time, more than once, from any goroutine; it makes a
// blocked Read return.
type Stream interface {
	// Read returns the next incoming message: one JSON-RPC message or
	// batch as JSON text, valid until the next call to Read. An error that
	// is an *Error means the transport received a message it could not
	// deliver (too long, say): the Conn answers it with that error and id
	// null, and reads on. io.EOF ends the input cleanly; any other error
	// ends it with that error.
	Read() ([]byte, error)
	// Write sends one outgoing message. It may return before the bytes
	// are on the wire (a transport may gather messages), unless m.Flush
	// is set. It returns ErrClosed once the stream is closed. m.Data is
	// the stream's from then on: the Conn makes every message afresh for
	// one Write and never touches it again, so a transport may keep it
	// (in a replay log, say) without copying.
	Write(ctx context.Context, m Outgoing) error
	// Close ends the stream: nothing more is written and Read returns.
	Close() error
}

// dataCopier is a Stream whose Write is done with m.Data when it returns:
// it copied the message or wrote it, and keeps no reference to it. The
// Conn then encodes responses into buffers it reuses.
type dataCopier interface{ copiesData() }

// A MessageReader is a Stream whose transport decodes each incoming
// message itself (to route it: an HTTP POST must know whether it carries a
// request before it answers) and hands the Conn what it decoded, so that a
// message is decoded once. The Conn calls ReadMessage instead of Read.
type MessageReader interface {
	// ReadMessage returns the next incoming message, with Read's errors.
	ReadMessage() (Incoming, error)
}

// Incoming is one message a MessageReader hands the Conn.
type Incoming struct {
	// Data is the message's JSON text, as Read would return it.
	Data []byte
	// Message is what Decode returned for Data, unchanged, or nil. The
	// Conn routes it as it is, without decoding Data again; when it is
	// nil (a batch, or a message Decode refused) the Conn decodes Data
	// and answers it as it answers what Read returns. Message must come
	// from Decode: the engine's rules (case-exact members, duplicates
	// refused, ids kept as their exact text) are checked there and
	// nowhere else.
	Message Message
}

// Outgoing is one message on its way out, with what a transport needs to
// route it.
type Outgoing struct {
	// Data is the message: compact JSON ending in "\n".
	Data []byte
	// Related is the id of the incoming request this message answers or
	// belongs to (a response, or a notification or request the server
	// sends while handling it); the zero ID when it belongs to none. A
	// transport that keeps one stream per request (Streamable HTTP) sends
	// it there.
	Related ID
	// Response marks Data as the response to Related: the last message
	// that belongs to it.
	Response bool
	// Flush asks Write to return only once the message is written (or
	// dropped by a close): used before the connection closes.
	Flush bool
}

// A Pacer is a Stream that can tell its reader to wait: the Conn calls Pace
// before it reads the next message, and a transport whose queued output is
// over its budget (a client that stopped reading) blocks there until the
// output drains or done is closed. Reading stops, so memory stays bounded.
type Pacer interface {
	Pace(done <-chan struct{})
}

// A Failer is a Stream that can tell that it broke on its own (a write to
// its output failed): the Conn closes when Failed is closed, even while
// its reader is blocked waiting for input.
type Failer interface {
	Failed() <-chan struct{}
}

// A Drainer is a Stream that may still be writing what it accepted after
// Close; Drain waits for that output (or for done). A server calls it at
// shutdown so that every response it handed over reaches the peer.
type Drainer interface {
	Drain(done <-chan struct{})
}
