package natsjournal

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/mcprt/mcprt/aacp/envelope"
)

// maxBatch bounds how many queued appends to one channel go out in one
// atomic batch.
const maxBatch = 64

// Headers of JetStream's atomic batch publish.
const (
	batchIDHeader     = "Nats-Batch-Id"
	batchSeqHeader    = "Nats-Batch-Sequence"
	batchCommitHeader = "Nats-Batch-Commit"
)

// channel is where a channel ends, as this process knows it, and the
// appends waiting to be written to it.
type channel struct {
	subject string

	mu         sync.Mutex // held by the committer while it writes
	known      bool       // guarded by mu
	lastStream uint64     // guarded by mu: stream seq of the channel's last message, 0 if none
	lastSeq    uint64     // guarded by mu: its channel seq

	qmu        sync.Mutex
	queue      []*appendReq // guarded by qmu
	committing bool         // guarded by qmu: a committer goroutine runs
}

// appendReq is one Append waiting for its channel's committer.
type appendReq struct {
	ctx  context.Context
	env  *envelope.Envelope // read only by the committer: it encodes a copy
	seq  uint64
	err  error
	done chan struct{}
}

// Append implements journal.Store: the transmission is published with
// the channel's next seq and the stream's per-subject compare-and-swap
// (another writer, in any process, makes it retry with a fresh end), and
// with env.MessageID as the message id (a repeated publish of the same
// transmission within the dedup window is stored once, and returns the
// seq it was stored with). It returns after JetStream acknowledged the
// message (stored under the server's sync policy, on a quorum in a
// cluster).
//
// Appends to one channel are group-committed: one write per channel is
// in flight, and the appends that arrive meanwhile go out together in
// the next, as one atomic batch (its first message carries the
// compare-and-swap; JetStream stores all or none, and under sync_always
// syncs the batch once). A batch JetStream refuses for any reason but a
// moved channel end (for instance because it holds a repeat) is written
// one message at a time instead.
func (s *Store) Append(ctx context.Context, env *envelope.Envelope) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	sender, receiver := env.Sender.AgentID, env.Receiver.AgentID
	if err := checkPair(sender, receiver); err != nil {
		return 0, err
	}
	c, err := s.channel(sender, receiver)
	if err != nil {
		return 0, err
	}
	r := &appendReq{ctx: ctx, env: env, done: make(chan struct{})}
	c.qmu.Lock()
	c.queue = append(c.queue, r)
	if !c.committing {
		c.committing = true
		go s.commit(c)
	}
	c.qmu.Unlock()
	select {
	case <-r.done:
	case <-ctx.Done():
		return 0, fmt.Errorf("nats journal: append %s to %s: JetStream did not confirm the write in time; it may or may not be stored: %w", env.MessageID, c.subject, ctx.Err())
	}
	if r.err != nil {
		return 0, r.err
	}
	env.Seq = r.seq
	return r.seq, nil
}

// AppendAll is Append for several transmissions at once, for a caller
// that has them together (the answers to a batch of messages): those to
// one channel are queued together, so they go out in one atomic batch
// (or join the one queued) rather than the first alone. It returns one
// error per envelope, in order, and sets the Seq of each appended.
func (s *Store) AppendAll(ctx context.Context, envs []*envelope.Envelope) []error {
	errs := make([]error, len(envs))
	if err := ctx.Err(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	reqs := make([]*appendReq, len(envs))
	byChan := map[*channel][]*appendReq{}
	var order []*channel
	for i, env := range envs {
		if err := checkPair(env.Sender.AgentID, env.Receiver.AgentID); err != nil {
			errs[i] = err
			continue
		}
		c, err := s.channel(env.Sender.AgentID, env.Receiver.AgentID)
		if err != nil {
			errs[i] = err
			continue
		}
		reqs[i] = &appendReq{ctx: ctx, env: env, done: make(chan struct{})}
		if byChan[c] == nil {
			order = append(order, c)
		}
		byChan[c] = append(byChan[c], reqs[i])
	}
	for _, c := range order {
		c.qmu.Lock()
		c.queue = append(c.queue, byChan[c]...)
		if !c.committing {
			c.committing = true
			go s.commit(c)
		}
		c.qmu.Unlock()
	}
	for i, r := range reqs {
		if r == nil {
			continue
		}
		select {
		case <-r.done:
			if errs[i] = r.err; r.err == nil {
				envs[i].Seq = r.seq
			}
		case <-ctx.Done():
			errs[i] = fmt.Errorf("nats journal: append %s: JetStream did not confirm the write in time; it may or may not be stored: %w", envs[i].MessageID, ctx.Err())
		}
	}
	return errs
}

// commit writes c's queued appends, a batch at a time, until none are
// queued.
func (s *Store) commit(c *channel) {
	for {
		c.qmu.Lock()
		var batch []*appendReq
		rest := c.queue[:0]
		for _, r := range c.queue {
			switch {
			case r.ctx.Err() != nil:
				r.err = r.ctx.Err()
				close(r.done) // abandoned before it was written
			case len(batch) < maxBatch:
				batch = append(batch, r)
			default:
				rest = append(rest, r)
			}
		}
		clear(c.queue[len(rest):])
		c.queue = rest
		if len(batch) == 0 {
			c.committing = false
			c.qmu.Unlock()
			return
		}
		c.qmu.Unlock()
		ctx, cancel := batchContext(s.ctx, batch)
		c.mu.Lock()
		if len(batch) == 1 || !s.atomic || s.appendBatch(ctx, c, batch) != nil {
			for _, r := range batch {
				r.seq, r.err = s.appendOne(r.ctx, c, r.env)
			}
		}
		c.mu.Unlock()
		cancel()
		for _, r := range batch {
			close(r.done)
		}
	}
}

// batchContext ends with the store, or at the latest deadline of the
// batch's appends.
func batchContext(parent context.Context, batch []*appendReq) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, r := range batch {
		d, ok := r.ctx.Deadline()
		if !ok {
			return context.WithCancel(parent)
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(parent, latest)
}

// transmission is the message of env with channel seq seq and message id
// env.MessageID.
func (c *channel) transmission(env *envelope.Envelope, seq uint64) (*nats.Msg, error) {
	e := *env
	e.Seq = seq
	data, err := envelope.AppendJSON(nil, &e)
	if err != nil {
		return nil, fmt.Errorf("nats journal: encode %s: %w", env.MessageID, err)
	}
	m := &nats.Msg{Subject: c.subject, Data: data, Header: nats.Header{}}
	m.Header.Set(seqHeader, strconv.FormatUint(seq, 10))
	m.Header.Set(jetstream.MsgIDHeader, env.MessageID)
	return m, nil
}

// appendBatch writes batch as one atomic batch after the channel's end;
// c.mu is held. A moved end (another writer) is re-read and the batch
// sent again; any other refusal is returned, and the caller writes the
// appends one at a time (which settles an unanswered batch too: its
// messages are then recognised by their message ids).
func (s *Store) appendBatch(ctx context.Context, c *channel, batch []*appendReq) error {
	nc := s.js.Conn()
	for attempt := 0; ; attempt++ {
		if !c.known {
			if err := s.load(ctx, c); err != nil {
				return err
			}
		}
		id := nuid.Next()
		var last *nats.Msg
		for i, r := range batch {
			m, err := c.transmission(r.env, c.lastSeq+1+uint64(i))
			if err != nil {
				return err
			}
			m.Header.Set(batchIDHeader, id)
			m.Header.Set(batchSeqHeader, strconv.Itoa(i+1))
			if i == 0 {
				m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(c.lastStream, 10))
			}
			if i == len(batch)-1 {
				m.Header.Set(batchCommitHeader, "1")
				last = m
				break
			}
			if err := nc.PublishMsg(m); err != nil {
				c.known = false
				return fmt.Errorf("publish a batch: %w", err)
			}
		}
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		ack, err := s.js.PublishMsg(actx, last)
		cancel()
		if err == nil && !ack.Duplicate {
			for i, r := range batch {
				r.seq = c.lastSeq + 1 + uint64(i)
			}
			c.lastStream, c.lastSeq = ack.Sequence, c.lastSeq+uint64(len(batch))
			return nil
		}
		c.known = false
		if err == nil {
			return errors.New("a batch's commit was called a duplicate")
		}
		if !isWrongLast(err) || attempt >= 10 {
			return err
		}
	}
}

// appendOne writes one transmission after the channel's end; c.mu is
// held.
func (s *Store) appendOne(ctx context.Context, c *channel, env *envelope.Envelope) (uint64, error) {
	for attempt := 0; ; attempt++ {
		if !c.known {
			if err := s.load(ctx, c); err != nil {
				return 0, err
			}
		}
		seq := c.lastSeq + 1
		msg, err := c.transmission(env, seq)
		if err != nil {
			return 0, err
		}
		ack, err := s.publish(ctx, msg, jetstream.WithExpectLastSequencePerSubject(c.lastStream))
		if err != nil {
			c.known = false
			if isWrongLast(err) && attempt < 1000 {
				continue
			}
			return 0, fmt.Errorf("nats journal: append %s to %s: JetStream did not confirm the write (is the server reachable, does the cluster have a quorum?); it may or may not be stored: %w", env.MessageID, c.subject, err)
		}
		if ack.Duplicate {
			// Stored before (a repeated publish): report the seq it has.
			c.known = false
			var m *jetstream.RawStreamMsg
			err := retry(ctx, attemptTimeout, func(actx context.Context) error {
				var err error
				m, err = s.chans.GetMsg(actx, ack.Sequence)
				return err
			})
			if err != nil {
				return 0, fmt.Errorf("nats journal: append %s: duplicate of stream seq %d, unreadable: %w", env.MessageID, ack.Sequence, err)
			}
			stored, _ := strconv.ParseUint(m.Header.Get(seqHeader), 10, 64)
			return stored, nil
		}
		c.lastStream, c.lastSeq = ack.Sequence, seq
		return seq, nil
	}
}
