package streamable

import (
	"bytes"
	"context"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// Per-session bounds that are not configuration.
const (
	// maxStandalone is how many GET streams a session keeps (open ones and
	// those kept for resumption).
	maxStandalone = 8
	// maxRetained is how many answered request streams whose client went
	// away a session keeps for resumption.
	maxRetained = 16
)

// Credential classes, weakest first.
const (
	credNone  = iota // no token (none is configured, or the request had none)
	credToken        // the access token of authTokenEnvVar
	credAdmin        // the admin token of tools.adminPolicy.tokenEnvVar
)

// session is one MCP session over HTTP and the jsonrpc.Stream its
// connection runs on. POST handlers hand it incoming messages (Read gives
// them to the connection one at a time); Write routes each outgoing
// message to the stream it belongs to: the stream of the request it
// relates to, else a standalone (GET) stream.
type session struct {
	h        *Handler
	id       string // the Mcp-Session-Id
	sess     *mcp.Session
	cred     int                   // the credential class the session was opened with
	in       chan jsonrpc.Incoming // unbuffered: a send succeeds only when the reader takes it
	done     chan struct{}         // closed by Close
	finished chan struct{}         // closed once the session has shut down (handlers waited for)
	anonSlot chan struct{}         // one token: one message whose answer has no id at a time
	once     sync.Once

	mu         sync.Mutex
	closed     bool                   // guarded by mu
	reason     endReason              // why it closed; guarded by mu
	exchanges  map[jsonrpc.ID]*stream // request id → its stream; guarded by mu
	anon       *stream                // the stream waiting for an answer without id; guarded by mu
	streams    map[int64]*stream      // resumable streams by number; guarded by mu
	standalone []*stream              // GET streams, oldest first; guarded by mu
	retained   []*stream              // answered streams kept for resumption, oldest first; guarded by mu
	nextStream int64                  // guarded by mu
	active     int                    // HTTP requests in progress; guarded by mu
	idle       core.Timer             // the idle-expiry timer, armed lazily (see end); guarded by mu
	idleGen    uint64                 // invalidates a timer that fired late; guarded by mu
	lastEnd    time.Time              // when the last HTTP request ended; guarded by mu
}

var (
	_ jsonrpc.Stream        = (*session)(nil)
	_ jsonrpc.MessageReader = (*session)(nil)
	_ jsonrpc.Drainer       = (*session)(nil)
)

func newSession(h *Handler, id string, cred int) *session {
	return &session{
		h: h, id: id, cred: cred,
		in:        make(chan jsonrpc.Incoming),
		done:      make(chan struct{}),
		finished:  make(chan struct{}),
		anonSlot:  make(chan struct{}, 1),
		exchanges: map[jsonrpc.ID]*stream{},
		streams:   map[int64]*stream{},
	}
}

// Read returns the next message a POST handed over, or io.EOF once the
// session is closed.
func (s *session) Read() ([]byte, error) {
	in, err := s.ReadMessage()
	return in.Data, err
}

// ReadMessage returns the next message a POST handed over, as the POST
// decoded it, or io.EOF once the session is closed.
func (s *session) ReadMessage() (jsonrpc.Incoming, error) {
	select {
	case in := <-s.in:
		return in, nil
	case <-s.done:
		return jsonrpc.Incoming{}, io.EOF
	}
}

// push hands one incoming message to the connection's reader: its text
// and, when the POST decoded it, the decoded message (nil otherwise). It
// waits while the reader is busy (the connection's in-flight bound is the
// backpressure) and reports whether the reader took the message.
func (s *session) push(ctx context.Context, msg jsonrpc.Incoming) bool {
	select {
	case s.in <- msg: // the reader waits for it: the usual case, without a wait
		return true
	default:
	}
	select {
	case s.in <- msg:
		return true
	case <-s.done:
		return false
	case <-ctx.Done():
		return false
	}
}

// Write routes one outgoing message: to the stream of the request it
// belongs to (m.Related), to the stream waiting for an answer without id,
// or else to a standalone stream. It returns jsonrpc.ErrClosed once the
// session is closed.
func (s *session) Write(ctx context.Context, m jsonrpc.Outgoing) error {
	data := bytes.TrimRight(m.Data, "\n") // the session's from now on: the Conn made it for this write alone
	related := !m.Related.IsZero()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return jsonrpc.ErrClosed
	}
	var st *stream
	switch {
	case related:
		st = s.exchanges[m.Related]
		if m.Response && st != nil && st != s.anon {
			delete(s.exchanges, m.Related)
		}
		if st != nil && st.jsonOnly && !m.Response {
			st = nil // a JSON answer carries nothing but the response
		}
	case m.Response:
		st = s.anon
		s.releaseAnonLocked()
	}
	if st == nil {
		if m.Response {
			s.mu.Unlock()
			s.h.log.Debug("dropped a response no request waits for (cancelled, or its session stream is gone)",
				"connectionCorrelationId", s.sess.CorrelationID())
			return nil
		}
		st, related = s.standaloneLocked(), false
	}
	s.mu.Unlock()
	unread, err := st.append(ctx, data, m.Response, related)
	if unread {
		s.retain(st)
	}
	return err
}

// releaseAnonLocked frees the slot of the message whose answer has no id.
func (s *session) releaseAnonLocked() {
	if s.anon == nil {
		return
	}
	for id, st := range s.exchanges {
		if st == s.anon {
			delete(s.exchanges, id)
		}
	}
	s.anon = nil
	<-s.anonSlot
}

// retain keeps an answered stream for resumption. The session keeps at
// most maxRetained such streams and, beyond the newest, at most
// transport.maxOutputBytes of their events; older ones are forgotten.
func (s *session) retain(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streams[st.num] != st || slices.Contains(s.retained, st) {
		return
	}
	s.retained = append(s.retained, st)
	total := 0
	for _, r := range s.retained {
		total += r.size()
	}
	for len(s.retained) > 1 && (len(s.retained) > maxRetained || total > s.h.budget) {
		old := s.retained[0]
		s.retained[0] = nil
		s.retained = s.retained[1:]
		total -= old.size()
		if s.streams[old.num] == old && !old.isAttached() {
			delete(s.streams, old.num)
		}
	}
}

// newStreamLocked makes a stream and makes it resumable.
func (s *session) newStreamLocked(standalone, jsonOnly bool) *stream {
	s.nextStream++
	st := newStream(s.nextStream, standalone, jsonOnly, s.h.cfg.ReplayBufferEvents, s.h.budget)
	s.streams[st.num] = st
	return st
}

// standaloneLocked picks the stream for a message that belongs to no
// request: the newest GET stream being read, else the newest one kept, else
// a new one that the next GET will read.
func (s *session) standaloneLocked() *stream {
	var kept *stream
	for i := len(s.standalone) - 1; i >= 0; i-- {
		st := s.standalone[i]
		if st.isAttached() {
			return st
		}
		if kept == nil {
			kept = st
		}
	}
	if kept != nil {
		return kept
	}
	return s.addStandaloneLocked()
}

// addStandaloneLocked makes a standalone stream, dropping the oldest one
// no GET reads when there are maxStandalone already. It returns nil when
// all of them are being read.
func (s *session) addStandaloneLocked() *stream {
	if len(s.standalone) >= maxStandalone {
		i := 0
		for i < len(s.standalone) && s.standalone[i].isAttached() {
			i++
		}
		if i == len(s.standalone) {
			return nil
		}
		old := s.standalone[i]
		old.end(endClosed)
		delete(s.streams, old.num)
		s.standalone = append(s.standalone[:i], s.standalone[i+1:]...)
	}
	st := s.newStreamLocked(true, false)
	s.standalone = append(s.standalone, st)
	return st
}

// forget drops a stream whose response reached the client, or that ended.
func (s *session) forget(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streams[st.num] == st {
		delete(s.streams, st.num)
	}
	if i := slices.Index(s.retained, st); i >= 0 {
		s.retained = slices.Delete(s.retained, i, i+1)
	}
}

// Close ends the session's transport: Read returns io.EOF, Write
// ErrClosed, every stream ends (its consumer still writes what its log
// holds), and the session's id is forgotten (requests with it get 404).
func (s *session) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		if s.reason == endNone {
			s.reason = endClosed
		}
		reason := s.reason
		if s.idle != nil {
			s.idle.Stop()
			s.idle = nil
		}
		var all []*stream
		for _, st := range s.streams {
			all = append(all, st)
		}
		for _, st := range s.exchanges {
			all = append(all, st)
		}
		s.mu.Unlock()
		close(s.done)
		for _, st := range all {
			st.end(reason)
		}
		s.h.forget(s)
	})
	return nil
}

// closeFor closes the session's MCP session, recording why first.
func (s *session) closeFor(reason endReason) {
	s.mu.Lock()
	if s.reason == endNone {
		s.reason = reason
	}
	s.mu.Unlock()
	s.sess.Close()
}

// closeReason returns why the session closed.
func (s *session) closeReason() endReason {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// Drain waits until every stream being read has written what it holds,
// or done is closed.
func (s *session) Drain(done <-chan struct{}) {
	s.mu.Lock()
	var all []*stream
	for _, st := range s.streams {
		all = append(all, st)
	}
	s.mu.Unlock()
	for _, st := range all {
		st.drained(done)
	}
}

// begin marks an HTTP request in progress: the session is not idle. The
// idle timer is left as it is: expire finds the session busy.
func (s *session) begin() {
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
}

// end marks an HTTP request done. The idle expiry is re-armed lazily: the
// last request to end records when, and arms a timer only when none is
// armed; a timer that fires early (requests came and went since it was
// armed) re-arms itself for the rest of the timeout. So a busy session
// makes no timer per request, and it still expires exactly the timeout
// after its last request ended.
func (s *session) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.active > 0 || s.closed {
		return
	}
	s.lastEnd = s.h.clock.Now()
	if s.idle == nil {
		s.armIdleLocked(s.idleTimeout())
	}
}

// idleTimeout is transport.sessionIdleTimeoutMs.
func (s *session) idleTimeout() time.Duration {
	return s.h.cfg.SessionIdleTimeout
}

// armIdleLocked arms the idle timer to fire after d.
func (s *session) armIdleLocked(d time.Duration) {
	s.idleGen++
	gen := s.idleGen
	s.idle = s.h.clock.AfterFunc(d, func() { s.expire(gen) })
}

// expire runs when the idle timer of generation gen fires: it closes the
// session if it has stayed idle for the whole timeout since its last
// request ended, re-arms the timer for the rest when a request ended
// since, and leaves it unarmed while a request is in progress (the end of
// the last one arms it again).
func (s *session) expire(gen uint64) {
	s.mu.Lock()
	if s.closed || gen != s.idleGen {
		s.mu.Unlock()
		return
	}
	s.idle = nil
	if s.active > 0 {
		s.mu.Unlock()
		return
	}
	if rest := s.lastEnd.Add(s.idleTimeout()).Sub(s.h.clock.Now()); rest > 0 {
		s.armIdleLocked(rest)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.h.log.Info("closing an idle HTTP session", "connectionCorrelationId", s.sess.CorrelationID(),
		"sessionIdleTimeoutMs", s.h.cfg.SessionIdleTimeout.Milliseconds())
	s.closeFor(endClosed)
}

// cancelExchange ends the stream of request id, which the client
// cancelled: no response will come for it.
func (s *session) cancelExchange(id jsonrpc.ID) {
	s.mu.Lock()
	st := s.exchanges[id]
	if st != nil && st != s.anon {
		delete(s.exchanges, id)
		delete(s.streams, st.num)
	} else {
		st = nil
	}
	s.mu.Unlock()
	if st != nil {
		st.end(endCancelled)
	}
}

// admin reports whether the session was opened with the admin token (and
// so every request of it carries that token).
func (s *session) admin() bool { return s.cred == credAdmin }

// primes reports whether the session's event streams begin with a priming
// event: from protocol revision 2025-11-25 on, which defines it (older
// clients may take its empty data for a message).
func (s *session) primes() bool { return s.sess.ProtocolVersion() >= mcp.Version20251125 }

// closeStream cuts the client's connection to the stream of request id
// and reports whether there was such a stream.
func (s *session) closeStream(id jsonrpc.ID) bool {
	s.mu.Lock()
	st := s.exchanges[id]
	s.mu.Unlock()
	if st == nil {
		return false
	}
	st.cut()
	return true
}
