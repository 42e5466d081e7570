package task

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/internal/check"
)

// Messaging is what the work queue needs of the agent messaging service:
// who is calling, whether a holder is still there, and notices to the
// people concerned. Package tools/messaging's *Service satisfies it.
type Messaging interface {
	Caller(ctx context.Context) (string, error)
	Presence(ctx context.Context, agentID string) (state string, lastSeen time.Time, err error)
	Tell(ctx context.Context, agentID, subject string, payload map[string]any) error
}

// Service is the work-queue domain: validation, the state machine,
// identity, liveness of holders and notices over a Store. It is safe for
// concurrent use when its Store and Messaging are.
type Service struct {
	store Store
	msg   Messaging
	clock core.Clock
	ids   core.IDGenerator
}

// NewService returns a Service; nil clock and ids mean the system clock
// and random UUIDs.
func NewService(store Store, clock core.Clock, ids core.IDGenerator) *Service {
	if clock == nil {
		clock = core.SystemClock{}
	}
	if ids == nil {
		ids = &core.UUIDGenerator{}
	}
	return &Service{store: store, clock: clock, ids: ids}
}

// Connect sets the messaging service. Call it before serving.
func (s *Service) Connect(m Messaging) { s.msg = m }

func (s *Service) caller(ctx context.Context) (string, error) {
	if s.msg == nil {
		return "", core.NewError(CodeNoIdentity, "this server has no agent messaging, so it cannot tell which agent is calling; run mcprt with agent messaging (aacp.dataDir)")
	}
	id, err := s.msg.Caller(ctx)
	if err != nil {
		return "", fmt.Errorf("tasks: identifying the calling agent: %w", err)
	}
	return id, nil
}

// live reports whether agentID counts as present: not stale or offline
// (an agent messaging does not know cannot be proven gone).
func (s *Service) live(ctx context.Context, agentID string) (bool, string) {
	if s.msg == nil {
		return true, "unknown"
	}
	st, _, err := s.msg.Presence(ctx, agentID)
	if err != nil {
		return true, "unknown"
	}
	return st != "stale" && st != "offline", st
}

// tell notifies agentID unless it is the caller; a failed notice does
// not undo what was done.
func (s *Service) tell(ctx context.Context, me, agentID, subject string, t Task, extra map[string]any) {
	if s.msg == nil || agentID == "" || agentID == me {
		return
	}
	p := map[string]any{"taskId": t.ID, "title": t.Title, "status": string(t.Status), "by": me}
	for k, v := range extra {
		p[k] = v
	}
	_ = s.msg.Tell(ctx, agentID, subject, p)
}

// Sweep reopens the tasks of holders messaging reports stale or offline
// (recorded, holder and posters told) and returns them.
func (s *Service) Sweep(ctx context.Context, me string) ([]Task, error) {
	holders, err := s.store.Holders(ctx)
	if err != nil {
		return nil, fmt.Errorf("tasks: reading holders: %w", err)
	}
	var out []Task
	for _, h := range holders {
		if ok, _ := s.live(ctx, h); ok || h == me {
			continue
		}
		ts, err := s.releaseHolder(ctx, me, h)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

// releaseHolder reopens the tasks of h, which is gone.
func (s *Service) releaseHolder(ctx context.Context, me, h string) ([]Task, error) {
	_, st := s.live(ctx, h)
	ts, err := s.store.ReleaseHolder(ctx, h, me, "holder "+h+" is "+st, s.clock.Now())
	if err != nil {
		return nil, fmt.Errorf("tasks: reopening the tasks of %s, which is %s: %w", h, st, err)
	}
	for _, t := range ts {
		s.tell(ctx, me, h, "task released: you were "+st, t, nil)
		s.tell(ctx, me, t.Poster, "task reopened: its holder was "+st, t, map[string]any{"holder": h})
	}
	return ts, nil
}

// PostInput is what Post needs.
type PostInput struct {
	Title, Description string
	Priority           int
	Labels, DependsOn  []string
	Assignee           string
}

// Post adds an open task posted by the caller; a designated assignee is
// told.
func (s *Service) Post(ctx context.Context, in PostInput) (Task, error) {
	if err := check.Text("title", in.Title, MaxTitleBytes, true); err != nil {
		return Task{}, err
	}
	if err := check.Text("description", in.Description, MaxDescriptionBytes, false); err != nil {
		return Task{}, err
	}
	if in.Priority == 0 {
		in.Priority = DefaultPriority
	}
	if in.Priority < MinPriority || in.Priority > MaxPriority {
		return Task{}, check.Invalid("priority", "is %d; give 1 (low) to 5 (urgent), default 3", in.Priority)
	}
	labels, err := checkLabels("labels", in.Labels)
	if err != nil {
		return Task{}, err
	}
	if len(in.DependsOn) > MaxDependsOn {
		return Task{}, check.Invalid("dependsOn", "has %d ids; the limit is %d", len(in.DependsOn), MaxDependsOn)
	}
	for _, d := range in.DependsOn {
		if err := check.Text("dependsOn", d, 128, true); err != nil {
			return Task{}, err
		}
	}
	if err := check.Text("assignee", in.Assignee, MaxAgentIDBytes, false); err != nil {
		return Task{}, err
	}
	me, err := s.caller(ctx)
	if err != nil {
		return Task{}, err
	}
	now := s.clock.Now()
	deps := slices.Compact(slices.Sorted(slices.Values(in.DependsOn)))
	t := Task{ID: s.ids.NewID(), Title: in.Title, Description: in.Description, Priority: in.Priority, Labels: labels,
		DependsOn: deps, Poster: me, Assignee: in.Assignee, Status: StatusOpen, CreatedAt: now, UpdatedAt: now}
	if err := s.store.Create(ctx, t, Event{TaskID: t.ID, At: now, AgentID: me, Action: "posted", To: StatusOpen, Assignee: in.Assignee}); err != nil {
		return Task{}, fmt.Errorf("task_post: %w", err)
	}
	s.tell(ctx, me, in.Assignee, "task posted for you", t, map[string]any{"description": t.Description})
	return t, nil
}

func checkLabels(field string, labels []string) ([]string, error) {
	if len(labels) > MaxLabels {
		return nil, check.Invalid(field, "has %d labels; the limit is %d", len(labels), MaxLabels)
	}
	for _, l := range labels {
		if err := check.Text(field, l, MaxLabelBytes, true); err != nil {
			return nil, err
		}
	}
	out := slices.Compact(slices.Sorted(slices.Values(labels)))
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// Claim claims the task with the id, or the best open task with every
// label of labels, for the caller. A task held by an agent messaging
// reports stale or offline is reopened on the way: when it is the task
// named, or when no open task matches (Sweep). ok is false when no task
// could be claimed by labels.
func (s *Service) Claim(ctx context.Context, id string, labels []string) (Task, bool, error) {
	labels, err := checkLabels("labels", labels)
	if err != nil {
		return Task{}, false, err
	}
	if id != "" && len(labels) > 0 {
		return Task{}, false, check.Invalid("labels", "give taskId or labels, not both")
	}
	me, err := s.caller(ctx)
	if err != nil {
		return Task{}, false, err
	}
	if id == "" {
		for round := 0; ; round++ {
			t, ok, err := s.store.ClaimNext(ctx, me, labels, s.clock.Now())
			if err != nil {
				return Task{}, false, fmt.Errorf("task_claim: %w", err)
			}
			if ok {
				s.tell(ctx, me, t.Poster, "task claimed", t, nil)
				return t, true, nil
			}
			if round > 0 {
				return Task{}, false, nil
			}
			if swept, err := s.Sweep(ctx, me); err != nil || len(swept) == 0 {
				return Task{}, false, err
			}
		}
	}
	for round := 0; ; round++ {
		now := s.clock.Now()
		t, err := s.store.Mutate(ctx, id, func(t *Task, deps map[string]Status) (Event, error) {
			if err := claimable(t, deps, me); err != nil {
				return Event{}, err
			}
			from := t.Status
			t.Status, t.Assignee, t.UpdatedAt = StatusClaimed, me, now
			return Event{At: now, AgentID: me, Action: "claimed", From: from, To: StatusClaimed, Assignee: me}, nil
		})
		if err == nil {
			s.tell(ctx, me, t.Poster, "task claimed", t, nil)
			return t, true, nil
		}
		holder, _ := core.AsError(err).Details["holder"].(string)
		if round > 0 || holder == "" {
			return Task{}, false, err
		}
		if ok, _ := s.live(ctx, holder); ok {
			return Task{}, false, err
		}
		if _, err := s.releaseHolder(ctx, me, holder); err != nil {
			return Task{}, false, err
		}
	}
}

// claimable says why me may not claim t, or nil.
func claimable(t *Task, deps map[string]Status, me string) error {
	switch {
	case t.Status.Held() && t.Assignee == me:
		return core.NewError(CodeNotClaimable, fmt.Sprintf("taskId: you already hold task %s (%s)", t.ID, t.Status))
	case t.Status.Held():
		return core.NewError(CodeNotClaimable, fmt.Sprintf("taskId: task %s is %s by %s; claim another, or task_steal it if %s is stale or offline", t.ID, t.Status, t.Assignee, t.Assignee)).
			WithDetail("holder", t.Assignee)
	case t.Status.Final():
		return core.NewError(CodeNotClaimable, fmt.Sprintf("taskId: task %s is already %s", t.ID, t.Status))
	case t.Assignee != "" && t.Assignee != me:
		return core.NewError(CodeNotClaimable, fmt.Sprintf("taskId: task %s was posted for %s; only that agent may claim it", t.ID, t.Assignee)).
			WithDetail("assignee", t.Assignee)
	}
	var waiting []string
	for _, d := range t.DependsOn {
		if deps[d] != StatusDone {
			waiting = append(waiting, fmt.Sprintf("%s (%s)", d, deps[d]))
		}
	}
	if len(waiting) > 0 {
		return core.NewError(CodeNotClaimable, fmt.Sprintf("taskId: task %s waits for %d dependencies that are not done: %v", t.ID, len(waiting), waiting)).
			WithDetail("waitingFor", waiting)
	}
	return nil
}

// held loads a task the caller must hold, for fn.
func (s *Service) held(ctx context.Context, id, what string, fn func(t *Task, me string, now time.Time) (Event, error)) (Task, string, error) {
	if err := check.Text("taskId", id, 128, true); err != nil {
		return Task{}, "", err
	}
	me, err := s.caller(ctx)
	if err != nil {
		return Task{}, "", err
	}
	now := s.clock.Now()
	t, err := s.store.Mutate(ctx, id, func(t *Task, _ map[string]Status) (Event, error) {
		if !t.Status.Held() || t.Assignee != me {
			holder := "nobody holds it"
			if t.Status.Held() {
				holder = t.Assignee + " holds it"
			}
			return Event{}, core.NewError(CodeNotHolder, fmt.Sprintf("taskId: only the holder may %s task %s, and %s (status %s); task_claim it first", what, t.ID, holder, t.Status)).
				WithDetail("status", string(t.Status))
		}
		return fn(t, me, now)
	})
	return t, me, err
}

// Update moves a task the caller holds to in_progress, blocked, done or
// failed; the poster is told when it ends.
func (s *Service) Update(ctx context.Context, id string, to Status, note, result string) (Task, error) {
	switch to {
	case StatusInProgress, StatusBlocked, StatusDone, StatusFailed:
	default:
		return Task{}, check.Invalid("status", "is %q; give in_progress, blocked, done or failed", to)
	}
	if err := check.Text("note", note, MaxNoteBytes, false); err != nil {
		return Task{}, err
	}
	if err := check.Text("result", result, MaxResultBytes, false); err != nil {
		return Task{}, err
	}
	t, me, err := s.held(ctx, id, "update", func(t *Task, me string, now time.Time) (Event, error) {
		from := t.Status
		t.Status, t.UpdatedAt = to, now
		if note != "" {
			t.Note = note
		}
		if result != "" {
			t.Result = result
		}
		return Event{At: now, AgentID: me, Action: "updated", From: from, To: to, Assignee: t.Assignee, Note: note}, nil
	})
	if err != nil {
		return Task{}, err
	}
	if to.Final() {
		s.tell(ctx, me, t.Poster, "task "+string(to), t, map[string]any{"result": t.Result, "note": note})
	}
	return t, nil
}

// Handoff gives a task the caller holds to another agent, who is told.
func (s *Service) Handoff(ctx context.Context, id, to, note string) (Task, error) {
	if err := check.Text("toAgentId", to, MaxAgentIDBytes, true); err != nil {
		return Task{}, err
	}
	if err := check.Text("note", note, MaxNoteBytes, true); err != nil {
		return Task{}, err
	}
	t, me, err := s.held(ctx, id, "hand off", func(t *Task, me string, now time.Time) (Event, error) {
		if to == me {
			return Event{}, check.Invalid("toAgentId", "is you; name the agent to hand the task to")
		}
		from := t.Status
		t.Status, t.Assignee, t.Note, t.UpdatedAt = StatusClaimed, to, note, now
		return Event{At: now, AgentID: me, Action: "handed_off", From: from, To: StatusClaimed, Assignee: to, Note: note}, nil
	})
	if err != nil {
		return Task{}, err
	}
	s.tell(ctx, me, to, "task handed to you", t, map[string]any{"note": note, "description": t.Description})
	s.tell(ctx, me, t.Poster, "task handed off", t, map[string]any{"to": to, "note": note})
	return t, nil
}

// Release puts a task the caller holds back in the queue.
func (s *Service) Release(ctx context.Context, id, note string) (Task, error) {
	if err := check.Text("note", note, MaxNoteBytes, false); err != nil {
		return Task{}, err
	}
	t, _, err := s.held(ctx, id, "release", func(t *Task, me string, now time.Time) (Event, error) {
		from := t.Status
		t.Status, t.Assignee, t.UpdatedAt = StatusOpen, "", now
		if note != "" {
			t.Note = note
		}
		return Event{At: now, AgentID: me, Action: "released", From: from, To: StatusOpen, Note: note}, nil
	})
	return t, err
}

// Steal takes a task from a holder messaging reports stale or offline;
// the holder is told.
func (s *Service) Steal(ctx context.Context, id, reason string) (Task, error) {
	if err := check.Text("taskId", id, 128, true); err != nil {
		return Task{}, err
	}
	if err := check.Text("reason", reason, MaxNoteBytes, true); err != nil {
		return Task{}, err
	}
	me, err := s.caller(ctx)
	if err != nil {
		return Task{}, err
	}
	cur, _, err := s.store.Get(ctx, id)
	if err != nil {
		return Task{}, err
	}
	switch {
	case !cur.Status.Held():
		return Task{}, core.NewError(CodeInvalidTransition, fmt.Sprintf("taskId: task %s is %s, so nobody holds it: there is nothing to steal (task_claim claims an open task)", id, cur.Status))
	case cur.Assignee == me:
		return Task{}, core.NewError(CodeInvalidTransition, fmt.Sprintf("taskId: you already hold task %s", id))
	}
	if ok, st := s.live(ctx, cur.Assignee); ok {
		return Task{}, core.NewError(CodeHolderLive, fmt.Sprintf("taskId: task %s is held by %s, which is %s: only a stale or offline holder's task can be stolen; ask %s to hand it off",
			id, cur.Assignee, st, cur.Assignee)).WithDetail("holder", cur.Assignee).WithDetail("presence", st)
	}
	now := s.clock.Now()
	t, err := s.store.Mutate(ctx, id, func(t *Task, _ map[string]Status) (Event, error) {
		if t.Assignee != cur.Assignee || !t.Status.Held() {
			return Event{}, core.NewError(CodeInvalidTransition, fmt.Sprintf("taskId: task %s changed hands while it was being stolen; task_get shows it now", id))
		}
		from := t.Status
		t.Status, t.Assignee, t.UpdatedAt = StatusClaimed, me, now
		return Event{At: now, AgentID: me, Action: "stolen", From: from, To: StatusClaimed, Assignee: me, Note: reason}, nil
	})
	if err != nil {
		return Task{}, err
	}
	s.tell(ctx, me, cur.Assignee, "task stolen", t, map[string]any{"reason": reason})
	s.tell(ctx, me, t.Poster, "task stolen", t, map[string]any{"from": cur.Assignee, "reason": reason})
	return t, nil
}

// Get returns a task and its history.
func (s *Service) Get(ctx context.Context, id string) (Task, []Event, error) {
	if err := check.Text("taskId", id, 128, true); err != nil {
		return Task{}, nil, err
	}
	return s.store.Get(ctx, id)
}

// List returns tasks by priority then age. It changes nothing: gone
// holders lose their tasks on the next claim or post.
func (s *Service) List(ctx context.Context, f Filter) ([]Task, int, error) {
	switch f.Status {
	case "", StatusOpen, StatusClaimed, StatusInProgress, StatusBlocked, StatusDone, StatusFailed:
	default:
		return nil, 0, check.Invalid("status", "is %q; give open, claimed, in_progress, blocked, done or failed", f.Status)
	}
	limit, err := check.Limit("limit", f.Limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return nil, 0, err
	}
	f.Limit = limit
	return s.store.List(ctx, f)
}
