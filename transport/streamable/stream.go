package streamable

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Why a stream ended without a response.
type endReason uint8

const (
	endNone      endReason = iota
	endResponse            // the response is in the log (request streams)
	endCancelled           // the client cancelled the request
	endClosed              // the session ended (DELETE, expiry, shutdown request, failure)
	endShutdown            // the server is shutting down
)

// event is one SSE event: a JSON-RPC message with its sequence number in
// its stream.
type event struct {
	seq      int64
	data     []byte // compact JSON, no trailing newline
	response bool   // the last message of a request stream
}

// stream is one event stream of a session: the messages that belong to one
// POSTed request (a request stream), or messages that belong to no request
// (a standalone stream, read by GET). It keeps its recent events in a
// bounded log, so that a client that lost its connection can resume with
// Last-Event-ID, and serves them to at most one consumer (an HTTP response
// being written) at a time.
//
// Memory is bounded: the log holds at most maxEvents events and, beyond its
// newest event, at most budget bytes. While a consumer is attached, a writer
// of a message that belongs to a request waits (backpressure) until the
// consumer has written enough; every other writer never waits: if the
// consumer is that far behind, it is cut off (its client can resume) and
// the oldest events make room.
type stream struct {
	num        int64 // the stream's number, the first part of its event ids
	standalone bool  // read by GET; else a request stream
	jsonOnly   bool  // the request is answered as JSON: only its response comes here
	maxEvents  int
	budget     int

	mu       sync.Mutex
	events   []event       // the log, oldest first; guarded by mu
	bytes    int           // bytes of data in events; guarded by mu
	next     int64         // sequence number of the next event (from 1); guarded by mu
	sent     int64         // last sequence the attached consumer wrote; guarded by mu
	gen      uint64        // consumer generation: a consumer whose gen differs was cut off; guarded by mu
	attached bool          // a consumer is attached; guarded by mu
	ended    endReason     // nothing more will be appended; guarded by mu
	wake     chan struct{} // closed on the next change, made when a waiter asks (wakeLocked); guarded by mu
	// first1 holds the log's first event in place: most request streams
	// carry one event, their response, and then need no array of their own.
	first1 [1]event
}

func newStream(num int64, standalone, jsonOnly bool, maxEvents, budget int) *stream {
	st := &stream{num: num, standalone: standalone, jsonOnly: jsonOnly, maxEvents: maxEvents, budget: budget,
		next: 1}
	st.events = st.first1[:0]
	return st
}

// broadcastLocked wakes everyone waiting for a change. A change nobody
// waits for costs nothing: the channel is made only when a waiter asks.
func (st *stream) broadcastLocked() {
	if st.wake != nil {
		close(st.wake)
		st.wake = nil
	}
}

// wakeLocked returns the channel the next change closes.
func (st *stream) wakeLocked() chan struct{} {
	if st.wake == nil {
		st.wake = make(chan struct{})
	}
	return st.wake
}

// unsentLocked returns the number and bytes of events after st.sent.
func (st *stream) unsentLocked() (n, bytes int) {
	for i := len(st.events) - 1; i >= 0 && st.events[i].seq > st.sent; i-- {
		n++
		bytes += len(st.events[i].data)
	}
	return n, bytes
}

// behindLocked reports whether the attached consumer is too far behind to
// take a message of size bytes now.
func (st *stream) behindLocked(size int) bool {
	n, b := st.unsentLocked()
	return n >= st.maxEvents || (b > 0 && b+size > st.budget)
}

// append adds a message to the log. wait says the writer may be made to
// wait for an attached consumer (backpressure); otherwise a consumer that
// is too far behind is cut off. It reports whether the response ended a
// stream that no consumer is attached to. A message for an ended stream is
// dropped.
func (st *stream) append(ctx context.Context, data []byte, response, wait bool) (unread bool, err error) {
	st.mu.Lock()
	for wait && st.attached && st.ended == endNone && st.behindLocked(len(data)) {
		ch := st.wakeLocked()
		st.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false, context.Cause(ctx)
		}
		st.mu.Lock()
	}
	defer st.mu.Unlock()
	if st.ended != endNone {
		return false, nil
	}
	if st.attached && st.behindLocked(len(data)) {
		st.cutLocked()
	}
	st.events = append(st.events, event{seq: st.next, data: data, response: response})
	st.next++
	st.bytes += len(data)
	for len(st.events) > st.maxEvents || (st.bytes > st.budget && len(st.events) > 1) {
		st.bytes -= len(st.events[0].data)
		st.events[0] = event{}
		st.events = st.events[1:]
	}
	if response {
		st.ended = endResponse
	}
	st.broadcastLocked()
	return response && !st.attached, nil
}

// cutLocked detaches the consumer: it stops at its next step and its
// HTTP response ends.
func (st *stream) cutLocked() {
	st.gen++
	st.attached = false
	st.broadcastLocked()
}

// cut detaches the consumer, if any.
func (st *stream) cut() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.attached {
		st.cutLocked()
	}
}

// end marks the stream as getting nothing more, for reason; events already
// in the log are still served.
func (st *stream) end(reason endReason) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ended == endNone {
		st.ended = reason
		st.broadcastLocked()
	}
}

// attach makes the caller the stream's consumer, cutting off any other,
// and returns its generation. after is the last sequence its client has.
func (st *stream) attach(after int64) uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.gen++
	st.attached = true
	st.sent = after
	st.broadcastLocked()
	return st.gen
}

// detach ends the consumer of generation gen, if it is still attached.
func (st *stream) detach(gen uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.gen == gen && st.attached {
		st.attached = false
		st.broadcastLocked()
	}
}

// isAttached reports whether a consumer is attached.
func (st *stream) isAttached() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.attached
}

// cursor returns the last sequence a consumer wrote.
func (st *stream) cursor() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.sent
}

// lastIssued returns the sequence number of the stream's newest event (0
// before the first).
func (st *stream) lastIssued() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.next - 1
}

// state is what a consumer sees at one step.
type state struct {
	events []event       // events after its cursor, still in the log
	cutOff bool          // another consumer took over, or it was cut off
	ended  endReason     // why nothing more will come (endNone: more may come)
	wake   chan struct{} // closed at the next change
}

// pending returns what the consumer gen has to do after sequence after.
func (st *stream) pending(gen uint64, after int64) state {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := state{cutOff: st.gen != gen || !st.attached, ended: st.ended, wake: st.wakeLocked()}
	for i := range st.events {
		if st.events[i].seq > after {
			s.events = append([]event(nil), st.events[i:]...) // eviction rewrites the log
			break
		}
	}
	return s
}

// wrote records that consumer gen has written every event up to seq.
func (st *stream) wrote(gen uint64, seq int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.gen != gen {
		return
	}
	st.sent = seq
	st.broadcastLocked()
}

// first waits, as the consumer of generation gen, for the first event of
// the log, the end of the stream, the consumer being cut off (cut), or
// ctx. It reports the event and whether there is one.
func (st *stream) first(ctx context.Context, gen uint64) (ev event, ended endReason, ok, cut bool) {
	for {
		st.mu.Lock()
		if st.gen != gen || !st.attached {
			st.mu.Unlock()
			return event{}, endNone, false, true
		}
		if len(st.events) > 0 {
			ev := st.events[0]
			st.mu.Unlock()
			return ev, endNone, true, false
		}
		ended, ch := st.ended, st.wakeLocked()
		st.mu.Unlock()
		if ended != endNone {
			return event{}, ended, false, false
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return event{}, endNone, false, false
		}
	}
}

// drained waits until the attached consumer, if any, has written every
// event, or done is closed.
func (st *stream) drained(done <-chan struct{}) {
	for {
		st.mu.Lock()
		n, _ := st.unsentLocked()
		idle := !st.attached || n == 0
		ch := st.wakeLocked()
		st.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-ch:
		case <-done:
			return
		}
	}
}

// parseEventID reads an event id, "<stream>-<sequence>" (see appendEvent):
// unique within the session, it names both the stream and the place in it.
func parseEventID(s string) (stream, seq int64, ok bool) {
	a, b, found := strings.Cut(s, "-")
	if !found {
		return 0, 0, false
	}
	stream, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || stream < 1 || seq < 0 || a[0] == '+' || b[0] == '+' {
		return 0, 0, false
	}
	return stream, seq, true
}

// errCutOff says a consumer stopped because another took over or it was
// too slow.
var errCutOff = errors.New("streamable: the stream's consumer was cut off")

// consume writes the stream's events after sequence after to w as
// server-sent events, live, as the consumer of generation gen (from
// attach), until the response has been written, the stream ends, the
// client goes away, another consumer takes over, or a write fails or takes
// longer than writeTimeout. With prime, it first writes a priming event:
// the current event id, the reconnection delay and empty data, so that a
// client can resume even before the first message. The response headers
// are already written. It detaches the consumer when it returns.
func (st *stream) consume(ctx context.Context, w http.ResponseWriter, gen uint64, after int64, prime bool, writeTimeout time.Duration) error {
	defer st.detach(gen)
	rc := http.NewResponseController(w)
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	var buf []byte
	if prime {
		if err := st.writePriming(w, after, writeTimeout); err != nil {
			return err
		}
	}
	for {
		s := st.pending(gen, after)
		if s.cutOff {
			return errCutOff
		}
		if len(s.events) > 0 {
			last := s.events[len(s.events)-1]
			for _, ev := range s.events {
				buf = appendEvent(buf[:0], st.num, ev)
				_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
				if _, err := w.Write(buf); err != nil {
					return err
				}
			}
			if err := rc.Flush(); err != nil {
				return err
			}
			after = last.seq
			st.wrote(gen, after)
			if last.response {
				return nil
			}
			continue
		}
		if s.ended != endNone {
			return nil
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// retryMs is the reconnection delay a priming event asks for.
const retryMs = 1000

// writePriming writes a priming event: id "<stream>-<after>", the retry
// delay, and empty data (which clients do not treat as a message).
func (st *stream) writePriming(w http.ResponseWriter, after int64, writeTimeout time.Duration) error {
	rc := http.NewResponseController(w)
	b := append([]byte("id: "), strconv.FormatInt(st.num, 10)...)
	b = append(b, '-')
	b = strconv.AppendInt(b, after, 10)
	b = append(b, "\nretry: "...)
	b = strconv.AppendInt(b, retryMs, 10)
	b = append(b, "\ndata: \n\n"...)
	_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := w.Write(b); err != nil {
		return err
	}
	return rc.Flush()
}

// appendEvent appends one SSE event to b.
func appendEvent(b []byte, stream int64, ev event) []byte {
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, stream, 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, ev.seq, 10)
	b = append(b, "\nevent: message\ndata: "...)
	b = append(b, ev.data...)
	return append(b, "\n\n"...)
}

// status returns why the stream ended (endNone: it has not).
func (st *stream) status() endReason {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ended
}

// size returns the bytes of the events the stream keeps.
func (st *stream) size() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.bytes
}
