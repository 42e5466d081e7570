package natsjournal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
)

// compactMin is how many records a ledger holds at least before Put
// considers rewriting it.
const compactMin = 4096

// ledger is a journal.Ledger kept on the subject aacp.lg.{agent}: each
// write is one message of NDJSON records, replayed into an index when the
// ledger is first used. A rewrite publishes a snapshot of the index and
// purges the subject before it.
//
// Writes are group-committed: one publish is in flight at a time, and
// the records Put meanwhile (by concurrent sends and answers of the
// agent) go out together in the next one, so that JetStream stores, and
// under sync_always fsyncs, one message for many Puts.
type ledger struct {
	*journal.IndexedLedger
	s       *Store
	subject string
	mu      sync.Mutex // serialises Put with rewrite

	pmu      sync.Mutex
	queued   []byte        // guarded by pmu: records Put, not yet published
	batch    uint64        // guarded by pmu: the batch queued records go out in (1, 2, …)
	done     uint64        // guarded by pmu: batches settled (stored or failed), in order
	flushing bool          // guarded by pmu: a flusher goroutine runs
	settled  chan struct{} // guarded by pmu: closed and replaced when a batch settles
	failed   error         // guarded by pmu: the first batch JetStream did not store since the last wait
}

// Ledger implements journal.Store.
func (s *Store) Ledger(agentID string) (journal.Ledger, error) {
	if err := envelope.CheckAgentID(agentID); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if err := s.check(); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if l := s.ledgerOf[agentID]; l != nil {
		s.mu.Unlock()
		return l, nil
	}
	s.mu.Unlock()
	l := &ledger{IndexedLedger: journal.NewIndexedLedger(), s: s, subject: ledgerPrefix + token(agentID), batch: 1, settled: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := 0
	err := s.readSubject(ctx, s.ledgers, l.subject, func(m jetstream.Msg) {
		recs, bad := decodeRecords(m.Data())
		if bad > 0 {
			s.log.Warn("aacp nats journal: skipped damaged ledger lines", "agent", agentID, "lines", bad)
		}
		l.Apply(recs...)
		n += len(recs)
	})
	if err != nil {
		return nil, fmt.Errorf("nats journal: load the ledger of %s: %w", agentID, err)
	}
	l.ResetApplied(n)
	s.mu.Lock()
	defer s.mu.Unlock()
	if other := s.ledgerOf[agentID]; other != nil {
		return other, nil
	}
	s.ledgerOf[agentID] = l
	return l, nil
}

func encodeRecords(recs []journal.Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return nil, fmt.Errorf("encode a %s record: %w", r.Kind, err)
		}
	}
	return buf.Bytes(), nil
}

func decodeRecords(data []byte) (recs []journal.Record, bad int) {
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r journal.Record
		if err := json.Unmarshal(line, &r); err != nil {
			bad++
			continue
		}
		recs = append(recs, r)
	}
	return recs, bad
}

// Put implements journal.Ledger: it queues the records for the next
// publish without waiting and indexes them; Sync waits until JetStream
// acknowledged them, so that a sender's ledger write overlaps its channel
// append.
func (l *ledger) Put(ctx context.Context, recs ...journal.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := l.s.checkOpen(); err != nil {
		return err
	}
	data, err := encodeRecords(recs)
	if err != nil {
		return fmt.Errorf("nats journal: ledger %s: %w", l.subject, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.publish(ctx, data); err != nil {
		return err
	}
	l.Apply(recs...)
	if applied, live := l.Stats(); applied >= compactMin && applied > 2*live {
		if err := l.rewrite(ctx); err != nil {
			l.s.log.Warn("aacp nats journal: ledger rewrite failed; it continues to grow", "subject", l.subject, "error", err.Error())
		}
	}
	return nil
}

// publish queues data for the next batch, starting a flusher if none
// runs.
func (l *ledger) publish(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.pmu.Lock()
	l.queued = append(l.queued, data...)
	if !l.flushing {
		l.flushing = true
		go l.flush()
	}
	l.pmu.Unlock()
	return nil
}

// flushTimeout bounds how long one batch is sent again while JetStream
// does not confirm it; it then fails (the Sync that waits for it reports
// the failure, and the records may or may not be stored).
const flushTimeout = time.Minute

// flush publishes the queued records, a batch at a time, until none are
// queued. Each chunk of a batch carries a message id, so that a chunk
// sent again after an unanswered attempt is stored once.
func (l *ledger) flush() {
	for {
		l.pmu.Lock()
		data := l.queued
		if len(data) == 0 {
			l.flushing = false
			l.pmu.Unlock()
			return
		}
		l.queued = nil
		l.batch++
		l.pmu.Unlock()
		err := l.send(data)
		l.pmu.Lock()
		l.done++
		if err != nil && l.failed == nil {
			l.failed = fmt.Errorf("nats journal: ledger %s: JetStream did not store a write: %w", l.subject, err)
		}
		close(l.settled)
		l.settled = make(chan struct{})
		l.pmu.Unlock()
	}
}

// send publishes data in chunks of at most the store's message size.
func (l *ledger) send(data []byte) error {
	ctx, cancel := context.WithTimeout(l.s.ctx, flushTimeout)
	defer cancel()
	for len(data) > 0 {
		chunk := data
		if len(chunk) > l.s.maxBytes {
			cut := bytes.LastIndexByte(chunk[:l.s.maxBytes], '\n')
			if cut <= 0 {
				cut = bytes.IndexByte(chunk, '\n')
			}
			chunk = chunk[:cut+1]
		}
		msg := &nats.Msg{Subject: l.subject, Data: chunk, Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, nuid.Next())
		if _, err := l.s.publish(ctx, msg); err != nil {
			return err
		}
		data = data[len(chunk):]
	}
	return nil
}

// Sync implements journal.Ledger: it waits until JetStream acknowledged
// every record Put so far, and reports the first that failed.
func (l *ledger) Sync(ctx context.Context) error {
	if err := l.s.checkOpen(); err != nil {
		return err
	}
	return l.wait(ctx)
}

// wait waits until every batch holding records Put so far has settled,
// and returns (and clears) the first failure.
func (l *ledger) wait(ctx context.Context) error {
	l.pmu.Lock()
	target := l.batch - 1 // batches taken by the flusher
	if len(l.queued) > 0 {
		target = l.batch // and the one queued
	}
	for l.done < target {
		ch := l.settled
		l.pmu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("nats journal: ledger %s: wait for JetStream: %w", l.subject, ctx.Err())
		}
		l.pmu.Lock()
	}
	err := l.failed
	l.failed = nil
	l.pmu.Unlock()
	return err
}

// rewrite publishes a snapshot and purges everything before it; l.mu is
// held.
func (l *ledger) rewrite(ctx context.Context) error {
	if err := l.wait(ctx); err != nil {
		return err
	}
	snap := l.Snapshot()
	data, err := encodeRecords(snap)
	if err != nil {
		return err
	}
	marker := &nats.Msg{Subject: l.subject, Header: nats.Header{}}
	marker.Header.Set(jetstream.MsgIDHeader, nuid.Next())
	first, err := l.s.publish(ctx, marker)
	if err != nil {
		return fmt.Errorf("publish a snapshot marker: %w", err)
	}
	if err := l.publish(ctx, data); err != nil {
		return err
	}
	if err := l.wait(ctx); err != nil {
		return err
	}
	if err := l.s.ledgers.Purge(ctx, jetstream.WithPurgeSubject(l.subject), jetstream.WithPurgeSequence(first.Sequence)); err != nil {
		return fmt.Errorf("purge before the snapshot: %w", err)
	}
	l.ResetApplied(len(snap))
	return nil
}

func (l *ledger) MarkCompleted(ctx context.Context, id string, o journal.Outcome, ref string) error {
	return l.Put(ctx, journal.CompletedRecord(id, o, ref))
}

func (l *ledger) MarkFailed(ctx context.Context, id string, err *core.Error) error {
	return l.Put(ctx, journal.FailedRecord(id, err))
}

// PurgeExpired implements journal.Ledger: it drops expired records from
// the index and rewrites the subject from a snapshot.
func (l *ledger) PurgeExpired(ctx context.Context, now time.Time) (int, error) {
	if err := l.s.checkOpen(); err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.Purge(now)
	if n == 0 {
		return 0, nil
	}
	if err := l.rewrite(ctx); err != nil {
		return n, fmt.Errorf("nats journal: ledger %s: rewrite after purge: %w", l.subject, err)
	}
	return n, nil
}

// readSubject calls fn for every message of st on filter, in order, up to
// the last one stored when it was called.
func (s *Store) readSubject(ctx context.Context, st jetstream.Stream, filter string, fn func(jetstream.Msg)) error {
	// end reads the stream seq of the subject's last message, 0 when none.
	end := func() (uint64, error) {
		var last *jetstream.RawStreamMsg
		err := retry(ctx, attemptTimeout, func(actx context.Context) error {
			var err error
			last, err = st.GetLastMsgForSubject(actx, filter)
			return err
		})
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read the end of %s: %w", filter, err)
		}
		return last.Sequence, nil
	}
	last, err := end()
	if last == 0 || err != nil {
		return err
	}
	var passed uint64 // the stream seq of the last message passed to fn
	var cons jetstream.Consumer
	err = retry(ctx, attemptTimeout, func(actx context.Context) error {
		var err error
		cons, err = st.OrderedConsumer(actx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
		return err
	})
	if err != nil {
		return fmt.Errorf("consumer on %s: %w", filter, err)
	}
	for {
		batch, err := cons.Fetch(256, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return fmt.Errorf("fetch %s: %w", filter, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			fn(m)
			passed = md.Sequence.Stream
			if passed >= last {
				return nil
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return fmt.Errorf("fetch %s: %w", filter, err)
		}
		if got == 0 {
			// A fetch that waited its 5 s for nothing: a loaded server
			// (or a consumer being recreated) is slow, not wrong, while
			// the stream still holds what is left up to last (ctx bounds
			// the whole read). Unless the end was removed meanwhile
			// (dead letters expire): then read up to the end as it is.
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("fetch %s: nothing arrived before stream seq %d: %w", filter, last, err)
			}
			now, err := end()
			if err != nil {
				return err
			}
			if now <= passed {
				return nil
			}
			last = min(last, now)
		}
	}
}
