package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/mcprt/mcprt/domain/trace"
)

// Traces is the SQLite trace.Store: one trace_events row per event.
type Traces struct{ db *DB }

var _ trace.Store = (*Traces)(nil)

// Traces returns the trace.Store of d.
func (d *DB) Traces() *Traces { return &Traces{db: d} }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nullJSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// appendRows is how many events one INSERT statement carries.
const appendRows = 32

// Append implements trace.Store. Run ids are unique by construction (UUID
// v4 per call), so they are not checked: an index on them would cost every
// insert more than the rest of the row.
func (t *Traces) Append(ctx context.Context, events []trace.Event) error {
	if len(events) == 0 {
		return nil
	}
	return t.db.write(ctx, func(conn *sql.Conn) error {
		const cols = 15
		args := make([]any, 0, appendRows*cols)
		for start := 0; start < len(events); start += appendRows {
			chunk := events[start:min(start+appendRows, len(events))]
			args = args[:0]
			for _, e := range chunk {
				args = append(args, e.RunID, e.TraceID, e.CorrelationID, e.ParentID, e.Tool,
					nanos(e.Start), int64(e.Duration), e.Outcome, boolInt(e.Success), e.ErrorCode, e.ErrorMessage,
					e.SessionID, e.ServerID, nullJSON(e.Args), nullJSON(e.Result))
			}
			if _, err := conn.ExecContext(ctx, insertEvents(len(chunk)), args...); err != nil {
				return storeError(ctx, fmt.Sprintf("inserting %d trace events", len(chunk)), err)
			}
		}
		return nil
	})
}

// insertEvents returns the INSERT statement for n events (cached by
// database/sql's statement text, so building it is the only cost).
func insertEvents(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO trace_events (run_id, trace_id, correlation_id, parent_id, tool, started_at, duration_ns,
		outcome, success, error_code, error_message, session_id, server_id, args, result) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
	}
	return b.String()
}

// List implements trace.Store.
func (t *Traces) List(ctx context.Context, q trace.ListQuery) (out []trace.Summary, total int, err error) {
	where, having := "1", ""
	var args []any
	if q.Tool != "" {
		where = "trace_id IN (SELECT trace_id FROM trace_events WHERE tool = ?)"
		args = append(args, q.Tool)
	}
	switch q.Status {
	case trace.StatusSuccess:
		having = " HAVING SUM(1 - success) = 0"
	case trace.StatusFailure:
		having = " HAVING SUM(1 - success) > 0"
	}
	group := `SELECT trace_id, MIN(started_at) AS first, MAX(started_at + duration_ns), COUNT(*), SUM(1 - success), MAX(started_at) AS last
		FROM trace_events WHERE ` + where + ` GROUP BY trace_id` + having
	err = t.db.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (`+group+`)`, args...).Scan(&total); err != nil {
			return storeError(ctx, "counting traces", err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT g.*, (SELECT tool FROM trace_events f WHERE f.trace_id = g.trace_id ORDER BY started_at, id LIMIT 1)
			FROM (`+group+`) g ORDER BY last DESC, trace_id LIMIT ?`, append(args, q.Limit)...)
		if err != nil {
			return storeError(ctx, "listing traces", err)
		}
		defer rows.Close()
		out = []trace.Summary{}
		for rows.Next() {
			var s trace.Summary
			var first, end, last int64
			if err := rows.Scan(&s.TraceID, &first, &end, &s.Events, &s.Failures, &last, &s.RootTool); err != nil {
				return storeError(ctx, "listing traces", err)
			}
			s.Start, s.End = fromNanos(first), fromNanos(end)
			out = append(out, s)
		}
		return storeError2(ctx, "listing traces", rows.Err())
	})
	return out, total, err
}

const eventColumns = `run_id, trace_id, correlation_id, parent_id, tool, started_at, duration_ns, outcome, success,
	error_code, error_message, session_id, server_id, args, result`

// events runs a query over eventColumns and returns at most limit events
// and whether there were more (the query must ask for limit+1).
func (t *Traces) events(ctx context.Context, doing string, limit int, query string, args ...any) (out []trace.Event, more bool, err error) {
	err = t.db.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, append(args, limit+1)...)
		if err != nil {
			return storeError(ctx, doing, err)
		}
		defer rows.Close()
		out = []trace.Event{}
		for rows.Next() {
			if len(out) == limit {
				more = true
				break
			}
			var e trace.Event
			var start, dur int64
			var success int
			var a, r sql.NullString
			if err := rows.Scan(&e.RunID, &e.TraceID, &e.CorrelationID, &e.ParentID, &e.Tool, &start, &dur, &e.Outcome, &success,
				&e.ErrorCode, &e.ErrorMessage, &e.SessionID, &e.ServerID, &a, &r); err != nil {
				return storeError(ctx, doing, err)
			}
			e.Start, e.Duration, e.Success = fromNanos(start), time.Duration(dur), success != 0
			if a.Valid {
				e.Args = []byte(a.String)
			}
			if r.Valid {
				e.Result = []byte(r.String)
			}
			out = append(out, e)
		}
		return storeError2(ctx, doing, rows.Err())
	})
	return out, more, err
}

// Events implements trace.Store.
func (t *Traces) Events(ctx context.Context, traceID string, limit int) ([]trace.Event, bool, error) {
	return t.events(ctx, "reading trace "+traceID, limit,
		`SELECT `+eventColumns+` FROM trace_events WHERE trace_id = ? ORDER BY started_at, id LIMIT ?`, traceID)
}

// BySession implements trace.Store.
func (t *Traces) BySession(ctx context.Context, sessionID string, limit int) ([]trace.Event, bool, error) {
	return t.events(ctx, "reading the trace events of session "+sessionID, limit,
		`SELECT `+eventColumns+` FROM trace_events WHERE session_id = ? AND session_id <> '' ORDER BY started_at, id LIMIT ?`, sessionID)
}

// Prune implements trace.Store.
func (t *Traces) Prune(ctx context.Context, cutoff time.Time, keep int) (deleted int, err error) {
	err = t.db.write(ctx, func(conn *sql.Conn) error {
		res, err := conn.ExecContext(ctx, `DELETE FROM trace_events WHERE started_at < ?`, nanos(cutoff))
		if err != nil {
			return storeError(ctx, "deleting old trace events", err)
		}
		n, _ := res.RowsAffected()
		res, err = conn.ExecContext(ctx, `DELETE FROM trace_events WHERE id IN (SELECT id FROM trace_events ORDER BY started_at DESC, id DESC LIMIT -1 OFFSET ?)`, keep)
		if err != nil {
			return storeError(ctx, "deleting trace events beyond the retention count", err)
		}
		m, _ := res.RowsAffected()
		deleted = int(n + m)
		return nil
	})
	return deleted, err
}

// Stats implements trace.Store.
func (t *Traces) Stats(ctx context.Context) (st trace.Stats, err error) {
	err = t.db.read(ctx, func(tx *sql.Tx) error {
		var oldest, newest sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT trace_id), MIN(started_at), MAX(started_at) FROM trace_events`).
			Scan(&st.Events, &st.Traces, &oldest, &newest); err != nil {
			return storeError(ctx, "counting trace events", err)
		}
		if oldest.Valid {
			st.Oldest, st.Newest = fromNanos(oldest.Int64), fromNanos(newest.Int64)
		}
		return nil
	})
	return st, err
}
