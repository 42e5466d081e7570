package natsjournal

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// maxBatch bounds how many queued appends to one channel go out in one
// write.
const maxBatch = 64

// countHeader carries how many transmissions a message of a channel
// holds (absent: one). A message holding several (a pack) carries the
// seq of its last in seqHeader and the last one's messageId as its
// JetStream message id.
const countHeader = "Mcprt-Count"

// recentIDs is how many of a channel's latest transmissions a store
// remembers, so that a repeated Append of one it wrote returns its seq
// without writing it again (see channel.recent).
const recentIDs = 1024

// channel is where a channel ends, as this process knows it, and the
// appends waiting to be written to it.
type channel struct {
	subject string

	mu         sync.Mutex // held by the committer while it writes
	known      bool       // guarded by mu
	lastStream uint64     // guarded by mu: stream seq of the channel's last message, 0 if none
	lastSeq    uint64     // guarded by mu: its channel seq

	// recent maps the messageIds of the transmissions this store wrote
	// to the channel lately (at most recentIDs, oldest first in
	// recentOrder) to their seqs: a pack carries one JetStream message
	// id, so JetStream's dedup cannot recognise a repeat of its other
	// transmissions.
	recent      map[string]uint64 // guarded by mu
	recentOrder []string          // guarded by mu

	qmu        sync.Mutex
	queue      []*appendReq // guarded by qmu
	committing bool         // guarded by qmu: a committer goroutine runs
}

// remember notes that the transmission id was written with seq; c.mu is
// held.
func (c *channel) remember(id string, seq uint64) {
	if c.recent == nil {
		c.recent = map[string]uint64{}
	}
	if _, ok := c.recent[id]; ok {
		return
	}
	if len(c.recentOrder) >= recentIDs {
		delete(c.recent, c.recentOrder[0])
		c.recentOrder = c.recentOrder[1:]
	}
	c.recent[id] = seq
	c.recentOrder = append(c.recentOrder, id)
}

// appendReq is one Append waiting for its channel's committer.
type appendReq struct {
	ctx    context.Context
	env    *envelope.Envelope // read only by the committer: it encodes a copy
	before func(seq uint64) error
	seq    uint64
	err    error
	done   chan struct{}
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
// the next, as one message holding them all (a pack: one compare-and-swap,
// one message stored and, under sync_always, synced; all or none). A
// repeat of a transmission this store wrote lately is answered from
// memory (a pack carries only its last transmission's message id).
func (s *Store) Append(ctx context.Context, env *envelope.Envelope) (uint64, error) {
	return s.AppendWith(ctx, env, journal.AppendOptions{})
}

// AppendWith implements journal.Appender: Append, with opts.Before
// called by the channel's committer with the seq the transmission is
// about to be written with, just before the write (a sender records the
// transmission, seq included, in its ledger there: one ledger record,
// not one before the append and another after it). Another writer's
// append in between (a moved channel end) makes the committer number it
// again and call Before again with the new seq. An error from Before
// cancels the append (nothing is written) and is returned.
// opts.Encoded is not used: the store encodes the envelope with its seq.
func (s *Store) AppendWith(ctx context.Context, env *envelope.Envelope, opts journal.AppendOptions) (uint64, error) {
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
	r := &appendReq{ctx: ctx, env: env, before: opts.Before, done: make(chan struct{})}
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
// one channel are queued together, so they go out in one pack
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
		s.write(ctx, c, batch)
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

// write writes batch after the channel's end; c.mu is held. A repeat of
// a transmission this store wrote lately gets the seq it was written
// with; the rest go out as one message (a pack) when there are several,
// up to the store's message size, the remainder in the next pack. An
// append too big to share a message is written alone.
func (s *Store) write(ctx context.Context, c *channel, batch []*appendReq) {
	var pack []*appendReq
	var data [][]byte
	size := 0
	flush := func() {
		switch len(pack) {
		case 0:
		case 1:
			pack[0].seq, pack[0].err = s.appendOne(pack[0].ctx, c, pack[0].env, pack[0].before)
		default:
			s.appendPack(ctx, c, pack, data)
		}
		pack, data, size = pack[:0], data[:0], 0
	}
	for _, r := range batch {
		if seq, ok := c.recent[r.env.MessageID]; ok {
			r.seq = seq
			continue
		}
		e := *r.env
		e.Seq = 0
		enc, err := envelope.AppendJSON(nil, &e)
		if err != nil {
			r.err = fmt.Errorf("nats journal: encode %s: %w", r.env.MessageID, err)
			continue
		}
		if size+len(enc) > s.maxBytes {
			flush()
		}
		pack, data, size = append(pack, r), append(data, enc), size+len(enc)+1
	}
	flush()
	for _, r := range batch {
		if r.err == nil && r.seq > 0 {
			c.remember(r.env.MessageID, r.seq)
		}
	}
}

// appendPack writes the appends of pack (data: their encodings with seq
// 0) as one JetStream message after the channel's end: JetStream stores
// (and under sync_always syncs) one message for them all, and its
// compare-and-swap on the channel's end keeps the seqs dense across
// writers. A moved end is re-read and the pack numbered again; any other
// failure fails every append of the pack (it may or may not be stored,
// like any write JetStream did not confirm). c.mu is held.
func (s *Store) appendPack(ctx context.Context, c *channel, pack []*appendReq, data [][]byte) {
	fail := func(err error) {
		for _, r := range pack {
			r.err = fmt.Errorf("nats journal: append %s to %s: JetStream did not confirm the write (is the server reachable, does the cluster have a quorum?); it may or may not be stored: %w", r.env.MessageID, c.subject, err)
		}
	}
	for attempt := 0; ; attempt++ {
		if !c.known {
			if err := s.load(ctx, c); err != nil {
				fail(err)
				return
			}
		}
		if !s.numbered(c, &pack, &data) {
			return
		}
		var body []byte
		for i, enc := range data {
			if i > 0 {
				body = append(body, '\n')
			}
			body = withSeq(body, enc, c.lastSeq+1+uint64(i))
		}
		last := c.lastSeq + uint64(len(pack))
		m := &nats.Msg{Subject: c.subject, Data: body, Header: nats.Header{}}
		m.Header.Set(seqHeader, strconv.FormatUint(last, 10))
		m.Header.Set(countHeader, strconv.Itoa(len(pack)))
		m.Header.Set(jetstream.MsgIDHeader, pack[len(pack)-1].env.MessageID)
		ack, err := s.publish(ctx, m, jetstream.WithExpectLastSequencePerSubject(c.lastStream))
		switch {
		case err == nil && !ack.Duplicate:
			for i, r := range pack {
				r.seq = c.lastSeq + 1 + uint64(i)
			}
			c.lastStream, c.lastSeq = ack.Sequence, last
			return
		case err == nil:
			c.known = false
			if s.storedPack(ctx, c, pack, ack.Sequence) {
				return // this pack, stored by an attempt whose answer was lost
			}
			// Its last transmission was stored before on its own (an
			// Append repeated by another store): write them one at a
			// time, which finds each one's seq.
			for _, r := range pack {
				r.seq, r.err = s.appendOne(r.ctx, c, r.env, r.before)
			}
			return
		}
		c.known = false
		if !isWrongLast(err) || attempt >= 1000 {
			fail(err)
			return
		}
	}
}

// numbered calls the Before hooks of pack's appends with the seqs they
// are about to be written with (after the channel's known end); an
// append whose hook fails is taken out of the pack (failed with the
// hook's error) and the rest numbered again. It reports whether any
// append is left.
func (s *Store) numbered(c *channel, pack *[]*appendReq, data *[][]byte) bool {
outer:
	for len(*pack) > 0 {
		for i, r := range *pack {
			if r.before == nil {
				continue
			}
			if err := r.before(c.lastSeq + 1 + uint64(i)); err != nil {
				r.err = err
				*pack = append((*pack)[:i:i], (*pack)[i+1:]...)
				*data = append((*data)[:i:i], (*data)[i+1:]...)
				continue outer
			}
		}
		return true
	}
	return false
}

// storedPack reports whether the message at stream seq stream, which
// JetStream called a duplicate of pack's, holds pack's transmissions in
// order (an earlier attempt of this write was stored and its answer
// lost); then it sets their seqs from it.
func (s *Store) storedPack(ctx context.Context, c *channel, pack []*appendReq, stream uint64) bool {
	var m *jetstream.RawStreamMsg
	err := retry(ctx, attemptTimeout, func(actx context.Context) error {
		var err error
		m, err = s.chans.GetMsg(actx, stream)
		return err
	})
	if err != nil || m.Header.Get(countHeader) != strconv.Itoa(len(pack)) {
		return false
	}
	envs, bad := decodeTransmissions(m.Data)
	if bad || len(envs) != len(pack) {
		return false
	}
	for i, e := range envs {
		if e.MessageID != pack[i].env.MessageID {
			return false
		}
	}
	for i, e := range envs {
		pack[i].seq = e.Seq
	}
	return true
}

// withSeq appends enc, an envelope's encoding with seq 0 (which
// envelope.AppendJSON writes first), to dst with seq seq instead.
func withSeq(dst, enc []byte, seq uint64) []byte {
	const zero = `{"seq":0`
	dst = append(dst, zero[:len(zero)-1]...)
	dst = strconv.AppendUint(dst, seq, 10)
	return append(dst, enc[len(zero):]...)
}

// appendOne writes one transmission after the channel's end; c.mu is
// held.
func (s *Store) appendOne(ctx context.Context, c *channel, env *envelope.Envelope, before func(uint64) error) (uint64, error) {
	for attempt := 0; ; attempt++ {
		if !c.known {
			if err := s.load(ctx, c); err != nil {
				return 0, err
			}
		}
		seq := c.lastSeq + 1
		if before != nil {
			if err := before(seq); err != nil {
				return 0, err
			}
		}
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
