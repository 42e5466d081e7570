package sharedstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/store"
)

// StreamName is the JetStream stream of state events.
const StreamName = "SHARED_STATE"

// SubjectPrefix starts every state event's subject: state.{domain}.
const SubjectPrefix = "state."

// Error codes of the shared state.
const (
	// CodeUnavailable: the event could not be published (NATS unreachable,
	// no quorum) or the local store did not apply it in time. Retryable.
	CodeUnavailable core.Code = "SHARED_STATE_UNAVAILABLE"
	// CodeContended: a decided write lost its compare-and-set to other
	// machines' writes more times than it retries. Retryable.
	CodeContended core.Code = "SHARED_STATE_CONTENDED"
)

// DefaultWaitTimeout bounds how long a write waits for the local store
// to apply its event when Options.WaitTimeout is zero.
const DefaultWaitTimeout = 30 * time.Second

// DefaultDedupWindow is the stream's duplicate window when
// Options.DedupWindow is zero.
const DefaultDedupWindow = 2 * time.Minute

// maxDecideAttempts bounds the compare-and-set retries of Decide.
const maxDecideAttempts = 64

// Handler applies the data of one event kind to the local store. It must
// be deterministic: the same data on the same state writes the same rows
// on every node. Its store writes must use the ctx it is given (they join
// the event's transaction). It returns the event's outcome (JSON-encoded
// for the writer), or a domain error, which is the outcome too (nothing
// is written). A storage failure (STORE_BUSY, STORAGE_*, TIMEOUT) is not
// an outcome: the event is applied again.
type Handler func(ctx context.Context, data json.RawMessage) (any, error)

// Options configure Open.
type Options struct {
	// JS is the JetStream context (natsengine.Conn.JS).
	JS jetstream.JetStream
	// DB is this node's local store.
	DB *store.DB
	// Replicas of the stream (nats.replicas); 0 means 1.
	Replicas int
	// IDs names events (their JetStream message id, for dedup). Nil means
	// UUID v4.
	IDs core.IDGenerator
	// DedupWindow is the stream's duplicate window: a publish repeated
	// with the same event id within it is stored once. It is also the
	// longest a write sends its event again (from its first attempt), so
	// that no repeat can land after the window and be stored twice; give
	// it at least the longest deadline a write can have. Zero means
	// DefaultDedupWindow.
	DedupWindow time.Duration
	// WaitTimeout bounds how long a write waits for the local store to
	// apply its event; zero means DefaultWaitTimeout.
	WaitTimeout time.Duration
	// Logger reports apply failures; nil discards them.
	Logger *slog.Logger
}

// Replicator publishes state events and applies the stream to the local
// store. Build it with Open, register the domains' handlers (the
// NewMemory, NewReservations, … constructors do), then Start it.
type Replicator struct {
	js      jetstream.JetStream
	stream  jetstream.Stream
	db      *store.DB
	ids     core.IDGenerator
	wait    time.Duration
	dedup   time.Duration // the stream's duplicate window: the bound of a write's repeats
	log     *slog.Logger
	started bool

	handlers map[string]Handler // by event kind; written before Start only

	mu      sync.Mutex
	applied uint64        // guarded by mu: last sequence this node knows applied
	changed chan struct{} // guarded by mu: closed (and replaced) when applied moves
	lastErr string        // guarded by mu: the last apply failure, "" once one succeeds

	cc     jetstream.ConsumeContext
	cancel context.CancelFunc
}

// envelope is one state event as stored in the stream.
type envelope struct {
	ID   string          `json:"id"`
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// outcome is what applying an event produced, as stored in the local
// store for the writer.
type outcome struct {
	Value json.RawMessage `json:"value,omitempty"`
	Error *core.Error     `json:"error,omitempty"`
}

// Open creates the stream of state events (or adopts the existing one)
// and returns a Replicator that is not yet applying it.
func Open(ctx context.Context, opts Options) (*Replicator, error) {
	if opts.JS == nil || opts.DB == nil {
		return nil, errors.New("sharedstate: Options.JS and Options.DB are required")
	}
	if opts.IDs == nil {
		opts.IDs = &core.UUIDGenerator{}
	}
	if opts.WaitTimeout <= 0 {
		opts.WaitTimeout = DefaultWaitTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.DedupWindow <= 0 {
		opts.DedupWindow = DefaultDedupWindow
	}
	cfg := jetstream.StreamConfig{
		Name: StreamName, Subjects: []string{SubjectPrefix + ">"}, Storage: jetstream.FileStorage,
		Replicas: max(opts.Replicas, 1), Duplicates: opts.DedupWindow, Discard: jetstream.DiscardNew,
	}
	st, err := ensureStream(ctx, opts.JS, cfg)
	if err != nil {
		return nil, err
	}
	return &Replicator{js: opts.JS, stream: st, db: opts.DB, ids: opts.IDs, wait: opts.WaitTimeout, dedup: opts.DedupWindow, log: opts.Logger,
		handlers: map[string]Handler{}, changed: make(chan struct{})}, nil
}

// ensureStream creates the stream or adopts an existing one, retrying a
// cluster that is still forming until ctx ends.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	for {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		st, err := js.CreateOrUpdateStream(actx, cfg)
		cancel()
		if err == nil {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("sharedstate: stream %s (subjects %s>, file storage, %d replicas) cannot be created or adopted — check that JetStream is reachable, delete or fix a conflicting stream, or change nats.replicas: %w",
				cfg.Name, SubjectPrefix, cfg.Replicas, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Handle registers the handler of an event kind ("memory.put", …). Call
// it before Start.
func (r *Replicator) Handle(kind string, h Handler) {
	if r.started {
		panic("sharedstate: Handle after Start")
	}
	r.handlers[kind] = h
}

// Start reads the sequence the local store applied last and applies
// every later event of the stream, in order, as the server pushes them,
// until Close.
func (r *Replicator) Start(ctx context.Context) error {
	seq, err := r.db.AppliedSeq(ctx, StreamName)
	if err != nil {
		return fmt.Errorf("sharedstate: reading the local store's applied sequence: %w", err)
	}
	r.mu.Lock()
	r.applied = seq
	r.mu.Unlock()
	cons, err := r.follow(ctx, seq+1)
	if err != nil {
		return fmt.Errorf("sharedstate: following stream %s from sequence %d: %w", StreamName, seq+1, err)
	}
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cc, err := cons.Consume(func(m jetstream.Msg) { r.applyMsg(actx, m) },
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) { r.setErr("following the stream: " + err.Error()) }))
	if err != nil {
		cancel()
		return fmt.Errorf("sharedstate: following stream %s: %w", StreamName, err)
	}
	r.started, r.cc, r.cancel = true, cc, cancel
	return nil
}

// follow creates the consumer that reads the stream from seq on. A
// request the cluster does not answer (lost while it elects a leader) is
// made again after 5 s, within ctx, as ensureStream does, instead of
// waiting for ctx alone.
func (r *Replicator) follow(ctx context.Context, seq uint64) (jetstream.Consumer, error) {
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: seq}
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cons, err := r.stream.OrderedConsumer(actx, cfg)
		cancel()
		if err == nil {
			return cons, nil
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Close stops applying events. Writes waiting for their event fail.
func (r *Replicator) Close() {
	if r.cc != nil {
		r.cancel()
		r.cc.Stop()
	}
}

func (r *Replicator) setErr(msg string) {
	r.mu.Lock()
	r.lastErr = msg
	r.mu.Unlock()
}

// applyMsg applies one delivered event, retrying storage failures until
// it is applied or the replicator closes: the stream is applied in order,
// so nothing after it may be applied first.
func (r *Replicator) applyMsg(ctx context.Context, m jetstream.Msg) {
	md, err := m.Metadata()
	if err != nil {
		r.setErr("reading an event's metadata: " + err.Error())
		return
	}
	seq := md.Sequence.Stream
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, 2*time.Second) {
		err := r.applyOne(ctx, seq, m.Data())
		if err == nil {
			break
		}
		r.setErr(fmt.Sprintf("applying event %d: %v", seq, err))
		r.log.Warn("shared state: cannot apply an event; retrying", "seq", seq, "error", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
	r.mu.Lock()
	if seq > r.applied {
		r.applied = seq
		close(r.changed)
		r.changed = make(chan struct{})
	}
	r.lastErr = ""
	r.mu.Unlock()
}

// applyOne applies the event at seq to the local store (nothing when the
// store applied it already, from this or another process).
func (r *Replicator) applyOne(ctx context.Context, seq uint64, raw []byte) error {
	var env envelope
	decodeErr := json.Unmarshal(raw, &env)
	var h Handler
	if decodeErr == nil {
		if h = r.handlers[env.Kind]; h == nil {
			return fmt.Errorf("event kind %q is unknown to this mcprt (a newer version wrote it?): upgrade this node", env.Kind)
		}
	}
	_, err := r.db.ApplyEvent(ctx, StreamName, seq, func(actx context.Context) ([]byte, bool, error) {
		if decodeErr != nil {
			out, _ := json.Marshal(outcome{Error: core.Errorf(core.CodeInternal, "shared-state event %d is not a valid event: %v", seq, decodeErr)})
			return out, true, nil
		}
		v, herr := h(actx, env.Data)
		if herr != nil {
			if transient(herr) {
				return nil, false, herr
			}
			out, err := json.Marshal(outcome{Error: core.AsError(herr)})
			return out, true, err
		}
		val, err := json.Marshal(v)
		if err != nil {
			return nil, false, fmt.Errorf("encoding the outcome of %s: %w", env.Kind, err)
		}
		out, err := json.Marshal(outcome{Value: val})
		return out, false, err
	})
	return err
}

// transient reports whether err is a failure of the local store rather
// than the event's outcome.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ce *core.Error
	if !errors.As(err, &ce) {
		return false
	}
	switch ce.Code {
	case store.CodeBusy, core.CodeTimeout, "STORAGE_FULL", "STORAGE_IO_ERROR", "STORAGE_READ_ONLY", "STORAGE_GONE":
		return true
	}
	return false
}

// Applied returns the last stream sequence this node has applied.
func (r *Replicator) Applied() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.applied
}

// WaitApplied returns once the local store has applied seq, or fails
// when ctx ends or the wait timeout passes.
func (r *Replicator) WaitApplied(ctx context.Context, seq uint64) error {
	timer := time.NewTimer(r.wait)
	defer timer.Stop()
	for {
		r.mu.Lock()
		applied, ch, lastErr := r.applied, r.changed, r.lastErr
		r.mu.Unlock()
		if applied >= seq {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return core.Errorf(core.CodeTimeout, "shared state: waiting for the local store to apply event %d (applied %d): %w", seq, applied, context.Cause(ctx))
		case <-timer.C:
			msg := fmt.Sprintf("shared state: the local store did not apply event %d within %s (applied %d)", seq, r.wait, applied)
			if lastErr != "" {
				msg += "; last failure: " + lastErr
			}
			return core.NewError(CodeUnavailable, msg+"; check health's sharedState and retry").WithRetryable(true)
		}
	}
}

// errStale is a decided write whose expected subject sequence was not
// the last one any more.
var errStale = errors.New("shared state moved on")

// Do publishes an event of kind on subject state.{domain} and waits until
// the local store has applied it; it then decodes the event's outcome
// into out (nil to ignore it) or returns the outcome's error. Events of
// one stream are applied in stream order on every node, so concurrent
// Do calls from any machines are decided in that order, once.
func (r *Replicator) Do(ctx context.Context, domain, kind string, data, out any) error {
	return r.publish(ctx, domain, kind, data, out, nil)
}

// Decide is a write decided against the local state: it waits until the
// local store has every event of state.{domain}, calls decide (which
// reads the local store and returns the event data, its decided outcome),
// and publishes the event only if no event of the domain came in between
// (JetStream's expected last sequence per subject); otherwise it starts
// again. decide's error is returned as it is.
func (r *Replicator) Decide(ctx context.Context, domain, kind string, decide func(ctx context.Context) (any, error), out any) error {
	for attempt := 0; attempt < maxDecideAttempts; attempt++ {
		last, err := r.lastSubjectSeq(ctx, SubjectPrefix+domain)
		if err != nil {
			return err
		}
		if err := r.WaitApplied(ctx, last); err != nil {
			return err
		}
		data, err := decide(ctx)
		if err != nil {
			return err
		}
		err = r.publish(ctx, domain, kind, data, out, &last)
		if !errors.Is(err, errStale) {
			return err
		}
	}
	return core.Errorf(CodeContended, "shared state: a %s write lost to other machines' writes %d times; retry", kind, maxDecideAttempts).
		WithRetryable(true)
}

func (r *Replicator) lastSubjectSeq(ctx context.Context, subject string) (uint64, error) {
	m, err := r.stream.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, core.Errorf(CodeUnavailable, "shared state: reading the last event of %s: %w; check that NATS is reachable and retry", subject, err).
			WithRetryable(true)
	}
	return m.Sequence, nil
}

func (r *Replicator) publish(ctx context.Context, domain, kind string, data, out any, expect *uint64) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return core.Errorf(core.CodeInternal, "shared state: encoding a %s event: %w", kind, err)
	}
	id := r.ids.NewID()
	body, err := json.Marshal(envelope{ID: id, Kind: kind, Data: raw})
	if err != nil {
		return core.Errorf(core.CodeInternal, "shared state: encoding a %s event: %w", kind, err)
	}
	msg := nats.NewMsg(SubjectPrefix + domain)
	msg.Data = body
	msg.Header.Set(jetstream.MsgIDHeader, id)
	var opts []jetstream.PublishOpt
	if expect != nil {
		opts = append(opts, jetstream.WithExpectLastSequencePerSubject(*expect))
	}
	ack, err := r.publishOnce(ctx, msg, opts)
	if err != nil {
		var apiErr *jetstream.APIError
		if expect != nil && errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
			return errStale
		}
		return core.Errorf(CodeUnavailable, "shared state: publishing a %s event: %w; check that NATS is reachable (health); if the event was stored after all it is applied in order, so read the state before you retry", kind, err).
			WithRetryable(true)
	}
	if err := r.WaitApplied(ctx, ack.Sequence); err != nil {
		return err
	}
	res, found, err := r.db.EventResult(ctx, StreamName, ack.Sequence)
	if err != nil {
		return err
	}
	if !found {
		return core.Errorf(core.CodeInternal, "shared state: the outcome of event %d (%s) is no longer kept; it was applied — read the state to see it", ack.Sequence, kind)
	}
	var oc outcome
	if err := json.Unmarshal(res, &oc); err != nil {
		return core.Errorf(core.CodeInternal, "shared state: decoding the outcome of event %d (%s): %w", ack.Sequence, kind, err)
	}
	if oc.Error != nil {
		return oc.Error
	}
	if out != nil && len(oc.Value) > 0 {
		if err := json.Unmarshal(oc.Value, out); err != nil {
			return core.Errorf(core.CodeInternal, "shared state: decoding the outcome of event %d (%s): %w", ack.Sequence, kind, err)
		}
	}
	return nil
}

// publishOnce publishes msg, sending it again (same event id, so the
// stream stores it once) when an attempt gets no answer within 3 s — a
// leader election or a reconnection — until ctx ends, and never later
// than the stream's duplicate window after the first attempt (a repeat
// past the window would be stored a second time). An answer from
// JetStream (stored, duplicate, or refused) ends it.
func (r *Replicator) publishOnce(ctx context.Context, msg *nats.Msg, opts []jetstream.PublishOpt) (*jetstream.PubAck, error) {
	ctx, cancel := context.WithTimeout(ctx, r.dedup)
	defer cancel()
	for {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		ack, err := r.js.PublishMsg(actx, msg, opts...)
		cancel()
		var apiErr *jetstream.APIError
		if err == nil || errors.As(err, &apiErr) || ctx.Err() != nil {
			return ack, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Status is the replication state of this node, for health.
type Status struct {
	// Applied is the last stream sequence the local store applied; Last
	// is the stream's last sequence; Lag is the difference.
	Applied uint64 `json:"applied"`
	Last    uint64 `json:"last"`
	Lag     uint64 `json:"lag"`
	// Error is the last failure to apply or follow the stream, "" when
	// the last event applied.
	Error string `json:"error,omitempty"`
}

// Status reads the stream's last sequence and reports the local lag.
func (r *Replicator) Status(ctx context.Context) Status {
	r.mu.Lock()
	st := Status{Applied: r.applied, Error: r.lastErr}
	r.mu.Unlock()
	info, err := r.stream.Info(ctx)
	if err != nil {
		if st.Error == "" {
			st.Error = "reading the stream's state: " + err.Error()
		}
		return st
	}
	st.Last = info.State.LastSeq
	if st.Last > st.Applied {
		st.Lag = st.Last - st.Applied
	}
	return st
}
