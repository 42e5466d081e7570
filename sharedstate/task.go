package sharedstate

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcprt/mcprt/domain/task"
	"github.com/mcprt/mcprt/store"
)

// DomainTask is the subject token of work-queue events.
const DomainTask = "task"

// Tasks is the task.Store of a node that shares the work queue. Create,
// ClaimNext and ReleaseHolder are events decided where they land in the
// stream (so two machines never claim one task); Mutate, whose change is
// a function, is decided locally and published with Decide. Reads are
// the local store's.
type Tasks struct {
	r     *Replicator
	local *store.Tasks
}

var _ task.Store = (*Tasks)(nil)

type taskCreate struct {
	Task  task.Task  `json:"task"`
	Event task.Event `json:"event"`
}

type taskSet struct {
	ID    string     `json:"id"`
	Task  task.Task  `json:"task"`
	Event task.Event `json:"event"`
}

type taskClaim struct {
	AgentID string    `json:"agentId"`
	Labels  []string  `json:"labels"`
	Now     time.Time `json:"now"`
}

type taskClaimed struct {
	Task task.Task `json:"task"`
	OK   bool      `json:"ok"`
}

type taskReleaseHolder struct {
	AgentID string    `json:"agentId"`
	By      string    `json:"by"`
	Note    string    `json:"note"`
	Now     time.Time `json:"now"`
}

// errDecided ends a dry run: the change was computed and is not written
// locally (it travels as an event).
var errDecided = errors.New("sharedstate: decided")

// NewTasks registers the work-queue events on r and returns the shared
// task.Store over local.
func NewTasks(r *Replicator, local *store.Tasks) *Tasks {
	r.Handle("task.create", func(ctx context.Context, data json.RawMessage) (any, error) {
		var op taskCreate
		if err := decode(data, &op); err != nil {
			return nil, err
		}
		return nil, local.Create(ctx, op.Task, op.Event)
	})
	r.Handle("task.set", func(ctx context.Context, data json.RawMessage) (any, error) {
		var op taskSet
		if err := decode(data, &op); err != nil {
			return nil, err
		}
		return local.Mutate(ctx, op.ID, func(t *task.Task, _ map[string]task.Status) (task.Event, error) {
			*t = op.Task
			return op.Event, nil
		})
	})
	r.Handle("task.claimNext", func(ctx context.Context, data json.RawMessage) (any, error) {
		var op taskClaim
		if err := decode(data, &op); err != nil {
			return nil, err
		}
		t, ok, err := local.ClaimNext(ctx, op.AgentID, op.Labels, op.Now)
		return taskClaimed{Task: t, OK: ok}, err
	})
	r.Handle("task.releaseHolder", func(ctx context.Context, data json.RawMessage) (any, error) {
		var op taskReleaseHolder
		if err := decode(data, &op); err != nil {
			return nil, err
		}
		return local.ReleaseHolder(ctx, op.AgentID, op.By, op.Note, op.Now)
	})
	return &Tasks{r: r, local: local}
}

// Create implements task.Store.
func (s *Tasks) Create(ctx context.Context, t task.Task, ev task.Event) error {
	return s.r.Do(ctx, DomainTask, "task.create", taskCreate{Task: t, Event: ev}, nil)
}

// Mutate implements task.Store: fn runs on this node's copy, caught up
// with every task event; the task it leaves is published only if no task
// event came in between (else fn runs again on the newer state).
func (s *Tasks) Mutate(ctx context.Context, id string, fn func(t *task.Task, deps map[string]task.Status) (task.Event, error)) (task.Task, error) {
	var out task.Task
	err := s.r.Decide(ctx, DomainTask, "task.set", func(ctx context.Context) (any, error) {
		var op taskSet
		_, err := s.local.Mutate(ctx, id, func(t *task.Task, deps map[string]task.Status) (task.Event, error) {
			ev, err := fn(t, deps)
			if err != nil {
				return ev, err
			}
			ev.TaskID = t.ID
			op = taskSet{ID: id, Task: *t, Event: ev}
			return ev, errDecided
		})
		if !errors.Is(err, errDecided) {
			return nil, err
		}
		return op, nil
	}, &out)
	return out, err
}

// ClaimNext implements task.Store.
func (s *Tasks) ClaimNext(ctx context.Context, agentID string, labels []string, now time.Time) (task.Task, bool, error) {
	var out taskClaimed
	err := s.r.Do(ctx, DomainTask, "task.claimNext", taskClaim{AgentID: agentID, Labels: labels, Now: now}, &out)
	return out.Task, out.OK, err
}

// ReleaseHolder implements task.Store.
func (s *Tasks) ReleaseHolder(ctx context.Context, agentID, by, note string, now time.Time) (out []task.Task, err error) {
	err = s.r.Do(ctx, DomainTask, "task.releaseHolder", taskReleaseHolder{AgentID: agentID, By: by, Note: note, Now: now}, &out)
	return out, err
}

// Get implements task.Store from the local store.
func (s *Tasks) Get(ctx context.Context, id string) (task.Task, []task.Event, error) {
	return s.local.Get(ctx, id)
}

// List implements task.Store from the local store.
func (s *Tasks) List(ctx context.Context, f task.Filter) ([]task.Task, int, error) {
	return s.local.List(ctx, f)
}

// Holders implements task.Store from the local store.
func (s *Tasks) Holders(ctx context.Context) ([]string, error) { return s.local.Holders(ctx) }
