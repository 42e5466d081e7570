package streamable

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// post serves POST: one JSON-RPC message (or a batch, when the session's
// protocol revision has them). Without Mcp-Session-Id the message must be
// initialize, which opens a session.
func (h *Handler) post(w http.ResponseWriter, r *http.Request, cred int) {
	if !isJSON(r.Header.Get("Content-Type")) {
		h.fail(w, nil, http.StatusUnsupportedMediaType, core.CodeInvalidArgument, "the body must be one JSON-RPC message "+
			"sent as Content-Type: application/json, not "+clipText(r.Header.Get("Content-Type")))
		return
	}
	if !acceptsAnswers(r) {
		h.fail(w, nil, http.StatusNotAcceptable, core.CodeInvalidArgument, "a POST is answered as application/json or "+
			"text/event-stream: send Accept: application/json, text/event-stream")
		return
	}
	var s *session
	if r.Header.Get(headerSession) != "" {
		if s = h.lookup(w, r, cred); s == nil {
			return
		}
		s.begin()
		defer s.end()
	}
	if h.isDraining() {
		h.fail(w, s, http.StatusServiceUnavailable, core.CodeResourceExhausted, "the server is shutting down; "+
			"this message was not read")
		return
	}
	body, ok := h.readBody(w, r, s)
	if !ok {
		return
	}
	// The message is decoded here, once: the session's connection routes
	// what this POST decoded (a batch, and a message that could not be
	// decoded, it decodes itself, to answer them).
	in := jsonrpc.Incoming{Data: bytes.Trim(body, " \t\r\n")}
	batch := len(in.Data) > 0 && in.Data[0] == '['
	var derr *jsonrpc.DecodeError
	if !batch {
		in.Message, derr = h.decode(in.Data)
	}
	if s != nil {
		h.deliver(w, r, s, in, derr, false)
		return
	}
	// No session yet: only initialize may come.
	if batch {
		h.fail(w, nil, http.StatusBadRequest, core.CodeInvalidArgument, "a batch cannot open a session: send "+
			"initialize on its own, without Mcp-Session-Id, then use the id its response carries")
		return
	}
	if derr != nil {
		h.failID(w, nil, http.StatusBadRequest, core.CodeInvalidArgument, nil, derr.Err.Code, derr.Err.Message)
		return
	}
	if req, isReq := in.Message.(*jsonrpc.Request); !isReq || req.Method != mcp.MethodInitialize || statelessHeader(r) {
		h.postStateless(w, r, cred, in)
		return
	}
	tools, ok := h.sessionTools(w, r)
	if !ok {
		return
	}
	s, status, why := h.newSession(cred, tools)
	if s == nil {
		h.fail(w, nil, status, core.CodeResourceExhausted, why)
		return
	}
	s.begin()
	defer s.end()
	h.deliver(w, r, s, in, nil, true)
}

// decode decodes one message (not a batch) with a decoder of the pool.
// The body was read for this message alone: what the message holds
// (params) is a slice of it, not a copy.
func (h *Handler) decode(data []byte) (jsonrpc.Message, *jsonrpc.DecodeError) {
	d, _ := h.decoders.Get().(*jsonrpc.Decoder)
	if d == nil {
		d = new(jsonrpc.Decoder)
	}
	msg, derr := d.DecodeInPlace(data)
	h.decoders.Put(d)
	return msg, derr
}

// isJSON reports whether a Content-Type names application/json.
func isJSON(contentType string) bool {
	if strings.EqualFold(contentType, "application/json") {
		return true // the common case, without mime.ParseMediaType's map
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// readBody reads the request body within transport.maxMessageBytes and the
// read timeout (readTimeoutMs from the start of the request under Serve,
// from the start of the body when the Handler is mounted elsewhere). It
// writes 413 or 400 and reports false when it cannot.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, s *session) ([]byte, bool) {
	tooLarge := func() {
		h.fail(w, s, http.StatusRequestEntityTooLarge, core.CodeResourceExhausted, "the body is larger than "+
			strconv.Itoa(h.maxBody)+" bytes (transport.maxMessageBytes); send smaller messages")
	}
	if r.ContentLength > int64(h.maxBody) {
		tooLarge()
		return nil, false
	}
	// Under Serve, the server's ReadTimeout already bounds the body, and
	// net/http lifts it when the body ends; mounted in another server, the
	// Handler sets the deadline itself.
	var rc *http.ResponseController
	if connOf(r.Context()) == nil {
		rc = http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(h.readTimeout))
	}
	body, err := readSized(http.MaxBytesReader(w, r.Body, int64(h.maxBody)), r.ContentLength)
	if rc != nil {
		_ = rc.SetReadDeadline(time.Time{})
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		tooLarge()
		return nil, false
	case err != nil:
		h.fail(w, s, http.StatusBadRequest, core.CodeInvalidArgument, "could not read the whole body ("+err.Error()+
			"); send the message again")
		return nil, false
	}
	w.Header().Del("Connection") // read whole: the connection may be kept (see closeUnlessRead)
	return body, true
}

// readSized reads rd to its end. When the body's length is known (n >= 0,
// and within the limit rd enforces), it is read into one buffer of that
// length plus the byte that tells the end: no buffer grows and nothing is
// copied. Otherwise it reads as io.ReadAll does.
func readSized(rd io.Reader, n int64) ([]byte, error) {
	if n < 0 {
		return io.ReadAll(rd)
	}
	buf := make([]byte, 0, n+1)
	for {
		m, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) { // longer than announced: let the reader (and its limit) say what it is
			rest, err := io.ReadAll(rd)
			return append(buf, rest...), err
		}
	}
}

// deliver hands a message of session s to its connection and answers the
// POST: 202 for notifications and responses, the answer (JSON or an event
// stream) for anything that gets one. in.Message is the decoded message
// (nil for a batch, or when decoding failed with derr).
func (h *Handler) deliver(w http.ResponseWriter, r *http.Request, s *session, in jsonrpc.Incoming, derr *jsonrpc.DecodeError, init bool) {
	if len(in.Data) > 0 && in.Data[0] == '[' {
		h.deliverBatch(w, r, s, in.Data)
		return
	}
	if derr != nil {
		if derr.ID.IsZero() {
			h.exchange(w, r, s, in, exchangeSpec{anon: true, status: http.StatusBadRequest})
		} else {
			h.exchange(w, r, s, in, exchangeSpec{id: derr.ID, status: http.StatusBadRequest})
		}
		return
	}
	switch m := in.Message.(type) {
	case *jsonrpc.Request:
		h.exchange(w, r, s, in, exchangeSpec{id: m.ID, status: http.StatusOK, init: init})
	case *jsonrpc.Notification:
		h.accept(w, r, s, in, cancelledIDs(m))
	default: // a response to a request of the server
		h.accept(w, r, s, in, nil)
	}
}

// deliverBatch hands a batch to the connection. It is answered as one
// message whose answer has no id, unless it holds only notifications and
// responses and the session allows batches (then 202).
func (h *Handler) deliverBatch(w http.ResponseWriter, r *http.Request, s *session, data []byte) {
	elems, derr := jsonrpc.DecodeBatch(data)
	if derr != nil {
		h.exchange(w, r, s, jsonrpc.Incoming{Data: data}, exchangeSpec{anon: true, status: http.StatusBadRequest})
		return
	}
	answered := len(elems) == 0 || !s.sess.BatchAllowed()
	var ids, cancels []jsonrpc.ID
	for _, raw := range elems {
		m, e := jsonrpc.DecodeElement(raw)
		switch m := m.(type) {
		case *jsonrpc.Request:
			answered = true
			ids = append(ids, m.ID)
		case *jsonrpc.Notification:
			cancels = append(cancels, cancelledIDs(m)...)
		}
		if e != nil {
			answered = true
			if !e.ID.IsZero() {
				ids = append(ids, e.ID)
			}
		}
	}
	if !answered {
		h.accept(w, r, s, jsonrpc.Incoming{Data: data}, cancels)
		return
	}
	h.exchange(w, r, s, jsonrpc.Incoming{Data: data}, exchangeSpec{anon: true, ids: ids, status: http.StatusOK})
}

// cancelledIDs returns the request id a notifications/cancelled names.
func cancelledIDs(n *jsonrpc.Notification) []jsonrpc.ID {
	if n.Method != mcp.NotifyCancelled {
		return nil
	}
	var id jsonrpc.ID
	if raw := jsontext.Member(n.Params, "requestId"); raw == nil || json.Unmarshal(raw, &id) != nil {
		return nil
	}
	return []jsonrpc.ID{id}
}

// accept hands over a message that gets no answer and writes 202. The
// requests it cancels get no response: their POSTs end.
func (h *Handler) accept(w http.ResponseWriter, r *http.Request, s *session, in jsonrpc.Incoming, cancels []jsonrpc.ID) {
	if !s.push(r.Context(), in) {
		h.gone(w, s, nil)
		return
	}
	for _, id := range cancels {
		s.cancelExchange(id)
	}
	w.WriteHeader(http.StatusAccepted)
}

// exchangeSpec says how a message that gets an answer is routed.
type exchangeSpec struct {
	id     jsonrpc.ID   // the answer's id (keyed exchanges)
	anon   bool         // the answer has no id: a batch, or a message whose id could not be read
	ids    []jsonrpc.ID // a batch's request ids, whose messages come to the same stream
	status int          // the HTTP status of a JSON answer
	init   bool         // an initialize that opened the session
	// stateless: a request of the stateless revision; a JSON error
	// answer gets the HTTP status of its code.
	stateless bool
}

// exchange hands a message that gets an answer to the connection, with a
// stream that collects what belongs to it, and answers the POST from that
// stream.
func (h *Handler) exchange(w http.ResponseWriter, r *http.Request, s *session, in jsonrpc.Incoming, x exchangeSpec) {
	if x.anon { // one at a time: such answers are told apart by order only
		select {
		case s.anonSlot <- struct{}{}:
		case <-s.done:
			h.gone(w, s, nil)
			return
		case <-r.Context().Done():
			return
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		if x.anon {
			<-s.anonSlot
		}
		h.gone(w, s, nil)
		return
	}
	if _, dup := s.exchanges[x.id]; dup && !x.anon {
		s.mu.Unlock()
		h.failID(w, s, http.StatusBadRequest, core.CodeInvalidArgument, &x.id, jsonrpc.CodeInvalidRequest,
			"Invalid Request: id "+jsontext.Clip(x.id.String(), jsontext.MaxEcho)+
				" is already used by a request still in flight on this session; use a new id for each request")
		return
	}
	st := s.newStreamLocked(false, h.cfg.ResponseMode == ResponseJSON)
	if x.anon {
		s.anon = st
		for _, id := range x.ids {
			if _, taken := s.exchanges[id]; !taken {
				s.exchanges[id] = st
			}
		}
	} else {
		s.exchanges[x.id] = st
	}
	s.mu.Unlock()
	// The POST is the stream's consumer from the start: what the request
	// sends before its response waits for this client rather than
	// overflowing the log, and a server-side close (CloseStream) finds it.
	gen := st.attach(0)
	if !s.push(r.Context(), in) {
		st.detach(gen)
		s.mu.Lock()
		if x.anon && s.anon == st {
			s.releaseAnonLocked()
		} else if !x.anon && s.exchanges[x.id] == st {
			delete(s.exchanges, x.id)
		}
		delete(s.streams, st.num)
		s.mu.Unlock()
		if r.Context().Err() == nil {
			h.gone(w, s, idOf(x))
		}
		return
	}
	h.answer(w, r, s, st, gen, x)
}

func idOf(x exchangeSpec) *jsonrpc.ID {
	if x.anon {
		return nil
	}
	return &x.id
}

// answer writes the answer of an exchange: one JSON body when the response
// comes first (or always, in json mode), else an event stream.
// gen is the POST's consumer generation.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, s *session, st *stream, gen uint64, x exchangeSpec) {
	ctx := r.Context()
	if x.init {
		defer h.afterInit(s)
	}
	if h.cfg.ResponseMode != ResponseSSE {
		ev, ended, ok, cut := st.first(ctx, gen)
		switch {
		case cut: // the server closed the stream before anything came: the client resumes with GET
			if x.init {
				w.Header().Set(headerSession, s.id)
			}
			startEvents(w)
			if s.primes() {
				_ = st.writePriming(w, 0, h.writeTimeout)
			}
			return
		case !ok && ended == endNone:
			st.detach(gen)
			return // the client went away; the stream stays for resumption
		case !ok:
			st.detach(gen)
			h.unanswered(w, s, st, ended, idOf(x))
			return
		case ev.response || st.jsonOnly:
			if x.init && s.sess.State() != mcp.StateStarting {
				w.Header().Set(headerSession, s.id)
			}
			status := x.status
			if x.stateless {
				status = answerStatus(ev.data)
			}
			h.writeJSON(w, status, ev.data)
			st.detach(gen)
			s.forget(st) // a JSON answer has no event ids: nothing to resume
			return
		}
	}
	if x.init {
		w.Header().Set(headerSession, s.id)
	}
	startEvents(w)
	_ = st.consume(ctx, w, gen, 0, s.primes(), h.writeTimeout)
	h.settle(s, st)
}

// inlineBody is the size of the buffer net/http fills before it writes
// anything of a response (its bufferBeforeChunkingSize): a body that fits
// is only copied by Write, and net/http sets its Content-Length itself
// when the handler returns.
const inlineBody = 2048

// writeJSON writes a JSON answer: status, the JSON headers and data (one
// message, no trailing newline) with a newline, in one Write. A body that
// fits net/http's buffer is written by net/http when the handler returns,
// with its Content-Length; a larger one gets its Content-Length here (so
// it is not chunked) and is written and flushed under the write deadline.
func (h *Handler) writeJSON(w http.ResponseWriter, status int, data []byte) {
	hdr := w.Header()
	vals := make([]string, 2) // one allocation for both header values
	vals[0], vals[1] = "application/json", "no-store"
	hdr["Content-Type"], hdr["Cache-Control"] = vals[0:1:1], vals[1:2:2]
	body := withNewline(data)
	if len(body) <= inlineBody {
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(h.writeTimeout))
	if _, err := w.Write(body); err == nil {
		_ = rc.Flush()
	}
	_ = rc.SetWriteDeadline(time.Time{})
}

// withNewline returns data followed by a newline: data extended by one
// byte when the byte after it already is the newline (a message the Conn
// wrote, whose newline the session trimmed), else a copy.
func withNewline(data []byte) []byte {
	if len(data) < cap(data) && data[:len(data)+1][len(data)] == '\n' {
		return data[:len(data)+1]
	}
	return append(data[:len(data):len(data)], '\n')
}

// startEvents writes the headers of an event stream.
func startEvents(w http.ResponseWriter) {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache, no-store")
	hdr.Set("X-Accel-Buffering", "no") // proxies must not hold events back
	w.WriteHeader(http.StatusOK)
	_ = http.NewResponseController(w).Flush()
}

// settle files a request stream after a consumer stopped: forgotten when
// it ended without a response; kept for resumption when it has its
// response (the client may have lost it even if the write succeeded: a
// dropped connection takes writes until it is found dead); left as it is
// while its request runs.
func (h *Handler) settle(s *session, st *stream) {
	ended := st.status()
	switch {
	case st.standalone:
	case ended == endResponse:
		s.retain(st)
	case ended != endNone:
		s.forget(st)
	}
}

// afterInit closes a session whose initialize failed: the client never
// learns its id.
func (h *Handler) afterInit(s *session) {
	if s.sess.State() == mcp.StateStarting {
		s.closeFor(endClosed)
	}
}

// unanswered ends a POST whose request will get no response.
func (h *Handler) unanswered(w http.ResponseWriter, s *session, st *stream, ended endReason, id *jsonrpc.ID) {
	s.forget(st)
	switch ended {
	case endCancelled:
		w.WriteHeader(http.StatusNoContent)
	default:
		h.gone(w, s, id)
	}
}

// gone answers a request of a session that closed under it: 503 when the
// server is shutting down, 404 otherwise (the client should start a new
// session).
func (h *Handler) gone(w http.ResponseWriter, s *session, id *jsonrpc.ID) {
	if s.closeReason() == endShutdown {
		h.failID(w, s, http.StatusServiceUnavailable, core.CodeResourceExhausted, id, codeUnavailable,
			"the server shut down before answering; try again later")
		return
	}
	h.failID(w, s, http.StatusNotFound, core.CodeNotFound, id, jsonrpc.CodeInvalidRequest,
		"the session ended before answering (it was deleted, expired or shut down); start a new session with initialize")
}

// get serves GET: the session's event stream for messages that belong to
// no request, or, with Last-Event-ID, the resumption of any of its
// streams after that event.
func (h *Handler) get(w http.ResponseWriter, r *http.Request, cred int) {
	if h.statelessOnly(w, r, "GET opens no event stream in the stateless revision: open a subscriptions/listen request instead") {
		return
	}
	if !acceptable(r, "text/event-stream") {
		h.fail(w, nil, http.StatusNotAcceptable, core.CodeInvalidArgument, "GET opens an event stream: send Accept: text/event-stream")
		return
	}
	s := h.lookup(w, r, cred)
	if s == nil {
		return
	}
	if h.isDraining() {
		h.fail(w, s, http.StatusServiceUnavailable, core.CodeResourceExhausted, "the server is shutting down")
		return
	}
	s.begin()
	defer s.end()
	st, after, status, msg := s.openStream(r.Header.Get(headerLastEventID))
	if st == nil {
		h.fail(w, s, status, core.CodeInvalidArgument, msg)
		return
	}
	startEvents(w)
	_ = st.consume(r.Context(), w, st.attach(after), after, s.primes(), h.writeTimeout)
	h.settle(s, st)
}

// openStream picks the stream a GET reads and the last event its client
// has: the stream Last-Event-ID names; else a kept standalone stream
// nobody reads; else a new one. On failure it returns the HTTP status and
// why.
func (s *session) openStream(lastEventID string) (*stream, int64, int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, 0, http.StatusNotFound, "the session has ended; start a new one with initialize"
	}
	if lastEventID != "" {
		num, seq, ok := parseEventID(lastEventID)
		if !ok {
			return nil, 0, http.StatusBadRequest, "Last-Event-ID " + clipText(lastEventID) +
				" is not an event id of this server (<stream>-<sequence>); send an id from an event, or none"
		}
		if st := s.streams[num]; st != nil {
			if seq > st.lastIssued() {
				// An id this stream never issued: resuming after it would
				// wait for events the client cannot have seen. Replay what
				// is kept from the start instead.
				seq = 0
			}
			return st, seq, 0, ""
		}
		// That stream is no longer kept: nothing can be replayed, serve a
		// fresh stream.
	}
	for _, st := range s.standalone {
		if !st.isAttached() {
			return st, st.cursor(), 0, ""
		}
	}
	if st := s.addStandaloneLocked(); st != nil {
		return st, 0, 0, ""
	}
	return nil, 0, http.StatusConflict, "this session already has " + strconv.Itoa(maxStandalone) +
		" open GET streams; close one before opening another"
}

// delete serves DELETE: the session ends as a server shutdown ends it
// (requests cancelled, handlers waited for), then 204.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request, cred int) {
	if h.statelessOnly(w, r, "there is no session to DELETE in the stateless revision") {
		return
	}
	s := h.lookup(w, r, cred)
	if s == nil {
		return
	}
	s.closeFor(endClosed)
	select {
	case <-s.finished:
		w.WriteHeader(http.StatusNoContent)
	case <-r.Context().Done():
	}
}
