package store

import (
	"context"
	"database/sql"
	"errors"
)

// Replicated state: a node that shares its state with other machines
// applies a stream of events to this store (package sharedstate). Each
// event is applied in one write transaction that also records the
// stream sequence it came from and its outcome, so an event is applied
// exactly once however often it is delivered, and a restarted node
// resumes after the last sequence it applied.

// replicationSchema is migration 10: per stream the last applied
// sequence, and the outcome of recent events (for the writer that waits
// for its own event, which another process on the same data directory
// may have applied). Outcomes are trimmed to the last
// replicationResultsKept sequences of each stream.
var replicationSchema = []string{
	`CREATE TABLE replication_applied (
		stream TEXT    PRIMARY KEY,
		seq    INTEGER NOT NULL -- last stream sequence applied to this store
	)`,
	`CREATE TABLE replication_results (
		stream TEXT    NOT NULL,
		seq    INTEGER NOT NULL,
		result BLOB    NOT NULL, -- the event's outcome, as the applier encoded it
		PRIMARY KEY (stream, seq)
	)`,
}

// Retention of replication_results: every replicationTrimEvery-th
// sequence deletes the outcomes more than replicationResultsKept behind.
const (
	replicationResultsKept = 4096
	replicationTrimEvery   = 256
)

// applyKey is the context key under which ApplyEvent passes its
// transaction to the store methods an event's handler calls.
type applyKey struct{}

type applyTx struct {
	db   *DB
	conn *sql.Conn
}

// applyConn returns the connection of the ApplyEvent transaction of d
// that ctx runs in, or nil.
func applyConn(ctx context.Context, d *DB) *sql.Conn {
	if tx, ok := ctx.Value(applyKey{}).(applyTx); ok && tx.db == d {
		return tx.conn
	}
	return nil
}

// ApplyFunc applies one event. It runs inside ApplyEvent's transaction:
// every store write it makes through the ctx it is given (memory, sessions,
// reservations, tasks, …) joins that transaction. It returns the event's
// outcome, encoded by the caller; undo discards the writes it made but
// still records the event as applied (an event whose deterministic
// outcome is a domain error changes nothing). An error aborts the whole
// transaction: the event is not applied and may be tried again.
type ApplyFunc func(ctx context.Context) (result []byte, undo bool, err error)

// ApplyEvent applies the event at seq of stream with fn, unless this
// store has already applied seq (then applied is false and fn is not
// called). The effect of fn, the outcome and the new applied sequence
// commit together in one BEGIN IMMEDIATE transaction. Events must be
// applied in stream order; a seq at or below the applied one is skipped.
func (d *DB) ApplyEvent(ctx context.Context, stream string, seq uint64, fn ApplyFunc) (applied bool, err error) {
	err = d.write(ctx, func(conn *sql.Conn) error {
		last, err := appliedSeq(ctx, conn, stream)
		if err != nil {
			return err
		}
		if seq <= last {
			return nil
		}
		if _, err := conn.ExecContext(ctx, `SAVEPOINT apply_event`); err != nil {
			return storeError(ctx, "starting to apply a replicated event", err)
		}
		result, undo, err := fn(context.WithValue(ctx, applyKey{}, applyTx{db: d, conn: conn}))
		if err != nil {
			return err
		}
		if undo {
			if _, err := conn.ExecContext(ctx, `ROLLBACK TO apply_event`); err != nil {
				return storeError(ctx, "undoing a replicated event", err)
			}
		}
		if _, err := conn.ExecContext(ctx, `RELEASE apply_event`); err != nil {
			return storeError(ctx, "applying a replicated event", err)
		}
		if result == nil {
			result = []byte{}
		}
		if _, err := conn.ExecContext(ctx, `INSERT OR REPLACE INTO replication_results (stream, seq, result) VALUES (?, ?, ?)`,
			stream, int64(seq), result); err != nil {
			return storeError(ctx, "recording a replicated event's outcome", err)
		}
		if _, err := conn.ExecContext(ctx, `INSERT INTO replication_applied (stream, seq) VALUES (?, ?)
			ON CONFLICT (stream) DO UPDATE SET seq = excluded.seq`, stream, int64(seq)); err != nil {
			return storeError(ctx, "recording the applied sequence", err)
		}
		if seq%replicationTrimEvery == 0 && seq > replicationResultsKept {
			if _, err := conn.ExecContext(ctx, `DELETE FROM replication_results WHERE stream = ? AND seq <= ?`,
				stream, int64(seq-replicationResultsKept)); err != nil {
				return storeError(ctx, "trimming replicated outcomes", err)
			}
		}
		applied = true
		return nil
	})
	return applied, err
}

func appliedSeq(ctx context.Context, q querier, stream string) (uint64, error) {
	var last int64
	switch err := q.QueryRowContext(ctx, `SELECT seq FROM replication_applied WHERE stream = ?`, stream).Scan(&last); {
	case err == nil:
		return uint64(last), nil
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	default:
		return 0, storeError(ctx, "reading the applied sequence of "+stream, err)
	}
}

// AppliedSeq returns the last sequence of stream applied to this store (0
// for none).
func (d *DB) AppliedSeq(ctx context.Context, stream string) (seq uint64, err error) {
	err = d.read(ctx, func(tx *sql.Tx) error {
		seq, err = appliedSeq(ctx, tx, stream)
		return err
	})
	return seq, err
}

// EventResult returns the outcome recorded for the event at seq of stream;
// found is false when that event was not applied here or its outcome was
// trimmed (it is kept for the last 4096 sequences).
func (d *DB) EventResult(ctx context.Context, stream string, seq uint64) (result []byte, found bool, err error) {
	db, err := d.handle(ctx)
	if err != nil {
		return nil, false, err
	}
	switch err := db.QueryRowContext(ctx, `SELECT result FROM replication_results WHERE stream = ? AND seq = ?`,
		stream, int64(seq)).Scan(&result); {
	case err == nil:
		return result, true, nil
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	default:
		return nil, false, storeError(ctx, "reading a replicated event's outcome", err)
	}
}
