package store

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/domain/trace"
)

// Traces is the SQLite trace.Store. Each Append stores its batch as ONE
// trace_batches row: the events encoded in a compact binary blob, with the
// batch's time span, its event count and the newline-framed lists of its
// distinct trace and session ids (the keys trace_get and trace_by_session
// look for with instr before decoding). An event's order is (started_at,
// batch id, index in the batch), as (started_at, id) was with one row per
// event. Reads decode the blobs; writes cost one row per batch.
type Traces struct{ db *DB }

var _ trace.Store = (*Traces)(nil)

// Traces returns the trace.Store of d.
func (d *DB) Traces() *Traces { return &Traces{db: d} }

// maxBatchEvents bounds the events of one trace_batches row.
const maxBatchEvents = 1024

// keySep frames the ids of a batch's traces and sessions columns. An id
// that contains it can only make instr match a batch that is then decoded
// and filtered exactly: never miss one.
const keySep = "\n"

// batchV1 is the first byte of a binary batch; a legacy batch (migrated
// from trace_events) is a JSON array and starts with '['.
const batchV1 = 1

// Event flags of the binary encoding.
const (
	flagSuccess = 1 << iota
	flagArgs
	flagResult
	flagPath // TraceID and ParentID are trace.Path(CorrelationID)
	flagUUID // RunID is stored as the 16 bytes of a UUID
)

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// Append implements trace.Store. Run ids are unique by construction (UUID
// v4 per call), so they are not checked.
func (t *Traces) Append(ctx context.Context, events []trace.Event) error {
	if len(events) == 0 {
		return nil
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	return t.db.write(ctx, func(conn *sql.Conn) error {
		for start := 0; start < len(events); start += maxBatchEvents {
			chunk := events[start:min(start+maxBatchEvents, len(events))]
			if err := insertBatch(ctx, conn, bp, chunk); err != nil {
				return err
			}
		}
		return nil
	})
}

// insertBatch stores events (at least one) as one trace_batches row.
func insertBatch(ctx context.Context, conn querier, bp *[]byte, events []trace.Event) error {
	data, first, last := encodeBatch((*bp)[:0], events)
	*bp = data
	traces, sessions := batchKeys(events)
	res, err := conn.ExecContext(ctx, `INSERT INTO trace_batches (first_at, last_at, events, traces, sessions, data) VALUES (?,?,?,?,?,?)`,
		first, last, len(events), traces, sessions, data)
	if err != nil {
		return storeError(ctx, "inserting a batch of trace events", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return storeError(ctx, "inserting a batch of trace events", err)
	}
	return indexBatch(ctx, conn, id, first, traces, sessions)
}

// eachBatch calls fn with every batch the query (id, data) returns.
func eachBatch(ctx context.Context, q querier, doing, query string, fn func(id int64, data []byte) error, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return storeError(ctx, doing, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			return storeError(ctx, doing, err)
		}
		if err := fn(id, data); err != nil {
			return storeError(ctx, doing, err)
		}
	}
	return storeError2(ctx, doing, rows.Err())
}

// traceAgg accumulates one trace of List.
type traceAgg struct {
	id               string
	first, end, last int64
	events, failures int
	root             string
	hasTool          bool
}

// List implements trace.Store.
func (t *Traces) List(ctx context.Context, q trace.ListQuery) (out []trace.Summary, total int, err error) {
	const doing = "listing traces"
	aggs := map[string]*traceAgg{}
	err = t.db.read(ctx, func(tx *sql.Tx) error {
		return eachBatch(ctx, tx, doing, `SELECT id, data FROM trace_batches ORDER BY id`, func(_ int64, data []byte) error {
			return eachEvent(data, func(_ int, r *rawEvent) {
				a := aggs[string(r.str[fTrace])]
				end := r.start + r.dur
				if a == nil {
					a = &traceAgg{id: string(r.str[fTrace]), first: r.start, end: end, last: r.start, root: string(r.str[fTool])}
					aggs[a.id] = a
				} else {
					if r.start < a.first { // equal starts: the earlier row's tool stays the root
						a.first, a.root = r.start, string(r.str[fTool])
					}
					a.end, a.last = max(a.end, end), max(a.last, r.start)
				}
				a.events++
				if r.flags&flagSuccess == 0 {
					a.failures++
				}
				if q.Tool != "" && string(r.str[fTool]) == q.Tool {
					a.hasTool = true
				}
			})
		})
	})
	if err != nil {
		return nil, 0, err
	}
	match := make([]*traceAgg, 0, len(aggs))
	for _, a := range aggs {
		switch {
		case q.Tool != "" && !a.hasTool:
		case q.Status == trace.StatusSuccess && a.failures > 0:
		case q.Status == trace.StatusFailure && a.failures == 0:
		default:
			match = append(match, a)
		}
	}
	slices.SortFunc(match, func(x, y *traceAgg) int {
		if c := cmp.Compare(y.last, x.last); c != 0 {
			return c
		}
		return strings.Compare(x.id, y.id)
	})
	out = make([]trace.Summary, 0, min(len(match), max(q.Limit, 0)))
	for _, a := range match[:min(len(match), max(q.Limit, 0))] {
		out = append(out, trace.Summary{TraceID: a.id, RootTool: a.root, Start: fromNanos(a.first), End: fromNanos(a.end),
			Events: a.events, Failures: a.failures})
	}
	return out, len(match), nil
}

// Events implements trace.Store.
func (t *Traces) Events(ctx context.Context, traceID string, limit int) ([]trace.Event, bool, error) {
	return t.indexedEvents(ctx, "reading trace "+traceID, keyTrace, traceID, limit,
		func(r *rawEvent) bool { return string(r.str[fTrace]) == traceID })
}

// BySession implements trace.Store.
func (t *Traces) BySession(ctx context.Context, sessionID string, limit int) ([]trace.Event, bool, error) {
	if sessionID == "" {
		return []trace.Event{}, false, nil
	}
	return t.indexedEvents(ctx, "reading the trace events of session "+sessionID, keySession, sessionID, limit,
		func(r *rawEvent) bool { return string(r.str[fSession]) == sessionID })
}

// storedBatch is a batch read for rewriting.
type storedBatch struct {
	id   int64
	data []byte
}

// readBatches returns the (id, data) batches a query selects.
func readBatches(ctx context.Context, conn *sql.Conn, doing, query string, args ...any) ([]storedBatch, error) {
	var out []storedBatch
	err := eachBatch(ctx, conn, doing, query, func(id int64, data []byte) error {
		out = append(out, storedBatch{id, data})
		return nil
	}, args...)
	return out, err
}

// rewrite deletes the events of b that drop selects: the batch row is
// updated in place (keeping its id, so the order of what stays) or
// deleted when nothing stays. It returns how many events it deleted.
func rewrite(ctx context.Context, conn *sql.Conn, b storedBatch, drop func(i int, r *rawEvent) bool) (int, error) {
	var kept []trace.Event
	deleted := 0
	if err := eachEvent(b.data, func(i int, r *rawEvent) {
		if drop(i, r) {
			deleted++
		} else {
			kept = append(kept, r.event())
		}
	}); err != nil {
		return 0, storeError(ctx, "pruning trace events", err)
	}
	if deleted == 0 {
		return 0, nil
	}
	var err error
	if len(kept) == 0 {
		_, err = conn.ExecContext(ctx, `DELETE FROM trace_batches WHERE id = ?`, b.id)
	} else {
		data, first, last := encodeBatch(nil, kept)
		traces, sessions := batchKeys(kept)
		_, err = conn.ExecContext(ctx, `UPDATE trace_batches SET first_at = ?, last_at = ?, events = ?, traces = ?, sessions = ?, data = ? WHERE id = ?`,
			first, last, len(kept), traces, sessions, data, b.id)
		if err == nil {
			err = indexBatch(ctx, conn, b.id, first, traces, sessions)
		}
	}
	if err != nil {
		return 0, storeError(ctx, "pruning trace events", err)
	}
	return deleted, nil
}

// eventKey orders events as reads do: start, then batch id, then index.
type eventKey struct {
	start, batch int64
	idx          int
}

// Prune implements trace.Store.
func (t *Traces) Prune(ctx context.Context, cutoff time.Time, keep int) (deleted int, err error) {
	err = t.db.write(ctx, func(conn *sql.Conn) error {
		deleted = 0
		c := nanos(cutoff)
		var n int
		if err := conn.QueryRowContext(ctx, `SELECT COALESCE(SUM(events), 0) FROM trace_batches WHERE last_at < ?`, c).Scan(&n); err != nil {
			return storeError(ctx, "counting old trace events", err)
		}
		if _, err := conn.ExecContext(ctx, `DELETE FROM trace_batches WHERE last_at < ?`, c); err != nil {
			return storeError(ctx, "deleting old trace events", err)
		}
		deleted += n
		straddling, err := readBatches(ctx, conn, "reading old trace events", `SELECT id, data FROM trace_batches WHERE first_at < ?`, c)
		if err != nil {
			return err
		}
		for _, b := range straddling {
			n, err := rewrite(ctx, conn, b, func(_ int, r *rawEvent) bool { return r.start < c })
			if err != nil {
				return err
			}
			deleted += n
		}
		var total int
		if err := conn.QueryRowContext(ctx, `SELECT COALESCE(SUM(events), 0) FROM trace_batches`).Scan(&total); err != nil {
			return storeError(ctx, "counting trace events", err)
		}
		if total <= keep {
			return nil
		}
		all, err := readBatches(ctx, conn, "reading trace events", `SELECT id, data FROM trace_batches ORDER BY id`)
		if err != nil {
			return err
		}
		keys := make([]eventKey, 0, total)
		for _, b := range all {
			if err := eachEvent(b.data, func(i int, r *rawEvent) { keys = append(keys, eventKey{r.start, b.id, i}) }); err != nil {
				return storeError(ctx, "reading trace events", err)
			}
		}
		slices.SortFunc(keys, func(x, y eventKey) int {
			return cmp.Or(cmp.Compare(x.start, y.start), cmp.Compare(x.batch, y.batch), cmp.Compare(x.idx, y.idx))
		})
		drop := map[int64]map[int]bool{}
		for _, k := range keys[:max(len(keys)-max(keep, 0), 0)] {
			if drop[k.batch] == nil {
				drop[k.batch] = map[int]bool{}
			}
			drop[k.batch][k.idx] = true
		}
		for _, b := range all {
			if d := drop[b.id]; d != nil {
				n, err := rewrite(ctx, conn, b, func(i int, _ *rawEvent) bool { return d[i] })
				if err != nil {
					return err
				}
				deleted += n
			}
		}
		return nil
	})
	return deleted, err
}

// Stats implements trace.Store.
func (t *Traces) Stats(ctx context.Context) (st trace.Stats, err error) {
	const doing = "counting trace events"
	err = t.db.read(ctx, func(tx *sql.Tx) error {
		var oldest, newest sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(events), 0), MIN(first_at), MAX(last_at) FROM trace_batches`).
			Scan(&st.Events, &oldest, &newest); err != nil {
			return storeError(ctx, doing, err)
		}
		if oldest.Valid {
			st.Oldest, st.Newest = fromNanos(oldest.Int64), fromNanos(newest.Int64)
		}
		ids := map[string]struct{}{}
		err := eachBatch(ctx, tx, doing, `SELECT id, data FROM trace_batches`, func(_ int64, data []byte) error {
			return eachEvent(data, func(_ int, r *rawEvent) {
				if _, ok := ids[string(r.str[fTrace])]; !ok {
					ids[string(r.str[fTrace])] = struct{}{}
				}
			})
		})
		st.Traces = len(ids)
		return err
	})
	return st, err
}
