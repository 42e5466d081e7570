package jsonrpc

import (
	"bytes"
	"context"
	"io"
	"sync"
)

// memoryQueue is how many messages a memory stream holds for its reader
// before Write blocks (backpressure, as a pipe would).
const memoryQueue = 64

// NewMemoryPair returns the two ends of an in-memory transport: what one
// end writes, the other reads, message by message. It is for tests and for
// programs that embed a server and a client in one process. Closing either
// end ends both: the other end reads what was already sent, then io.EOF.
func NewMemoryPair() (a, b Stream) {
	ab := make(chan []byte, memoryQueue)
	ba := make(chan []byte, memoryQueue)
	shared := &memoryShared{done: make(chan struct{})}
	return &memoryStream{in: ba, out: ab, shared: shared}, &memoryStream{in: ab, out: ba, shared: shared}
}

type memoryShared struct {
	once sync.Once
	done chan struct{}
}

type memoryStream struct {
	in, out chan []byte
	shared  *memoryShared
	cur     []byte // the message Read returned last
}

// Read returns the next message the other end wrote.
func (m *memoryStream) Read() ([]byte, error) {
	select {
	case msg := <-m.in:
		m.cur = msg
		return msg, nil
	case <-m.shared.done:
		select { // what was sent before the close is still read
		case msg := <-m.in:
			m.cur = msg
			return msg, nil
		default:
			return nil, io.EOF
		}
	}
}

// Write hands a copy of the message to the other end. It blocks while the
// other end has memoryQueue messages unread.
func (m *memoryStream) Write(ctx context.Context, o Outgoing) error {
	msg := bytes.Clone(bytes.TrimRight(o.Data, "\n"))
	select {
	case <-m.shared.done:
		return ErrClosed
	default:
	}
	select {
	case m.out <- msg:
		return nil
	case <-m.shared.done:
		return ErrClosed
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Close ends both ends.
func (m *memoryStream) Close() error {
	m.shared.once.Do(func() { close(m.shared.done) })
	return nil
}
