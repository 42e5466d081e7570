package store

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/domain/trace"
)

// The index of trace batches by trace id and session id: trace_blooms
// holds, per batch, its first start and a Bloom filter of its distinct
// ids (each hashed with its kind). trace_get and trace_by_session read
// the small filters instead of every batch's key lists and decode only
// the batches that may hold the id; a false positive (about 1 %) only
// makes them decode a batch that the exact filter then empties. A row per
// batch, written in id order, costs a write little (one row per id would
// scatter inserts over a B-tree keyed by random ids). An id holding
// keySep is split by the framing, so its lookups scan the lists instead.

// traceIndexSchema is migration 6 (backfillTraceIndex fills it).
var traceIndexSchema = []string{
	`CREATE TABLE trace_blooms (
		batch    INTEGER PRIMARY KEY, -- trace_batches.id
		first_at INTEGER NOT NULL,    -- the batch's first_at
		bloom    BLOB    NOT NULL     -- store.bloomOf its trace and session ids
	)`,
	`CREATE TRIGGER trace_batches_unindexed AFTER DELETE ON trace_batches BEGIN
		DELETE FROM trace_blooms WHERE batch = OLD.id;
	END`,
}

// Kinds of the ids in a filter.
const (
	keyTrace   = 't'
	keySession = 's'
)

// Filter parameters: bloomBitsPerKey bits per id and bloomProbes probes
// give about 1 % false positives.
const (
	bloomBitsPerKey = 10
	bloomProbes     = 7
)

// traceKeyHash is the filter hash of an id of a kind: 64-bit FNV-1a of the
// kind byte and the id (hash/fnv's New64a, computed in place).
func traceKeyHash(kind byte, id string) uint64 {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := (offset64 ^ uint64(kind)) * prime64
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * prime64
	}
	return h
}

// bloomOf is the filter of a batch's framed key lists.
func bloomOf(traces, sessions string) []byte {
	n := 0
	for _, list := range []string{traces, sessions} {
		for id := range strings.SplitSeq(strings.Trim(list, keySep), keySep) {
			if id != "" {
				n++
			}
		}
	}
	bloom := make([]byte, max(8, (n*bloomBitsPerKey+7)/8))
	nbits := uint64(len(bloom) * 8)
	for _, l := range []struct {
		kind byte
		list string
	}{{keyTrace, traces}, {keySession, sessions}} {
		for id := range strings.SplitSeq(strings.Trim(l.list, keySep), keySep) {
			if id == "" {
				continue
			}
			h := traceKeyHash(l.kind, id)
			h1, h2 := h&0xffffffff, h>>32|1
			for i := range uint64(bloomProbes) {
				bit := (h1 + i*h2) % nbits
				bloom[bit/8] |= 1 << (bit % 8)
			}
		}
	}
	return bloom
}

// eachProbe calls fn with the bloomProbes bit positions of h in a filter
// of nbits bits (double hashing).
func eachProbe(h uint64, nbits int, fn func(bit uint64)) {
	h1, h2 := h&0xffffffff, h>>32|1
	for i := range uint64(bloomProbes) {
		fn((h1 + i*h2) % uint64(nbits))
	}
}

// mayHold reports whether a filter may hold the hash h.
func mayHold(bloom []byte, h uint64) bool {
	if len(bloom) == 0 {
		return true
	}
	ok := true
	eachProbe(h, len(bloom)*8, func(bit uint64) { ok = ok && bloom[bit/8]&(1<<(bit%8)) != 0 })
	return ok
}

// indexBatch writes (or rewrites) the filter row of a batch.
func indexBatch(ctx context.Context, q querier, batch, first int64, traces, sessions string) error {
	if _, err := q.ExecContext(ctx, `INSERT OR REPLACE INTO trace_blooms (batch, first_at, bloom) VALUES (?, ?, ?)`,
		batch, first, bloomOf(traces, sessions)); err != nil {
		return storeError(ctx, "indexing a batch of trace events", err)
	}
	return nil
}

// backfillTraceIndex indexes the batches written before migration 6.
func backfillTraceIndex(ctx context.Context, conn *sql.Conn) error {
	rows, err := conn.QueryContext(ctx, `SELECT id, first_at, traces, sessions FROM trace_batches`)
	if err != nil {
		return err
	}
	type keys struct {
		id, first        int64
		traces, sessions string
	}
	var all []keys
	for rows.Next() {
		var k keys
		if err := rows.Scan(&k.id, &k.first, &k.traces, &k.sessions); err != nil {
			rows.Close()
			return err
		}
		all = append(all, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, k := range all {
		if err := indexBatch(ctx, conn, k.id, k.first, k.traces, k.sessions); err != nil {
			return err
		}
	}
	return nil
}

// indexedEvent is an event found through the index, with its storage
// order.
type indexedEvent struct {
	ev    trace.Event
	start int64
	batch int64
	idx   int
}

func compareIndexed(x, y indexedEvent) int {
	return cmp.Or(cmp.Compare(x.start, y.start), cmp.Compare(x.batch, y.batch), cmp.Compare(x.idx, y.idx))
}

// indexedEvents returns, in start order, at most limit (all when limit < 0)
// of the events that keep accepts among the batches indexed under key of
// kind, and whether there were more. Batches are decoded in first_at
// order and the decoding stops once no later batch can hold one of the
// first limit+1 events.
func (t *Traces) indexedEvents(ctx context.Context, doing string, kind byte, key string, limit int,
	keep func(r *rawEvent) bool) (out []trace.Event, more bool, err error) {
	var found []indexedEvent
	err = t.db.read(ctx, func(tx *sql.Tx) error {
		refs, err := candidates(ctx, tx, kind, key)
		if err != nil {
			return storeError(ctx, doing, err)
		}
		stmt, err := tx.PrepareContext(ctx, `SELECT data FROM trace_batches WHERE id = ?`)
		if err != nil {
			return storeError(ctx, doing, err)
		}
		defer stmt.Close()
		for _, r := range refs {
			if limit >= 0 && len(found) > limit {
				slices.SortFunc(found, compareIndexed)
				found = found[:limit+1]
				if r.first > found[limit].start { // every later batch starts later still
					break
				}
			}
			var data []byte
			if err := stmt.QueryRowContext(ctx, r.id).Scan(&data); err != nil {
				return storeError(ctx, doing, err)
			}
			if err := eachEvent(data, func(i int, e *rawEvent) {
				if keep(e) {
					found = append(found, indexedEvent{ev: e.event(), start: e.start, batch: r.id, idx: i})
				}
			}); err != nil {
				return storeError(ctx, doing, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	slices.SortFunc(found, compareIndexed)
	if limit >= 0 && len(found) > limit {
		found, more = found[:limit], true
	}
	out = make([]trace.Event, len(found))
	for i, f := range found {
		out[i] = f.ev
	}
	return out, more, nil
}

// batchRef is a batch that may hold an id.
type batchRef struct{ id, first int64 }

// candidates returns the batches whose filter may hold key of kind, in
// (first_at, id) order.
func candidates(ctx context.Context, tx *sql.Tx, kind byte, key string) ([]batchRef, error) {
	var refs []batchRef
	query, args := `SELECT batch, first_at, bloom FROM trace_blooms`, []any(nil)
	if strings.Contains(key, keySep) { // split when indexed: scan the framed lists instead
		column := map[byte]string{keyTrace: "traces", keySession: "sessions"}[kind]
		query, args = `SELECT id, first_at, NULL FROM trace_batches WHERE instr(`+column+`, ?) > 0`, []any{keySep + key + keySep}
	}
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	h := traceKeyHash(kind, key)
	var bloom sql.RawBytes
	for rows.Next() {
		var r batchRef
		if err := rows.Scan(&r.id, &r.first, &bloom); err != nil {
			return nil, err
		}
		if mayHold(bloom, h) {
			refs = append(refs, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(refs, func(x, y batchRef) int { return cmp.Or(cmp.Compare(x.first, y.first), cmp.Compare(x.id, y.id)) })
	return refs, nil
}

// BatchTraceIDs returns the distinct trace ids of the stored batch with
// that id (the Key of a ChangeScopeBatch change), or none when the batch
// is gone. An id that holds a newline comes back in pieces.
func (t *Traces) BatchTraceIDs(ctx context.Context, batch int64) ([]string, error) {
	db, err := t.db.handle(ctx)
	if err != nil {
		return nil, err
	}
	var traces string
	switch err := db.QueryRowContext(ctx, `SELECT traces FROM trace_batches WHERE id = ?`, batch).Scan(&traces); err {
	case nil:
	case sql.ErrNoRows:
		return nil, nil
	default:
		return nil, storeError(ctx, "reading the trace ids of a batch", err)
	}
	var ids []string
	for id := range strings.SplitSeq(strings.Trim(traces, keySep), keySep) {
		if id != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
