package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/reservation"
)

// reservationSchema is the table of file reservations. A lease is active
// while released_at is NULL and expires_at lies after the time of the
// query; ending one (released or found expired by a write) sets
// released_at, released_by and release_reason, so every lease keeps the
// record of its end. The partial indexes hold only unreleased rows: the
// conflict query walks the prefix index, the agent index serves the
// per-agent limit and lists.
var reservationSchema = []string{
	`CREATE TABLE reservations (
		id             TEXT    PRIMARY KEY,
		agent_id       TEXT    NOT NULL,
		pattern        TEXT    NOT NULL,
		prefix         TEXT    NOT NULL, -- literal directory prefix of pattern
		exclusive      INTEGER NOT NULL,
		reason         TEXT    NOT NULL,
		idem_key       TEXT    NOT NULL,
		created_at     INTEGER NOT NULL, -- Unix nanoseconds, UTC
		expires_at     INTEGER NOT NULL,
		released_at    INTEGER,
		released_by    TEXT    NOT NULL,
		release_reason TEXT    NOT NULL
	)`,
	`CREATE INDEX reservations_prefix ON reservations (prefix) WHERE released_at IS NULL`,
	`CREATE INDEX reservations_agent ON reservations (agent_id, pattern) WHERE released_at IS NULL`,
	`CREATE INDEX reservations_expiry ON reservations (expires_at) WHERE released_at IS NULL`,
	`CREATE INDEX reservations_idem ON reservations (agent_id, idem_key) WHERE idem_key <> ''`,
}

// Reservations is the SQLite reservation.Store. Reserve runs in one BEGIN
// IMMEDIATE transaction, so concurrent reserves from several processes
// on one data directory serialise: the second sees the first's leases.
type Reservations struct{ db *DB }

var _ reservation.Store = (*Reservations)(nil)

// Reservations returns the reservation.Store of d.
func (d *DB) Reservations() *Reservations { return &Reservations{db: d} }

const leaseCols = `id, agent_id, pattern, prefix, exclusive, reason, idem_key, created_at, expires_at,
	released_at, released_by, release_reason`

func scanLease(rows interface{ Scan(...any) error }) (reservation.Lease, error) {
	var (
		l                reservation.Lease
		excl             int
		created, expires int64
		released         sql.NullInt64
	)
	if err := rows.Scan(&l.ID, &l.AgentID, &l.Pattern, &l.Prefix, &excl, &l.Reason, &l.IdempotencyKey, &created, &expires,
		&released, &l.ReleasedBy, &l.ReleaseReason); err != nil {
		return l, err
	}
	l.Exclusive, l.CreatedAt, l.ExpiresAt = excl != 0, fromNanos(created), fromNanos(expires)
	if released.Valid {
		l.ReleasedAt = fromNanos(released.Int64)
	}
	return l, nil
}

func queryLeases(ctx context.Context, q querier, doing, query string, args ...any) ([]reservation.Lease, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, storeError(ctx, doing, err)
	}
	defer rows.Close()
	var out []reservation.Lease
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, storeError(ctx, doing, err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, storeError(ctx, doing, err)
	}
	return out, nil
}

// leaseCandidates returns the active leases whose prefix is an ancestor of,
// equal to, or under p's prefix: the only ones that can overlap p. Both
// halves walk the prefix index; only a pattern without a literal prefix
// (such as **/*.go) reads every active lease.
func leaseCandidates(ctx context.Context, q querier, p reservation.Pattern, now time.Time) ([]reservation.Lease, error) {
	base := `SELECT ` + leaseCols + ` FROM reservations INDEXED BY reservations_prefix WHERE released_at IS NULL AND expires_at > ?`
	if p.Prefix == "" {
		return queryLeases(ctx, q, "reading reservations", base, nanos(now))
	}
	anc := []any{nanos(now), ""}
	for i := 0; i < len(p.Prefix); i++ {
		if p.Prefix[i] == '/' {
			anc = append(anc, p.Prefix[:i])
		}
	}
	anc = append(anc, p.Prefix)
	args := append(anc, nanos(now), p.Prefix+"/", p.Prefix+"0")
	return queryLeases(ctx, q, "reading reservations",
		base+` AND prefix IN (?`+strings.Repeat(",?", len(anc)-2)+`) UNION ALL `+base+` AND prefix >= ? AND prefix < ?`, args...)
}

// leasePattern returns the Pattern of a stored lease: a literal path
// (its prefix is the whole pattern) needs no parsing.
func leasePattern(l reservation.Lease, cache map[string]reservation.Pattern) (reservation.Pattern, bool) {
	if l.Prefix == l.Pattern {
		return reservation.LiteralPattern(l.Pattern), true
	}
	if p, ok := cache[l.Pattern]; ok {
		return p, true
	}
	p, err := reservation.ParsePattern(l.Pattern)
	if err != nil {
		return p, false // written by a build with other rules: it cannot be judged, so it does not block
	}
	cache[l.Pattern] = p
	return p, true
}

// overlapping returns the conflicts of pats with the active leases not
// held by except; with onlyBlocking, only those that block a request of
// the given exclusivity.
func overlapping(ctx context.Context, q querier, pats []reservation.Pattern, except string, now time.Time,
	onlyBlocking, exclusive bool) ([]reservation.Conflict, error) {
	var out []reservation.Conflict
	parsed := map[string]reservation.Pattern{}
	for _, p := range pats {
		ls, err := leaseCandidates(ctx, q, p, now)
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			if l.AgentID == except || onlyBlocking && !exclusive && !l.Exclusive {
				continue
			}
			lp, ok := leasePattern(l, parsed)
			if !ok {
				continue
			}
			if reservation.Overlap(p, lp) {
				out = append(out, reservation.Conflict{Path: p.Text, Lease: l})
			}
		}
	}
	return out, nil
}

// Reserve implements reservation.Store.
func (s *Reservations) Reserve(ctx context.Context, op reservation.ReserveOp) ([]reservation.Lease, []reservation.Conflict, error) {
	var (
		granted   []reservation.Lease
		conflicts []reservation.Conflict
	)
	err := s.db.write(ctx, func(conn *sql.Conn) error {
		granted, conflicts = nil, nil
		now := nanos(op.Now)
		if op.IdempotencyKey != "" {
			ls, err := queryLeases(ctx, conn, "reading an idempotent reserve",
				`SELECT `+leaseCols+` FROM reservations WHERE agent_id = ? AND idem_key = ? ORDER BY rowid`, op.AgentID, op.IdempotencyKey)
			if err != nil {
				return err
			}
			if len(ls) > 0 {
				granted = ls
				return nil
			}
		}
		// Leases found expired end here, so the active indexes stay small.
		if _, err := conn.ExecContext(ctx, `UPDATE reservations SET released_at = expires_at, release_reason = 'expired'
			WHERE released_at IS NULL AND expires_at <= ?`, now); err != nil {
			return storeError(ctx, "ending expired reservations", err)
		}
		var err error
		if conflicts, err = overlapping(ctx, conn, op.Patterns, op.AgentID, op.Now, true, op.Exclusive); err != nil || len(conflicts) > 0 {
			return err
		}
		var held int
		if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM reservations WHERE agent_id = ? AND released_at IS NULL`,
			op.AgentID).Scan(&held); err != nil {
			return storeError(ctx, "counting reservations", err)
		}
		for _, p := range op.Patterns {
			var id string
			err := conn.QueryRowContext(ctx, `SELECT id FROM reservations WHERE agent_id = ? AND pattern = ? AND released_at IS NULL`,
				op.AgentID, p.Text).Scan(&id)
			switch {
			case err == sql.ErrNoRows:
				if held >= op.MaxPerAgent {
					return core.NewError(core.CodeResourceExhausted, fmt.Sprintf(
						"paths: %s already holds %d active reservations, the limit (coord.maxReservationsPerAgent): release some, or reserve broader globs such as src/**",
						op.AgentID, held)).WithDetail("limit", op.MaxPerAgent)
				}
				held++
				id = op.NewID()
				if _, err := conn.ExecContext(ctx, `INSERT INTO reservations (`+leaseCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, '', '')`,
					id, op.AgentID, p.Text, p.Prefix, op.Exclusive, op.Reason, op.IdempotencyKey, now, nanos(op.ExpiresAt)); err != nil {
					return storeError(ctx, "writing a reservation", err)
				}
			case err != nil:
				return storeError(ctx, "reading a reservation", err)
			default:
				if _, err := conn.ExecContext(ctx, `UPDATE reservations SET exclusive = ?, reason = ?, idem_key = ?, expires_at = ? WHERE id = ?`,
					op.Exclusive, op.Reason, op.IdempotencyKey, nanos(op.ExpiresAt), id); err != nil {
					return storeError(ctx, "renewing a reservation", err)
				}
			}
			l, err := scanLease(conn.QueryRowContext(ctx, `SELECT `+leaseCols+` FROM reservations WHERE id = ?`, id))
			if err != nil {
				return storeError(ctx, "reading a reservation", err)
			}
			granted = append(granted, l)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return granted, conflicts, nil
}

// Overlapping implements reservation.Store.
func (s *Reservations) Overlapping(ctx context.Context, pats []reservation.Pattern, except string, now time.Time) ([]reservation.Conflict, error) {
	var out []reservation.Conflict
	err := s.db.read(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = overlapping(ctx, tx, pats, except, now, false, false)
		return err
	})
	return out, err
}

// idFilter returns " AND id IN (...)" and its arguments, or "" for none.
func idFilter(ids []string) (string, []any) {
	if len(ids) == 0 {
		return "", nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return ` AND id IN (?` + strings.Repeat(",?", len(ids)-1) + `)`, args
}

// Renew implements reservation.Store.
func (s *Reservations) Renew(ctx context.Context, agentID string, ids []string, now, expiresAt time.Time) ([]reservation.Lease, error) {
	var out []reservation.Lease
	err := s.db.write(ctx, func(conn *sql.Conn) error {
		f, fargs := idFilter(ids)
		where := ` WHERE agent_id = ? AND released_at IS NULL AND expires_at > ?` + f
		args := append([]any{agentID, nanos(now)}, fargs...)
		var err error
		if out, err = queryLeases(ctx, conn, "reading reservations", `SELECT `+leaseCols+` FROM reservations`+where+` ORDER BY rowid`, args...); err != nil {
			return err
		}
		if _, err := conn.ExecContext(ctx, `UPDATE reservations SET expires_at = ?`+where, append([]any{nanos(expiresAt)}, args...)...); err != nil {
			return storeError(ctx, "renewing reservations", err)
		}
		for i := range out {
			out[i].ExpiresAt = expiresAt.UTC()
		}
		return nil
	})
	return out, err
}

// Release implements reservation.Store.
func (s *Reservations) Release(ctx context.Context, agentID string, ids []string, by, reason string, now time.Time) ([]reservation.Lease, error) {
	var out []reservation.Lease
	err := s.db.write(ctx, func(conn *sql.Conn) error {
		f, fargs := idFilter(ids)
		where := ` WHERE released_at IS NULL AND expires_at > ?` + f
		args := append([]any{nanos(now)}, fargs...)
		if agentID != "" {
			where += ` AND agent_id = ?`
			args = append(args, agentID)
		}
		var err error
		if out, err = queryLeases(ctx, conn, "reading reservations", `SELECT `+leaseCols+` FROM reservations`+where+` ORDER BY rowid`, args...); err != nil {
			return err
		}
		if _, err := conn.ExecContext(ctx, `UPDATE reservations SET released_at = ?, released_by = ?, release_reason = ?`+where,
			append([]any{nanos(now), by, reason}, args...)...); err != nil {
			return storeError(ctx, "releasing reservations", err)
		}
		for i := range out {
			out[i].ReleasedAt, out[i].ReleasedBy, out[i].ReleaseReason = now.UTC(), by, reason
		}
		return nil
	})
	return out, err
}

// Get implements reservation.Store.
func (s *Reservations) Get(ctx context.Context, id string) (reservation.Lease, bool, error) {
	var (
		l  reservation.Lease
		ok bool
	)
	err := s.db.read(ctx, func(tx *sql.Tx) error {
		ls, err := queryLeases(ctx, tx, "reading a reservation", `SELECT `+leaseCols+` FROM reservations WHERE id = ?`, id)
		if len(ls) > 0 {
			l, ok = ls[0], true
		}
		return err
	})
	return l, ok, err
}

// List implements reservation.Store.
func (s *Reservations) List(ctx context.Context, agentID string, now time.Time, limit int) ([]reservation.Lease, int, error) {
	var (
		out   []reservation.Lease
		total int
	)
	err := s.db.read(ctx, func(tx *sql.Tx) error {
		where := ` WHERE released_at IS NULL AND expires_at > ?`
		args := []any{nanos(now)}
		if agentID != "" {
			where += ` AND agent_id = ?`
			args = append(args, agentID)
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM reservations`+where, args...).Scan(&total); err != nil {
			return storeError(ctx, "counting reservations", err)
		}
		var err error
		out, err = queryLeases(ctx, tx, "reading reservations", `SELECT `+leaseCols+` FROM reservations`+where+` ORDER BY rowid LIMIT ?`,
			append(args, limit)...)
		return err
	})
	return out, total, err
}
