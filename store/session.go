package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/session"
)

// Sessions is the SQLite session.Store: one row per session in sessions,
// its participants in session_participants (ord keeps join order) and its
// applied policies in session_policies. Update rewrites all three inside
// one BEGIN IMMEDIATE transaction, so concurrent updates from several
// processes serialise and none is lost.
type Sessions struct{ db *DB }

var _ session.Store = (*Sessions)(nil)

// Sessions returns the session.Store of d.
func (d *DB) Sessions() *Sessions { return &Sessions{db: d} }

// nullNanos stores a zero time as NULL.
func nullNanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return nanos(t)
}

// Create implements session.Store.
func (s *Sessions) Create(ctx context.Context, sess session.Session) error {
	return s.db.write(ctx, func(conn *sql.Conn) error {
		var meta any
		if sess.Metadata != nil {
			meta = string(sess.Metadata)
		}
		if _, err := conn.ExecContext(ctx, `INSERT INTO sessions (id, initiator, task, workspace, metadata, status,
			created_at, updated_at, completed_at, summary, failure_reason, seq)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM sessions))`,
			sess.ID, sess.Initiator, sess.Task, sess.Workspace, meta, string(sess.Status),
			nanos(sess.CreatedAt), nanos(sess.UpdatedAt), nullNanos(sess.CompletedAt), sess.Summary, sess.FailureReason); err != nil {
			return storeError(ctx, "creating session "+sess.ID, err)
		}
		return writeChildren(ctx, conn, sess)
	})
}

// writeChildren replaces the participant and policy rows of sess.
func writeChildren(ctx context.Context, conn *sql.Conn, sess session.Session) error {
	if _, err := conn.ExecContext(ctx, `DELETE FROM session_participants WHERE session_id = ?`, sess.ID); err != nil {
		return storeError(ctx, "rewriting participants of "+sess.ID, err)
	}
	for i, p := range sess.Participants {
		if _, err := conn.ExecContext(ctx, `INSERT INTO session_participants (session_id, agent_id, role, joined_at, task_count, ord)
			VALUES (?, ?, ?, ?, ?, ?)`, sess.ID, p.AgentID, p.Role, nanos(p.JoinedAt), p.TaskCount, i); err != nil {
			return storeError(ctx, "writing participant "+p.AgentID+" of "+sess.ID, err)
		}
	}
	if _, err := conn.ExecContext(ctx, `DELETE FROM session_policies WHERE session_id = ?`, sess.ID); err != nil {
		return storeError(ctx, "rewriting policies of "+sess.ID, err)
	}
	for _, p := range sess.Policies {
		if _, err := conn.ExecContext(ctx, `INSERT INTO session_policies (session_id, policy_id, applied_at) VALUES (?, ?, ?)`,
			sess.ID, p.PolicyID, nanos(p.AppliedAt)); err != nil {
			return storeError(ctx, "writing policy "+p.PolicyID+" of "+sess.ID, err)
		}
	}
	return nil
}

// loadSession reads a session and its children through q.
func loadSession(ctx context.Context, q querier, id string) (session.Session, error) {
	var (
		sess             session.Session
		meta             sql.NullString
		status           string
		created, updated int64
		completed        sql.NullInt64
	)
	err := q.QueryRowContext(ctx, `SELECT id, initiator, task, workspace, metadata, status, created_at, updated_at,
		completed_at, summary, failure_reason FROM sessions WHERE id = ?`, id).
		Scan(&sess.ID, &sess.Initiator, &sess.Task, &sess.Workspace, &meta, &status, &created, &updated,
			&completed, &sess.Summary, &sess.FailureReason)
	if errors.Is(err, sql.ErrNoRows) {
		return session.Session{}, session.ErrNotFound
	}
	if err != nil {
		return session.Session{}, storeError(ctx, "reading session "+id, err)
	}
	sess.Status = session.Status(status)
	sess.CreatedAt, sess.UpdatedAt = fromNanos(created), fromNanos(updated)
	if completed.Valid {
		sess.CompletedAt = fromNanos(completed.Int64)
	}
	if meta.Valid {
		sess.Metadata = []byte(meta.String)
	}
	rows, err := q.QueryContext(ctx, `SELECT agent_id, role, joined_at, task_count FROM session_participants
		WHERE session_id = ? ORDER BY ord`, id)
	if err != nil {
		return session.Session{}, storeError(ctx, "reading participants of "+id, err)
	}
	sess.Participants = []session.Participant{}
	for rows.Next() {
		var p session.Participant
		var joined int64
		if err := rows.Scan(&p.AgentID, &p.Role, &joined, &p.TaskCount); err != nil {
			rows.Close()
			return session.Session{}, storeError(ctx, "reading participants of "+id, err)
		}
		p.JoinedAt = fromNanos(joined)
		sess.Participants = append(sess.Participants, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return session.Session{}, storeError(ctx, "reading participants of "+id, err)
	}
	rows, err = q.QueryContext(ctx, `SELECT policy_id, applied_at FROM session_policies WHERE session_id = ? ORDER BY applied_at, policy_id`, id)
	if err != nil {
		return session.Session{}, storeError(ctx, "reading policies of "+id, err)
	}
	defer rows.Close()
	sess.Policies = []session.AppliedPolicy{}
	for rows.Next() {
		var p session.AppliedPolicy
		var at int64
		if err := rows.Scan(&p.PolicyID, &at); err != nil {
			return session.Session{}, storeError(ctx, "reading policies of "+id, err)
		}
		p.AppliedAt = fromNanos(at)
		sess.Policies = append(sess.Policies, p)
	}
	return sess, storeError2(ctx, "reading policies of "+id, rows.Err())
}

// Get implements session.Store.
func (s *Sessions) Get(ctx context.Context, id string) (sess session.Session, err error) {
	err = s.db.read(ctx, func(tx *sql.Tx) error {
		sess, err = loadSession(ctx, tx, id)
		return err
	})
	return sess, err
}

// List implements session.Store.
func (s *Sessions) List(ctx context.Context, f session.Filter) (page []session.Summary, total int, err error) {
	where, args := "1", []any{}
	if f.Status != "" {
		where += " AND status = ?"
		args = append(args, string(f.Status))
	}
	if f.Initiator != "" {
		where += " AND initiator = ?"
		args = append(args, f.Initiator)
	}
	err = s.db.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions WHERE `+where, args...).Scan(&total); err != nil {
			return storeError(ctx, "counting sessions", err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, initiator, task, status, created_at,
			(SELECT COUNT(*) FROM session_participants p WHERE p.session_id = sessions.id)
			FROM sessions WHERE `+where+` ORDER BY created_at DESC, seq DESC LIMIT ?`, append(args, f.Limit)...)
		if err != nil {
			return storeError(ctx, "listing sessions", err)
		}
		defer rows.Close()
		page = []session.Summary{}
		for rows.Next() {
			var sum session.Summary
			var status string
			var created int64
			if err := rows.Scan(&sum.ID, &sum.Initiator, &sum.Task, &status, &created, &sum.ParticipantCount); err != nil {
				return storeError(ctx, "listing sessions", err)
			}
			sum.Status, sum.CreatedAt = session.Status(status), fromNanos(created)
			page = append(page, sum)
		}
		return storeError2(ctx, "listing sessions", rows.Err())
	})
	return page, total, err
}

// Update implements session.Store.
func (s *Sessions) Update(ctx context.Context, id string, fn func(*session.Session) error) (out session.Session, err error) {
	err = s.db.write(ctx, func(conn *sql.Conn) error {
		sess, err := loadSession(ctx, conn, id)
		if err != nil {
			return err
		}
		if err := fn(&sess); err != nil {
			return err
		}
		var meta any
		if sess.Metadata != nil {
			meta = string(sess.Metadata)
		}
		res, err := conn.ExecContext(ctx, `UPDATE sessions SET initiator = ?, task = ?, workspace = ?, metadata = ?, status = ?,
			updated_at = ?, completed_at = ?, summary = ?, failure_reason = ? WHERE id = ?`,
			sess.Initiator, sess.Task, sess.Workspace, meta, string(sess.Status), nanos(sess.UpdatedAt),
			nullNanos(sess.CompletedAt), sess.Summary, sess.FailureReason, id)
		if err != nil {
			return storeError(ctx, "updating session "+id, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return core.Errorf(core.CodeInternal, "store: updating session %s changed %d rows (%v), want 1", id, n, err)
		}
		if err := writeChildren(ctx, conn, sess); err != nil {
			return err
		}
		out = sess
		return nil
	})
	return out, err
}
