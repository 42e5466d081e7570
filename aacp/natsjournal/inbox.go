package natsjournal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// catchUpTimeout bounds how long Read waits for the consumer to deliver
// what the stream held when Read was called.
const catchUpTimeout = 30 * time.Second

// Timing of an inbox's consumer. The server sends a heartbeat every
// consumerHeartbeat while a pull waits; two missed ones (a node that held
// the consumer died, a route broke) make the inbox replace its consumer,
// as does a Read that waited stallAfter for a delivery the stream holds.
const (
	consumerHeartbeat = time.Second
	stallAfter        = 3 * time.Second
)

// inbox is a journal.Inbox on an ephemeral consumer of every channel into
// one receiver (aacp.ch.{receiver}.*). The consumer pushes new messages
// as they are stored, from any machine, and each one signals Changed.
//
// The inbox keeps the consumer itself, in order: a consumer that stops
// answering (missed heartbeats, deleted, a gap in its delivery sequence)
// is replaced at once by one that starts after the last stream seq
// delivered, created in bounded attempts until one succeeds. (The
// client's ordered consumer does the same with a back-off of up to 10 s
// between attempts of 10 s each, which kept an inbox silent long after a
// cluster node was lost.)
type inbox struct {
	s        *Store
	receiver string
	filter   string
	ch       chan struct{}
	restart  chan struct{}
	done     chan struct{}

	mu        sync.Mutex
	cc        jetstream.ConsumeContext // guarded by mu: the current consumption
	cons      jetstream.Consumer       // guarded by mu: its consumer
	gen       int                      // guarded by mu: its generation
	consSeq   uint64                   // guarded by mu: its last consumer seq delivered
	buf       []jetstream.Msg          // guarded by mu: delivered, not yet passed to Read's fn
	passed    int                      // guarded by mu: transmissions of buf[0] (a pack) already passed to fn
	delivered uint64                   // guarded by mu: highest stream seq delivered
	arrived   chan struct{}            // guarded by mu: closed and replaced at each delivery
	stopOnce  sync.Once
}

// Inbox implements journal.Store.
func (s *Store) Inbox(receiver string) (journal.Inbox, error) {
	if err := envelope.CheckAgentID(receiver); err != nil {
		return nil, err
	}
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	in := &inbox{s: s, receiver: receiver, filter: chanPrefix + token(receiver) + ".*",
		ch: make(chan struct{}, 1), restart: make(chan struct{}, 1), done: make(chan struct{}),
		arrived: make(chan struct{})}
	in.ch <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), consumerTimeout)
	err := in.consume(ctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("nats journal: inbox of %s: %w", receiver, err)
	}
	s.mu.Lock()
	if err := s.check(); err != nil {
		s.mu.Unlock()
		in.stop()
		return nil, err
	}
	s.inboxes[in] = struct{}{}
	s.mu.Unlock()
	go in.supervise()
	return in, nil
}

// consumerTimeout bounds the creation of an inbox's first consumer; each
// attempt has consumerAttempt, since a request sent while the cluster
// elects a leader or a route reconnects may never be answered.
const (
	consumerTimeout = 30 * time.Second
	consumerAttempt = 5 * time.Second
)

// consume creates a consumer that starts after the last stream seq
// delivered and starts consuming it, retrying unanswered or not-ready
// attempts until ctx ends. An attempt that was in fact served leaves an
// ephemeral consumer nobody reads; the server removes it after its
// inactivity threshold.
func (in *inbox) consume(ctx context.Context) error {
	in.mu.Lock()
	from := in.delivered + 1
	in.mu.Unlock()
	cfg := jetstream.ConsumerConfig{
		FilterSubjects: []string{in.filter}, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from,
		AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true, Replicas: 1, InactiveThreshold: time.Minute,
	}
	var cons jetstream.Consumer
	err := retry(ctx, consumerAttempt, func(actx context.Context) error {
		var err error
		cons, err = in.s.chans.CreateConsumer(actx, cfg)
		return err
	})
	if err != nil {
		return fmt.Errorf("create its consumer: %w", err)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	select {
	case <-in.done:
		go deleteConsumer(in.s.chans, cons)
		return errInboxClosed
	default:
	}
	in.gen++
	gen := in.gen
	in.consSeq = 0
	cc, err := cons.Consume(func(m jetstream.Msg) { in.deliver(gen, m) },
		jetstream.PullHeartbeat(consumerHeartbeat), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if replaceOn(err) {
				in.replace(gen)
			}
		}))
	if err != nil {
		return fmt.Errorf("consume: %w", err)
	}
	in.cc, in.cons = cc, cons
	return nil
}

// errInboxClosed ends the creation of a consumer for a closed inbox.
var errInboxClosed = errors.New("the inbox is closed")

// deleteConsumer deletes an ephemeral consumer no longer read (best
// effort: the server removes it after its inactivity threshold anyway).
func deleteConsumer(st jetstream.Stream, cons jetstream.Consumer) {
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	_ = st.DeleteConsumer(ctx, cons.CachedInfo().Name)
}

// replaceOn reports whether a consumption error means the consumer is
// gone or unreachable.
func replaceOn(err error) bool {
	return errors.Is(err, jetstream.ErrNoHeartbeat) || errors.Is(err, jetstream.ErrConsumerDeleted) ||
		errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, nats.ErrNoResponders)
}

// replace asks the supervisor to replace consumer generation gen (0: the
// current one).
func (in *inbox) replace(gen int) {
	in.mu.Lock()
	stale := gen != 0 && gen != in.gen
	in.mu.Unlock()
	if stale {
		return
	}
	select {
	case in.restart <- struct{}{}:
	default:
	}
}

// supervise replaces the consumer when asked, until the inbox stops.
func (in *inbox) supervise() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-in.done
		cancel()
	}()
	for {
		select {
		case <-in.done:
			return
		case <-in.restart:
		}
		in.mu.Lock()
		old, oldCons := in.cc, in.cons
		in.cc, in.cons = nil, nil
		in.mu.Unlock()
		in.s.replaced.Add(1)
		if old != nil {
			old.Stop()
			go deleteConsumer(in.s.chans, oldCons)
		}
		for ctx.Err() == nil {
			err := in.consume(ctx)
			if err == nil || ctx.Err() != nil {
				break
			}
			in.s.log.Warn("aacp nats journal: an inbox's consumer could not be replaced yet; trying again", "agent", in.receiver, "error", err.Error())
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
}

func (in *inbox) deliver(gen int, m jetstream.Msg) {
	md, err := m.Metadata()
	if err != nil {
		return
	}
	in.mu.Lock()
	switch {
	case gen != in.gen:
		in.mu.Unlock()
		return // a replaced consumer's late delivery
	case md.Sequence.Consumer != in.consSeq+1:
		// A gap: the consumer skipped something; replace it from what
		// was delivered.
		in.mu.Unlock()
		in.replace(gen)
		return
	}
	in.consSeq = md.Sequence.Consumer
	if md.Sequence.Stream <= in.delivered {
		in.mu.Unlock()
		return
	}
	in.buf = append(in.buf, m)
	in.delivered = md.Sequence.Stream
	close(in.arrived)
	in.arrived = make(chan struct{})
	in.mu.Unlock()
	select {
	case in.ch <- struct{}{}:
	default:
	}
}

// Read implements journal.Inbox. It first waits until the consumer has
// delivered everything the stream held for the receiver when Read was
// called, so a Read after an Append (from any process) sees it.
func (in *inbox) Read(ctx context.Context, fn func(env *envelope.Envelope) error) error {
	if err := in.s.checkOpen(); err != nil {
		return err
	}
	last, err := in.lastStored(ctx)
	if err != nil {
		return err
	}
	deadline := time.After(catchUpTimeout)
	stall := time.NewTimer(stallAfter)
	defer stall.Stop()
	for {
		in.mu.Lock()
		done, wait := in.delivered >= last, in.arrived
		in.mu.Unlock()
		if done {
			break
		}
		select {
		case <-wait:
			stall.Reset(stallAfter)
		case <-stall.C:
			// The stream holds what the consumer did not deliver: replace it.
			in.replace(0)
			stall.Reset(stallAfter)
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("nats journal: inbox of %s: the consumer did not deliver up to stream seq %d within %v", in.receiver, last, catchUpTimeout)
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		in.mu.Lock()
		if len(in.buf) == 0 {
			in.mu.Unlock()
			return nil
		}
		m, passed := in.buf[0], in.passed
		in.mu.Unlock()
		envs, bad := decodeTransmissions(m.Data())
		if bad {
			in.s.log.Warn("aacp nats journal: skipped an undecodable transmission", "subject", m.Subject())
		}
		md, mdErr := m.Metadata()
		for i := passed; i < len(envs); i++ {
			if err := fn(&envs[i]); err != nil {
				return err
			}
			if mdErr == nil {
				in.s.noteRead([2]string{envs[i].Sender.AgentID, in.receiver}, envs[i].Seq, md.Sequence.Stream)
			}
			in.mu.Lock()
			in.passed = i + 1
			in.mu.Unlock()
		}
		in.pop()
	}
}

// decodeTransmissions decodes the transmissions of a channel message:
// one, or several (a pack). bad reports that some could not be decoded
// (they are left out).
func decodeTransmissions(data []byte) (envs []envelope.Envelope, bad bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var env envelope.Envelope
		err := dec.Decode(&env)
		if err == io.EOF {
			return envs, bad
		}
		if err != nil {
			return envs, true
		}
		if env.Seq == 0 || env.MessageID == "" {
			bad = true
			continue
		}
		envs = append(envs, env)
	}
}

func (in *inbox) pop() {
	in.mu.Lock()
	in.buf[0] = nil
	in.buf = in.buf[1:]
	in.passed = 0
	in.mu.Unlock()
}

// lastStored is the stream seq of the last message into the receiver, 0
// when there is none.
func (in *inbox) lastStored(ctx context.Context) (uint64, error) {
	var m *jetstream.RawStreamMsg
	err := retry(ctx, attemptTimeout, func(actx context.Context) error {
		var err error
		m, err = in.s.chans.GetLastMsgForSubject(actx, in.filter)
		return err
	})
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("nats journal: inbox of %s: read the stream's end: %w", in.receiver, err)
	}
	return m.Sequence, nil
}

func (in *inbox) Changed() <-chan struct{} { return in.ch }

func (in *inbox) stop() {
	in.stopOnce.Do(func() {
		close(in.done)
		in.mu.Lock()
		cc, cons := in.cc, in.cons
		in.cc, in.cons = nil, nil
		in.gen++ // late deliveries are dropped
		in.mu.Unlock()
		if cc != nil {
			cc.Stop()
			go deleteConsumer(in.s.chans, cons)
		}
	})
}

func (in *inbox) Close() error {
	in.stop()
	in.s.mu.Lock()
	delete(in.s.inboxes, in)
	in.s.mu.Unlock()
	return nil
}
