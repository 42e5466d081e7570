package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/task"
)

// taskSchema is the work queue: one row per task (rowid is posting
// order), its labels and dependencies, and one row per transition in
// task_events (the durable history).
var taskSchema = []string{
	`CREATE TABLE tasks (
		id          TEXT    PRIMARY KEY,
		title       TEXT    NOT NULL,
		description TEXT    NOT NULL,
		priority    INTEGER NOT NULL,
		poster      TEXT    NOT NULL,
		assignee    TEXT    NOT NULL, -- holder, or the designated claimant of an open task
		status      TEXT    NOT NULL,
		note        TEXT    NOT NULL,
		result      TEXT    NOT NULL,
		created_at  INTEGER NOT NULL, -- Unix nanoseconds, UTC
		updated_at  INTEGER NOT NULL
	)`,
	`CREATE INDEX tasks_queue ON tasks (status, priority DESC)`,
	`CREATE INDEX tasks_assignee ON tasks (assignee, status)`,
	`CREATE TABLE task_labels (
		task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
		label   TEXT NOT NULL,
		PRIMARY KEY (task_id, label)
	)`,
	`CREATE INDEX task_labels_label ON task_labels (label)`,
	`CREATE TABLE task_deps (
		task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
		dep_id  TEXT NOT NULL REFERENCES tasks (id),
		PRIMARY KEY (task_id, dep_id)
	)`,
	`CREATE TABLE task_events (
		id          INTEGER PRIMARY KEY,
		task_id     TEXT    NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
		at          INTEGER NOT NULL,
		agent_id    TEXT    NOT NULL,
		action      TEXT    NOT NULL,
		from_status TEXT    NOT NULL,
		to_status   TEXT    NOT NULL,
		assignee    TEXT    NOT NULL,
		note        TEXT    NOT NULL
	)`,
	`CREATE INDEX task_events_task ON task_events (task_id, id)`,
}

// Tasks is the SQLite task.Store. Every write runs in one BEGIN IMMEDIATE
// transaction, so two processes claiming at once serialise and the second
// sees the first's claim.
type Tasks struct{ db *DB }

var _ task.Store = (*Tasks)(nil)

// Tasks returns the task.Store of d.
func (d *DB) Tasks() *Tasks { return &Tasks{db: d} }

const taskCols = `id, title, description, priority, poster, assignee, status, note, result, created_at, updated_at`

func scanTask(r interface{ Scan(...any) error }) (task.Task, error) {
	var (
		t                task.Task
		status           string
		created, updated int64
	)
	if err := r.Scan(&t.ID, &t.Title, &t.Description, &t.Priority, &t.Poster, &t.Assignee, &status, &t.Note, &t.Result,
		&created, &updated); err != nil {
		return t, err
	}
	t.Status, t.CreatedAt, t.UpdatedAt = task.Status(status), fromNanos(created), fromNanos(updated)
	return t, nil
}

func strings1(ctx context.Context, q querier, doing, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, storeError(ctx, doing, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, storeError(ctx, doing, err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, storeError(ctx, doing, err)
	}
	return out, nil
}

// loadTask reads a task with its labels and dependencies, or
// TASK_NOT_FOUND.
func loadTask(ctx context.Context, q querier, id string) (task.Task, error) {
	t, err := scanTask(q.QueryRowContext(ctx, `SELECT `+taskCols+` FROM tasks WHERE id = ?`, id))
	if err == sql.ErrNoRows {
		return t, core.NewError(task.CodeNotFound, fmt.Sprintf("taskId: no task has id %q; task_list shows the tasks", id)).WithDetail("taskId", id)
	}
	if err != nil {
		return t, storeError(ctx, "reading task "+id, err)
	}
	if t.Labels, err = strings1(ctx, q, "reading labels", `SELECT label FROM task_labels WHERE task_id = ? ORDER BY label`, id); err != nil {
		return t, err
	}
	t.DependsOn, err = strings1(ctx, q, "reading dependencies", `SELECT dep_id FROM task_deps WHERE task_id = ? ORDER BY dep_id`, id)
	return t, err
}

func writeEvent(ctx context.Context, q querier, ev task.Event) error {
	if _, err := q.ExecContext(ctx, `INSERT INTO task_events (task_id, at, agent_id, action, from_status, to_status, assignee, note)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, ev.TaskID, nanos(ev.At), ev.AgentID, ev.Action, string(ev.From), string(ev.To), ev.Assignee, ev.Note); err != nil {
		return storeError(ctx, "recording a task transition", err)
	}
	return nil
}

func updateTask(ctx context.Context, q querier, t task.Task) error {
	if _, err := q.ExecContext(ctx, `UPDATE tasks SET assignee = ?, status = ?, note = ?, result = ?, updated_at = ? WHERE id = ?`,
		t.Assignee, string(t.Status), t.Note, t.Result, nanos(t.UpdatedAt), t.ID); err != nil {
		return storeError(ctx, "writing task "+t.ID, err)
	}
	return nil
}

// Create implements task.Store.
func (s *Tasks) Create(ctx context.Context, t task.Task, ev task.Event) error {
	return s.db.write(ctx, func(conn *sql.Conn) error {
		for _, d := range t.DependsOn {
			if _, err := loadTask(ctx, conn, d); err != nil {
				return core.AsError(err).WithDetail("field", "dependsOn")
			}
		}
		if _, err := conn.ExecContext(ctx, `INSERT INTO tasks (`+taskCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.Title, t.Description, t.Priority, t.Poster, t.Assignee, string(t.Status), t.Note, t.Result,
			nanos(t.CreatedAt), nanos(t.UpdatedAt)); err != nil {
			return storeError(ctx, "writing task "+t.ID, err)
		}
		for _, l := range t.Labels {
			if _, err := conn.ExecContext(ctx, `INSERT INTO task_labels (task_id, label) VALUES (?, ?)`, t.ID, l); err != nil {
				return storeError(ctx, "writing a label", err)
			}
		}
		for _, d := range t.DependsOn {
			if _, err := conn.ExecContext(ctx, `INSERT INTO task_deps (task_id, dep_id) VALUES (?, ?)`, t.ID, d); err != nil {
				return storeError(ctx, "writing a dependency", err)
			}
		}
		return writeEvent(ctx, conn, ev)
	})
}

func depStatuses(ctx context.Context, q querier, id string) (map[string]task.Status, error) {
	rows, err := q.QueryContext(ctx, `SELECT d.dep_id, t.status FROM task_deps d JOIN tasks t ON t.id = d.dep_id WHERE d.task_id = ?`, id)
	if err != nil {
		return nil, storeError(ctx, "reading dependencies", err)
	}
	defer rows.Close()
	out := map[string]task.Status{}
	for rows.Next() {
		var d, st string
		if err := rows.Scan(&d, &st); err != nil {
			return nil, storeError(ctx, "reading dependencies", err)
		}
		out[d] = task.Status(st)
	}
	return out, rows.Err()
}

// Mutate implements task.Store.
func (s *Tasks) Mutate(ctx context.Context, id string, fn func(t *task.Task, deps map[string]task.Status) (task.Event, error)) (task.Task, error) {
	var out task.Task
	err := s.db.write(ctx, func(conn *sql.Conn) error {
		t, err := loadTask(ctx, conn, id)
		if err != nil {
			return err
		}
		deps, err := depStatuses(ctx, conn, id)
		if err != nil {
			return err
		}
		ev, err := fn(&t, deps)
		if err != nil {
			return err
		}
		ev.TaskID = t.ID
		if err := updateTask(ctx, conn, t); err != nil {
			return err
		}
		out = t
		return writeEvent(ctx, conn, ev)
	})
	return out, err
}

// ClaimNext implements task.Store.
func (s *Tasks) ClaimNext(ctx context.Context, agentID string, labels []string, now time.Time) (task.Task, bool, error) {
	var (
		out task.Task
		ok  bool
	)
	err := s.db.write(ctx, func(conn *sql.Conn) error {
		// With labels, the tasks of the first label drive the search
		// (CROSS JOIN fixes the loop order), so a rare label does not
		// walk the whole queue.
		from, args := `tasks t`, []any{}
		if len(labels) > 0 {
			from, args = `task_labels first CROSS JOIN tasks t ON t.id = first.task_id AND first.label = ?`, []any{labels[0]}
		}
		q := `SELECT t.id FROM ` + from + ` WHERE t.status = 'open' AND (t.assignee = '' OR t.assignee = ?)
			AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks x ON x.id = d.dep_id WHERE d.task_id = t.id AND x.status <> 'done')`
		args = append(args, agentID)
		if len(labels) > 1 {
			q += ` AND (SELECT COUNT(*) FROM task_labels l WHERE l.task_id = t.id AND l.label IN (?` + strings.Repeat(",?", len(labels)-2) + `)) = ?`
			for _, l := range labels[1:] {
				args = append(args, l)
			}
			args = append(args, len(labels)-1)
		}
		var id string
		err := conn.QueryRowContext(ctx, q+` ORDER BY t.priority DESC, t.rowid LIMIT 1`, args...).Scan(&id)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return storeError(ctx, "finding a claimable task", err)
		}
		t, err := loadTask(ctx, conn, id)
		if err != nil {
			return err
		}
		t.Status, t.Assignee, t.UpdatedAt = task.StatusClaimed, agentID, now
		if err := updateTask(ctx, conn, t); err != nil {
			return err
		}
		out, ok = t, true
		return writeEvent(ctx, conn, task.Event{TaskID: id, At: now, AgentID: agentID, Action: "claimed", From: task.StatusOpen,
			To: task.StatusClaimed, Assignee: agentID})
	})
	return out, ok, err
}

// Get implements task.Store.
func (s *Tasks) Get(ctx context.Context, id string) (task.Task, []task.Event, error) {
	var (
		t   task.Task
		evs []task.Event
	)
	err := s.db.read(ctx, func(tx *sql.Tx) error {
		var err error
		if t, err = loadTask(ctx, tx, id); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT at, agent_id, action, from_status, to_status, assignee, note FROM
			(SELECT * FROM task_events WHERE task_id = ? ORDER BY id DESC LIMIT ?) ORDER BY id`, id, task.MaxHistory)
		if err != nil {
			return storeError(ctx, "reading task history", err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				e        task.Event
				at       int64
				from, to string
			)
			if err := rows.Scan(&at, &e.AgentID, &e.Action, &from, &to, &e.Assignee, &e.Note); err != nil {
				return storeError(ctx, "reading task history", err)
			}
			e.TaskID, e.At, e.From, e.To = id, fromNanos(at), task.Status(from), task.Status(to)
			evs = append(evs, e)
		}
		return rows.Err()
	})
	return t, evs, err
}

// List implements task.Store.
func (s *Tasks) List(ctx context.Context, f task.Filter) ([]task.Task, int, error) {
	var (
		out   []task.Task
		total int
	)
	err := s.db.read(ctx, func(tx *sql.Tx) error {
		where, args := ` WHERE 1 = 1`, []any{}
		if f.Status != "" {
			where += ` AND status = ?`
			args = append(args, string(f.Status))
		}
		if f.Assignee != "" {
			where += ` AND assignee = ?`
			args = append(args, f.Assignee)
		}
		if f.Label != "" {
			where += ` AND id IN (SELECT task_id FROM task_labels WHERE label = ?)`
			args = append(args, f.Label)
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks`+where, args...).Scan(&total); err != nil {
			return storeError(ctx, "counting tasks", err)
		}
		ids, err := strings1(ctx, tx, "listing tasks", `SELECT id FROM tasks`+where+` ORDER BY priority DESC, rowid LIMIT ?`, append(args, f.Limit)...)
		if err != nil {
			return err
		}
		for _, id := range ids {
			t, err := loadTask(ctx, tx, id)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return nil
	})
	return out, total, err
}

// Holders implements task.Store.
func (s *Tasks) Holders(ctx context.Context) ([]string, error) {
	var out []string
	err := s.db.read(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = strings1(ctx, tx, "reading task holders",
			`SELECT DISTINCT assignee FROM tasks WHERE status IN ('claimed', 'in_progress', 'blocked') ORDER BY assignee`)
		return err
	})
	return out, err
}

// ReleaseHolder implements task.Store.
func (s *Tasks) ReleaseHolder(ctx context.Context, agentID, by, note string, now time.Time) ([]task.Task, error) {
	var out []task.Task
	err := s.db.write(ctx, func(conn *sql.Conn) error {
		ids, err := strings1(ctx, conn, "reading held tasks",
			`SELECT id FROM tasks WHERE assignee = ? AND status IN ('claimed', 'in_progress', 'blocked') ORDER BY rowid`, agentID)
		if err != nil {
			return err
		}
		for _, id := range ids {
			t, err := loadTask(ctx, conn, id)
			if err != nil {
				return err
			}
			out = append(out, t)
			from := t.Status
			t.Status, t.Assignee, t.UpdatedAt = task.StatusOpen, "", now
			if err := updateTask(ctx, conn, t); err != nil {
				return err
			}
			if err := writeEvent(ctx, conn, task.Event{TaskID: id, At: now, AgentID: by, Action: "auto_released", From: from,
				To: task.StatusOpen, Note: note}); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}
