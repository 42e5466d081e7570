package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcprt/mcprt/core"
)

// fileLedger is a Ledger kept in ledger/{agentId}.ndjson: its index is
// rebuilt by replaying the file when opened, and every Put appends lines.
// Only the agent's claim holder writes it, so after the first append
// (which takes the lock and cuts off a torn tail) appends skip the
// cross-process lock.
// The file is rewritten from the index (compacted) by PurgeExpired and
// when dead lines outnumber live ones.
type fileLedger struct {
	*ledgerIndex
	af    *appendFile
	log   *slog.Logger
	dir   string // the store's directory, for the channels (see payload.go)
	agent string

	fillMu sync.Mutex
	filled map[string]bool // guarded by fillMu: channels read back, by receiver
}

// compactMin is how many records a ledger holds at least before Put
// considers compacting it.
const compactMin = 4096

func openLedger(dir, agentID string, policy FsyncPolicy, log *slog.Logger) (*fileLedger, error) {
	path := filepath.Join(dir, "ledger", agentID+".ndjson")
	l := &fileLedger{ledgerIndex: newLedgerIndex(), af: newAppendFile(path, policy, log), log: log,
		dir: dir, agent: agentID, filled: map[string]bool{}}
	l.af.exclusive = true
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read ledger %s: %w", path, err)
	}
	bad := 0
	eachLine(data, func(line []byte) {
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			bad++
			return
		}
		l.apply(r)
	})
	if bad > 0 {
		log.Warn("aacp journal: skipped damaged ledger lines", "path", path, "lines", bad)
	}
	return l, nil
}

func encodeRecords(recs []Record) ([]byte, error) { return appendRecords(nil, recs) }

// appendRecords appends the lines of recs to buf.
func appendRecords(buf []byte, recs []Record) ([]byte, error) {
	for _, r := range recs {
		var err error
		if buf, err = appendRecord(buf, r); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// bufs holds buffers for the lines of one append.
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func getBuf() *[]byte { return bufs.Get().(*[]byte) }

// putBuf returns b to the pool unless it grew large.
func putBuf(b *[]byte) {
	if cap(*b) <= 64<<10 {
		*b = (*b)[:0]
		bufs.Put(b)
	}
}

func (l *fileLedger) Put(ctx context.Context, recs ...Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	recs = l.prepare(recs)
	buf := getBuf()
	defer putBuf(buf)
	data, err := appendRecords((*buf)[:0], recs)
	if err != nil {
		return err
	}
	*buf = data
	// The index changes under the file lock, so that a concurrent
	// compaction snapshot never misses a record the file already has.
	err = l.af.locked(func() error {
		if _, err := l.af.write(data); err != nil {
			return err
		}
		l.apply(recs...)
		return nil
	})
	if err != nil {
		return err
	}
	if applied, live := l.stats(); applied > compactMin && applied > 2*live {
		if err := l.compact(); err != nil {
			l.log.Warn("aacp journal: ledger compaction failed", "path", l.af.path, "err", err)
		}
	}
	return nil
}

func (l *fileLedger) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if l.af.policy != FsyncAlways {
		return nil
	}
	return l.af.sync()
}

// compact rewrites the file from the index.
func (l *fileLedger) compact() error {
	return l.af.locked(func() error {
		recs := l.snapshot()
		data, err := encodeRecords(recs)
		if err != nil {
			return err
		}
		if err := l.af.rewriteLocked(data); err != nil {
			return err
		}
		l.resetApplied(len(recs))
		return nil
	})
}

// Request implements Ledger: a request recorded with its payload left
// in its channel (see payload.go) gets it read back.
func (l *fileLedger) Request(id string) (RequestRecord, bool) {
	r, ok := l.request(id)
	if ok && r.PayloadAt != nil && noPayload(r.Envelope.Payload) {
		r = l.loadPayload(r)
	}
	return r, ok
}

func (l *fileLedger) Message(id string) (MessageRecord, bool)        { return l.message(id) }
func (l *fileLedger) Delivery(id, recv string) (MessageRecord, bool) { return l.delivery(id, recv) }
func (l *fileLedger) History(id string) []MessageRecord              { return l.history(id) }
func (l *fileLedger) Inbound(sender, id string) (InboundRecord, bool) {
	return l.inboundRec(sender, id)
}
func (l *fileLedger) Unacknowledged(receiver string) []MessageRecord {
	return l.unacknowledged(receiver)
}
func (l *fileLedger) PendingRequests(olderThan time.Time) []RequestRecord {
	return l.pendingRequests(olderThan)
}
func (l *fileLedger) MessagesInState(st State, olderThan time.Time) []MessageRecord {
	return l.messagesInState(st, olderThan)
}
func (l *fileLedger) MarkCompleted(ctx context.Context, id string, o Outcome, ref string) error {
	return l.Put(ctx, OutcomeRec(OutcomeRecord{RequestID: id, Outcome: o, CompletionRef: ref}))
}
func (l *fileLedger) MarkFailed(ctx context.Context, id string, err *core.Error) error {
	return l.Put(ctx, OutcomeRec(OutcomeRecord{RequestID: id, Outcome: OutcomeFailed, Error: err}))
}

// PurgeExpired implements Ledger: it drops what expired and rewrites the
// file when anything was dropped.
func (l *fileLedger) PurgeExpired(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n := 0
	err := l.af.locked(func() error {
		n = l.purge(now)
		if n == 0 {
			return nil
		}
		recs := l.snapshot()
		data, err := encodeRecords(recs)
		if err != nil {
			return err
		}
		if err := l.af.rewriteLocked(data); err != nil {
			return err
		}
		l.resetApplied(len(recs))
		return nil
	})
	return n, err
}
