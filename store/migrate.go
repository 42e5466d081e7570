package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/mcprt/mcprt/core"
)

// migration is one step of the schema. Versions start at 1 and increase by
// one; a step, once released, is never edited: a change is a new step.
type migration struct {
	version int
	name    string
	stmts   []string
	// fn, when set, runs after stmts in the same transaction: for steps
	// SQL alone cannot express.
	fn func(ctx context.Context, conn *sql.Conn) error
}

// migrations is the schema, in order.
var migrations = []migration{
	{1, "memory entries with a full-text index over values", []string{
		`CREATE TABLE memory_entries (
			id        INTEGER PRIMARY KEY,
			namespace TEXT    NOT NULL,
			key       TEXT    NOT NULL,
			value     TEXT    NOT NULL,
			size      INTEGER NOT NULL,
			stored_at INTEGER NOT NULL, -- Unix nanoseconds, UTC
			rev       INTEGER NOT NULL, -- write order, breaks ties of stored_at
			UNIQUE (namespace, key)
		)`,
		`CREATE INDEX memory_entries_recency ON memory_entries (stored_at DESC, rev DESC)`,
		`CREATE INDEX memory_entries_rev ON memory_entries (rev)`,
		`CREATE VIRTUAL TABLE memory_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 0')`,
	}, nil},
	{2, "collaboration sessions, their participants and applied policies", []string{
		`CREATE TABLE sessions (
			id             TEXT    PRIMARY KEY,
			initiator      TEXT    NOT NULL,
			task           TEXT    NOT NULL,
			workspace      TEXT    NOT NULL,
			metadata       TEXT,
			status         TEXT    NOT NULL,
			created_at     INTEGER NOT NULL,
			updated_at     INTEGER NOT NULL,
			completed_at   INTEGER,
			summary        TEXT    NOT NULL,
			failure_reason TEXT    NOT NULL,
			seq            INTEGER NOT NULL -- creation order, breaks ties of created_at
		)`,
		`CREATE INDEX sessions_recency ON sessions (created_at DESC, seq DESC)`,
		`CREATE INDEX sessions_seq ON sessions (seq)`,
		`CREATE TABLE session_participants (
			session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
			agent_id   TEXT    NOT NULL,
			role       TEXT    NOT NULL,
			joined_at  INTEGER NOT NULL,
			task_count INTEGER NOT NULL,
			ord        INTEGER NOT NULL,
			PRIMARY KEY (session_id, agent_id)
		)`,
		`CREATE TABLE session_policies (
			session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
			policy_id  TEXT    NOT NULL,
			applied_at INTEGER NOT NULL,
			PRIMARY KEY (session_id, policy_id)
		)`,
	}, nil},
	{3, "trace events: one row per finished tool call", []string{
		`CREATE TABLE trace_events (
			id             INTEGER PRIMARY KEY,
			run_id         TEXT    NOT NULL,
			trace_id       TEXT    NOT NULL,
			correlation_id TEXT    NOT NULL,
			parent_id      TEXT    NOT NULL,
			tool           TEXT    NOT NULL,
			started_at     INTEGER NOT NULL, -- Unix nanoseconds, UTC
			duration_ns    INTEGER NOT NULL,
			outcome        TEXT    NOT NULL,
			success        INTEGER NOT NULL,
			error_code     TEXT    NOT NULL,
			error_message  TEXT    NOT NULL,
			session_id     TEXT    NOT NULL,
			server_id      TEXT    NOT NULL,
			args           TEXT, -- redacted JSON, only when captured
			result         TEXT  -- redacted JSON, only when captured
		)`,
		`CREATE INDEX trace_events_trace ON trace_events (trace_id, started_at, id)`,
		`CREATE INDEX trace_events_session ON trace_events (session_id, started_at, id) WHERE session_id <> ''`,
	}, nil},
	{4, "trace events in batches: one row per written batch, events in a binary blob", []string{
		`CREATE TABLE trace_batches (
			id       INTEGER PRIMARY KEY, -- write order: breaks ties of started_at with the index in the batch
			first_at INTEGER NOT NULL,    -- earliest and latest started_at, Unix nanoseconds, UTC
			last_at  INTEGER NOT NULL,
			events   INTEGER NOT NULL,
			traces   TEXT    NOT NULL,    -- distinct trace ids, each between newlines
			sessions TEXT    NOT NULL,    -- distinct non-empty session ids, each between newlines
			data     BLOB    NOT NULL     -- the events (store.encodeBatch), or JSON for rows migrated below
		)`,
		// The events of version 3 move, 256 at a time in id order, into
		// batches whose data is a JSON array of [run_id, trace_id,
		// correlation_id, parent_id, tool, started_at, duration_ns, outcome,
		// success, error_code, error_message, session_id, server_id, args,
		// result, id] (store.decodeLegacy).
		`INSERT INTO trace_batches (first_at, last_at, events, traces, sessions, data)
			SELECT MIN(started_at), MAX(started_at), COUNT(*),
				char(10) || group_concat(trace_id, char(10)) || char(10),
				char(10) || group_concat(session_id, char(10)) || char(10),
				json_group_array(json_array(run_id, trace_id, correlation_id, parent_id, tool, started_at, duration_ns,
					outcome, success, error_code, error_message, session_id, server_id, args, result, id))
			FROM (SELECT *, (ROW_NUMBER() OVER (ORDER BY id) - 1) / 256 AS grp FROM trace_events)
			GROUP BY grp ORDER BY grp`,
		`DROP TABLE trace_events`,
	}, nil},
	{5, "a feed of changes: one row per write, written by triggers in the write's transaction", changeFeedSchema, nil},
	{6, "an index of trace batches by trace id and session id", traceIndexSchema, backfillTraceIndex},
	{7, "file reservations: advisory leases on paths and globs", reservationSchema, nil},
	{8, "the work queue: tasks, their labels, dependencies and transitions", taskSchema, nil},
	{9, "an index of agent messages: threads, states and full-text search, derived from the journal", messageIndexSchema, nil},
	{10, "replicated state: the stream sequence applied to this store, and the outcome of each applied event", replicationSchema, nil},
	{11, memoryKeysStep, memoryKeysSchema, nil},
}

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// migrate brings the database up to SchemaVersion. It runs in one BEGIN
// IMMEDIATE transaction, so when several processes open a fresh directory
// at once one of them applies each step and the others, once they get the
// lock, find it done: every step is applied exactly once.
func migrate(ctx context.Context, d *DB, db *sql.DB) error {
	return runImmediate(ctx, db, func(conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
			version    INTEGER PRIMARY KEY,
			name       TEXT    NOT NULL,
			applied_at TEXT    NOT NULL
		)`); err != nil {
			return storeError(ctx, "creating schema_version", err)
		}
		var current int
		if err := conn.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&current); err != nil {
			return storeError(ctx, "reading schema_version", err)
		}
		if latest := SchemaVersion(); current > latest {
			return core.Errorf(core.CodeInternal,
				"store: %s has schema version %d but this mcprt knows versions up to %d: run a newer mcprt, or use another data directory",
				d.path, current, latest)
		}
		for _, m := range migrations {
			if m.version <= current {
				continue
			}
			for _, stmt := range m.stmts {
				if _, err := conn.ExecContext(ctx, stmt); err != nil {
					return storeError(ctx, fmt.Sprintf("applying schema version %d (%s)", m.version, m.name), err)
				}
			}
			if m.fn != nil {
				if err := m.fn(ctx, conn); err != nil {
					return storeError(ctx, fmt.Sprintf("applying schema version %d (%s)", m.version, m.name), err)
				}
			}
			at := d.opts.Clock.Now().UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
			if _, err := conn.ExecContext(ctx, `INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, at); err != nil {
				return storeError(ctx, fmt.Sprintf("recording schema version %d", m.version), err)
			}
		}
		return nil
	})
}

// ReservationsVersion is the schema version that added the reservations
// table: a database below it holds no reservations.
const ReservationsVersion = 7

// Version returns the schema version the database has now: 0 for a file
// that another process is still creating (no schema_version table yet).
// A reader that opened it with Options.ReadOnly uses it to tell "no such
// data yet" from an error.
func (d *DB) Version(ctx context.Context) (int, error) {
	var v int
	err := d.read(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'`).
			Scan(&n); err != nil {
			return storeError(ctx, "reading the schema", err)
		}
		if n == 0 {
			return nil
		}
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v); err != nil {
			return storeError(ctx, "reading schema_version", err)
		}
		return nil
	})
	return v, err
}
