package natsjournal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// catchUpTimeout bounds how long Read waits for the consumer to deliver
// what the stream held when Read was called.
const catchUpTimeout = 30 * time.Second

// inbox is a journal.Inbox on an ordered consumer of every channel into
// one receiver (aacp.ch.{receiver}.*). The consumer pushes new messages
// as they are stored, from any machine, and each one signals Changed.
type inbox struct {
	s        *Store
	receiver string
	filter   string
	ch       chan struct{}
	cc       jetstream.ConsumeContext

	mu        sync.Mutex
	buf       []jetstream.Msg // guarded by mu: delivered, not yet passed to Read's fn
	delivered uint64          // guarded by mu: highest stream seq delivered
	arrived   chan struct{}   // guarded by mu: closed and replaced at each delivery
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
		ch: make(chan struct{}, 1), arrived: make(chan struct{})}
	in.ch <- struct{}{}
	cons, err := s.orderedConsumer(in.filter)
	if err != nil {
		return nil, fmt.Errorf("nats journal: inbox of %s: consumer: %w", receiver, err)
	}
	if in.cc, err = cons.Consume(in.deliver); err != nil {
		return nil, fmt.Errorf("nats journal: inbox of %s: consume: %w", receiver, err)
	}
	s.mu.Lock()
	if err := s.check(); err != nil {
		s.mu.Unlock()
		in.cc.Stop()
		return nil, err
	}
	s.inboxes[in] = struct{}{}
	s.mu.Unlock()
	return in, nil
}

// consumerTimeout bounds the creation of an inbox's consumer; each
// attempt has consumerAttempt, since a request sent while the cluster
// elects a leader or a route reconnects may never be answered.
const (
	consumerTimeout = 30 * time.Second
	consumerAttempt = 5 * time.Second
)

// orderedConsumer creates an ordered consumer of filter, retrying
// unanswered or not-ready attempts until consumerTimeout. An attempt that
// was in fact served leaves an ephemeral consumer nobody reads; the
// server removes it after its inactivity threshold.
func (s *Store) orderedConsumer(filter string) (jetstream.Consumer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), consumerTimeout)
	defer cancel()
	for {
		actx, acancel := context.WithTimeout(ctx, consumerAttempt)
		cons, err := s.js.OrderedConsumer(actx, ChannelStream, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverAllPolicy,
		})
		acancel()
		if err == nil || ctx.Err() != nil || !(transient(err) || errors.Is(err, context.DeadlineExceeded)) {
			return cons, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (in *inbox) deliver(m jetstream.Msg) {
	md, err := m.Metadata()
	if err != nil {
		return
	}
	in.mu.Lock()
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
	for {
		in.mu.Lock()
		done, wait := in.delivered >= last, in.arrived
		in.mu.Unlock()
		if done {
			break
		}
		select {
		case <-wait:
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
		m := in.buf[0]
		in.mu.Unlock()
		var env envelope.Envelope
		if err := json.Unmarshal(m.Data(), &env); err != nil || env.Seq == 0 || env.MessageID == "" {
			in.s.log.Warn("aacp nats journal: skipped an undecodable transmission", "subject", m.Subject())
			in.pop()
			continue
		}
		if err := fn(&env); err != nil {
			return err
		}
		if md, err := m.Metadata(); err == nil {
			in.s.noteRead([2]string{env.Sender.AgentID, in.receiver}, env.Seq, md.Sequence.Stream)
		}
		in.pop()
	}
}

func (in *inbox) pop() {
	in.mu.Lock()
	in.buf[0] = nil
	in.buf = in.buf[1:]
	in.mu.Unlock()
}

// lastStored is the stream seq of the last message into the receiver, 0
// when there is none.
func (in *inbox) lastStored(ctx context.Context) (uint64, error) {
	m, err := in.s.chans.GetLastMsgForSubject(ctx, in.filter)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("nats journal: inbox of %s: read the stream's end: %w", in.receiver, err)
	}
	return m.Sequence, nil
}

func (in *inbox) Changed() <-chan struct{} { return in.ch }

func (in *inbox) stop() { in.stopOnce.Do(func() { in.cc.Stop() }) }

func (in *inbox) Close() error {
	in.stop()
	in.s.mu.Lock()
	delete(in.s.inboxes, in)
	in.s.mu.Unlock()
	return nil
}
