package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/mcprt/mcprt/domain/memory"
)

// Memory is the SQLite memory.Store. Values live in memory_entries; a
// full-text index of each value's text (memory.IndexText) lives in the FTS5
// table memory_fts under the same rowid, written in the same transaction.
type Memory struct {
	db   *DB
	keys keyTuning
}

var _ memory.Store = (*Memory)(nil)

// Memory returns the memory.Store of d.
func (d *DB) Memory() *Memory { return &Memory{db: d, keys: defaultKeyTuning} }

// querier is what *sql.Conn and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func nanos(t time.Time) int64     { return t.UTC().UnixNano() }
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// Put implements memory.Store.
func (m *Memory) Put(ctx context.Context, e memory.Entry) (replaced bool, err error) {
	err = m.db.write(ctx, func(conn *sql.Conn) error {
		var err error
		replaced, err = putEntry(ctx, conn, e, false)
		return err
	})
	return replaced, err
}

// putEntry writes e and its index row. With skipExisting an existing entry
// is kept. It reports whether an entry existed.
func putEntry(ctx context.Context, q querier, e memory.Entry, skipExisting bool) (existed bool, err error) {
	var id int64
	switch err := q.QueryRowContext(ctx, `SELECT id FROM memory_entries WHERE namespace = ? AND key = ?`, e.Namespace, e.Key).Scan(&id); err {
	case nil:
		existed = true
	case sql.ErrNoRows:
	default:
		return false, storeError(ctx, "looking up "+e.Address(), err)
	}
	if existed && skipExisting {
		return true, nil
	}
	const nextRev = `(SELECT COALESCE(MAX(rev), 0) + 1 FROM memory_entries)`
	if existed {
		if _, err := q.ExecContext(ctx, `UPDATE memory_entries SET value = ?, size = ?, stored_at = ?, rev = `+nextRev+` WHERE id = ?`,
			string(e.Value), len(e.Value), nanos(e.StoredAt), id); err != nil {
			return true, storeError(ctx, "overwriting "+e.Address(), err)
		}
		if _, err := q.ExecContext(ctx, `DELETE FROM memory_fts WHERE rowid = ?`, id); err != nil {
			return true, storeError(ctx, "unindexing "+e.Address(), err)
		}
	} else {
		res, err := q.ExecContext(ctx, `INSERT INTO memory_entries (namespace, key, value, size, stored_at, rev) VALUES (?, ?, ?, ?, ?, `+nextRev+`)`,
			e.Namespace, e.Key, string(e.Value), len(e.Value), nanos(e.StoredAt))
		if err != nil {
			return false, storeError(ctx, "inserting "+e.Address(), err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return false, storeError(ctx, "inserting "+e.Address(), err)
		}
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO memory_fts (rowid, body) VALUES (?, ?)`, id, memory.IndexText(e.Value)); err != nil {
		return existed, storeError(ctx, "indexing "+e.Address(), err)
	}
	return existed, nil
}

// Get implements memory.Store. One statement is atomic: no transaction.
func (m *Memory) Get(ctx context.Context, namespace, key string) (memory.Entry, bool, error) {
	db, err := m.db.handle(ctx)
	if err != nil {
		return memory.Entry{}, false, err
	}
	var value string
	var at int64
	switch err := db.QueryRowContext(ctx, `SELECT value, stored_at FROM memory_entries WHERE namespace = ? AND key = ?`, namespace, key).Scan(&value, &at); err {
	case nil:
		return memory.Entry{Namespace: namespace, Key: key, Value: []byte(value), StoredAt: fromNanos(at)}, true, nil
	case sql.ErrNoRows:
		return memory.Entry{}, false, nil
	default:
		return memory.Entry{}, false, storeError(ctx, "reading "+namespace+":"+key, err)
	}
}

// Delete implements memory.Store.
func (m *Memory) Delete(ctx context.Context, namespace, key string) (deleted bool, err error) {
	err = m.db.write(ctx, func(conn *sql.Conn) error {
		var id int64
		switch err := conn.QueryRowContext(ctx, `SELECT id FROM memory_entries WHERE namespace = ? AND key = ?`, namespace, key).Scan(&id); err {
		case nil:
		case sql.ErrNoRows:
			return nil
		default:
			return storeError(ctx, "looking up "+namespace+":"+key, err)
		}
		if _, err := conn.ExecContext(ctx, `DELETE FROM memory_entries WHERE id = ?`, id); err != nil {
			return storeError(ctx, "deleting "+namespace+":"+key, err)
		}
		if _, err := conn.ExecContext(ctx, `DELETE FROM memory_fts WHERE rowid = ?`, id); err != nil {
			return storeError(ctx, "unindexing "+namespace+":"+key, err)
		}
		deleted = true
		return nil
	})
	return deleted, err
}

// nsFilter returns a WHERE clause fragment and its arguments for an
// optional namespace.
func nsFilter(col, namespace string) (string, []any) {
	if namespace == "" {
		return "1", nil
	}
	return col + " = ?", []any{namespace}
}

// List implements memory.Store.
func (m *Memory) List(ctx context.Context, q memory.ListQuery) (page memory.ListPage, err error) {
	where, args := nsFilter("namespace", q.Namespace)
	err = m.db.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM memory_entries WHERE `+where, args...).Scan(&page.Total); err != nil {
			return storeError(ctx, "counting entries", err)
		}
		order := `namespace, key`
		if q.Recent {
			order = `stored_at DESC, rev DESC`
		}
		rows, err := tx.QueryContext(ctx, `SELECT namespace, key, stored_at, size FROM memory_entries WHERE `+where+
			` ORDER BY `+order+` LIMIT ? OFFSET ?`, append(args, q.Limit, q.Offset)...)
		if err != nil {
			return storeError(ctx, "listing entries", err)
		}
		defer rows.Close()
		page.Entries = []memory.Info{}
		for rows.Next() {
			var in memory.Info
			var at int64
			if err := rows.Scan(&in.Namespace, &in.Key, &at, &in.Size); err != nil {
				return storeError(ctx, "listing entries", err)
			}
			in.StoredAt = fromNanos(at)
			page.Entries = append(page.Entries, in)
		}
		return storeError2(ctx, "listing entries", rows.Err())
	})
	return page, err
}

// storeError2 is storeError that passes a nil error through.
func storeError2(ctx context.Context, doing string, err error) error {
	if err == nil {
		return nil
	}
	return storeError(ctx, doing, err)
}

// ftsQuery makes an FTS5 query that matches every word of the query: each
// word becomes a quoted string, so no FTS5 operator or syntax in the user's
// text has any effect.
func ftsQuery(terms []string) string {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(quoted, " ")
}

// Search implements memory.Store.
func (m *Memory) Search(ctx context.Context, q memory.SearchQuery) (out []memory.Entry, err error) {
	err = m.db.read(ctx, func(tx *sql.Tx) error {
		var err error
		if !q.FullText {
			out, err = searchKeys(ctx, tx, q, m.keys)
			return err
		}
		where, nsArgs := nsFilter("e.namespace", q.Namespace)
		out, err = queryEntries(ctx, tx, `SELECT e.namespace, e.key, e.value, e.stored_at FROM memory_fts f JOIN memory_entries e ON e.id = f.rowid
			WHERE memory_fts MATCH ? AND `+where+` ORDER BY f.rank, e.stored_at DESC, e.rev DESC LIMIT ?`,
			append(append([]any{ftsQuery(memory.Terms(q.Query))}, nsArgs...), q.Limit)...)
		return err
	})
	return out, err
}

// Stats implements memory.Store.
func (m *Memory) Stats(ctx context.Context, namespace string) (st memory.Stats, err error) {
	where, args := nsFilter("namespace", namespace)
	err = m.db.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM memory_entries WHERE `+where, args...).
			Scan(&st.Entries, &st.Bytes); err != nil {
			return storeError(ctx, "summarising entries", err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT namespace, COUNT(*), SUM(size), MIN(stored_at), MAX(stored_at)
			FROM memory_entries WHERE `+where+` GROUP BY namespace ORDER BY namespace LIMIT ?`, append(args, memory.MaxNamespaces+1)...)
		if err != nil {
			return storeError(ctx, "summarising namespaces", err)
		}
		defer rows.Close()
		st.Namespaces = []memory.NamespaceStats{}
		for rows.Next() {
			var ns memory.NamespaceStats
			var oldest, newest int64
			if err := rows.Scan(&ns.Namespace, &ns.Entries, &ns.Bytes, &oldest, &newest); err != nil {
				return storeError(ctx, "summarising namespaces", err)
			}
			ns.Oldest, ns.Newest = fromNanos(oldest), fromNanos(newest)
			if len(st.Namespaces) == memory.MaxNamespaces {
				st.Truncated = true
				break
			}
			st.Namespaces = append(st.Namespaces, ns)
		}
		return storeError2(ctx, "summarising namespaces", rows.Err())
	})
	return st, err
}

// Scan implements memory.Store.
func (m *Memory) Scan(ctx context.Context, namespace string, fn func(memory.Entry) error) error {
	where, args := nsFilter("namespace", namespace)
	return m.db.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT namespace, key, value, stored_at FROM memory_entries WHERE `+where+` ORDER BY namespace, key`, args...)
		if err != nil {
			return storeError(ctx, "scanning entries", err)
		}
		defer rows.Close()
		for rows.Next() {
			var e memory.Entry
			var value string
			var at int64
			if err := rows.Scan(&e.Namespace, &e.Key, &value, &at); err != nil {
				return storeError(ctx, "scanning entries", err)
			}
			e.Value, e.StoredAt = []byte(value), fromNanos(at)
			if err := fn(e); err != nil {
				return err
			}
		}
		return storeError2(ctx, "scanning entries", rows.Err())
	})
}

// PutAll implements memory.Store.
func (m *Memory) PutAll(ctx context.Context, entries []memory.Entry, skipExisting bool) (c memory.ImportCounts, err error) {
	err = m.db.write(ctx, func(conn *sql.Conn) error {
		c = memory.ImportCounts{}
		for _, e := range entries {
			existed, err := putEntry(ctx, conn, e, skipExisting)
			if err != nil {
				return err
			}
			switch {
			case !existed:
				c.Created++
			case skipExisting:
				c.Skipped++
			default:
				c.Replaced++
			}
		}
		return nil
	})
	if err != nil {
		return memory.ImportCounts{}, err
	}
	return c, nil
}
