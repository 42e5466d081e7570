package store

import (
	"context"
	"database/sql"
	"strconv"
	"sync"
)

// The change feed: every write to memory_entries, sessions or
// trace_batches adds a row to changes from a trigger, so the row commits
// (or rolls back) with the write, whichever process made it. A reader
// remembers the last seq it saw and asks for what follows (ChangesSince);
// Watcher does that while someone cares.

// Domains of a Change.
const (
	ChangeMemory  = "memory"  // Scope is the namespace, Key the key
	ChangeSession = "session" // Key is the session id
	ChangeTrace   = "trace"   // Key is a batch id (Scope "batch"), or "" when any trace may have changed
)

// ChangeScopeBatch is the Scope of a trace change that names the batch
// written: its trace ids are BatchTraceIDs.
const ChangeScopeBatch = "batch"

// Change is one row of the change feed.
type Change struct {
	// Seq orders the changes: it increases by one with every change, in
	// commit order across processes.
	Seq    int64
	Domain string
	Scope  string
	Key    string
}

// Retention of the change feed: every changesTrimEvery-th change deletes
// the changes more than changesKept behind it, so the table holds at most
// changesKept+changesTrimEvery rows. A reader that falls further behind
// is told it missed some (ChangesSince's gap).
const (
	changesKept      = 4096
	changesTrimEvery = 256
)

// changeFeedSchema is migration 5.
var changeFeedSchema = []string{
	`CREATE TABLE changes (
		seq    INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused, even after trimming
		domain TEXT NOT NULL,
		scope  TEXT NOT NULL,
		key    TEXT NOT NULL
	)`,
	`CREATE TRIGGER changes_trim AFTER INSERT ON changes WHEN NEW.seq % ` + strconv.Itoa(changesTrimEvery) + ` = 0 BEGIN
		DELETE FROM changes WHERE seq <= NEW.seq - ` + strconv.Itoa(changesKept) + `;
	END`,
	`CREATE TRIGGER memory_entries_inserted AFTER INSERT ON memory_entries BEGIN
		INSERT INTO changes (domain, scope, key) VALUES ('memory', NEW.namespace, NEW.key);
	END`,
	`CREATE TRIGGER memory_entries_updated AFTER UPDATE ON memory_entries BEGIN
		INSERT INTO changes (domain, scope, key) VALUES ('memory', NEW.namespace, NEW.key);
	END`,
	`CREATE TRIGGER memory_entries_deleted AFTER DELETE ON memory_entries BEGIN
		INSERT INTO changes (domain, scope, key) VALUES ('memory', OLD.namespace, OLD.key);
	END`,
	`CREATE TRIGGER sessions_inserted AFTER INSERT ON sessions BEGIN
		INSERT INTO changes (domain, scope, key) VALUES ('session', '', NEW.id);
	END`,
	`CREATE TRIGGER sessions_updated AFTER UPDATE ON sessions BEGIN
		INSERT INTO changes (domain, scope, key) VALUES ('session', '', NEW.id);
	END`,
	`CREATE TRIGGER sessions_deleted AFTER DELETE ON sessions BEGIN
		INSERT INTO changes (domain, scope, key) VALUES ('session', '', OLD.id);
	END`,
	// A new batch names itself; a rewritten or deleted one (pruning) may
	// have taken events of any trace.
	`CREATE TRIGGER trace_batches_inserted AFTER INSERT ON trace_batches BEGIN
		INSERT INTO changes (domain, scope, key) VALUES ('trace', 'batch', CAST(NEW.id AS TEXT));
	END`,
	`CREATE TRIGGER trace_batches_updated AFTER UPDATE ON trace_batches BEGIN
		INSERT INTO changes (domain, scope, key) VALUES ('trace', '', '');
	END`,
	`CREATE TRIGGER trace_batches_deleted AFTER DELETE ON trace_batches BEGIN
		INSERT INTO changes (domain, scope, key) VALUES ('trace', '', '');
	END`,
}

// LastChange returns the seq of the newest change (0 when there is none):
// the point from which a reader that only cares about what happens next
// starts.
func (d *DB) LastChange(ctx context.Context) (int64, error) {
	db, err := d.handle(ctx)
	if err != nil {
		return 0, err
	}
	var seq int64
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM changes`).Scan(&seq); err != nil {
		return 0, storeError(ctx, "reading the end of the change feed", err)
	}
	return seq, nil
}

// ChangesSince returns, in seq order, at most limit changes after seq
// after. gap reports that changes after `after` were trimmed before they
// could be read: anything may have changed since.
func (d *DB) ChangesSince(ctx context.Context, after int64, limit int) (changes []Change, gap bool, err error) {
	const doing = "reading the change feed"
	err = d.read(ctx, func(tx *sql.Tx) error {
		var oldest sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MIN(seq) FROM changes`).Scan(&oldest); err != nil {
			return storeError(ctx, doing, err)
		}
		// Seqs have no holes (AUTOINCREMENT, and a rolled-back insert
		// takes its seq back with it): a first row past after+1 means
		// the ones between were trimmed.
		gap = oldest.Valid && oldest.Int64 > after+1
		rows, err := tx.QueryContext(ctx, `SELECT seq, domain, scope, key FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
		if err != nil {
			return storeError(ctx, doing, err)
		}
		defer rows.Close()
		for rows.Next() {
			var c Change
			if err := rows.Scan(&c.Seq, &c.Domain, &c.Scope, &c.Key); err != nil {
				return storeError(ctx, doing, err)
			}
			changes = append(changes, c)
		}
		return storeError2(ctx, doing, rows.Err())
	})
	return changes, gap, err
}

// writeHooks are the functions called after each write transaction this
// DB commits.
type writeHooks struct {
	mu   sync.Mutex
	next int
	fns  map[int]func() // guarded by mu
}

// onWrite registers fn to be called after every write transaction d
// commits (not after rolled-back ones); fn must not block. The returned
// function unregisters it.
func (d *DB) onWrite(fn func()) (remove func()) {
	h := &d.hooks
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fns == nil {
		h.fns = map[int]func(){}
	}
	id := h.next
	h.next++
	h.fns[id] = fn
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.fns, id)
	}
}

// wrote runs the write hooks.
func (d *DB) wrote() {
	h := &d.hooks
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, fn := range h.fns {
		fn()
	}
}
