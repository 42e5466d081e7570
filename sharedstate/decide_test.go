package sharedstate

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/domain/task"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

// TestMutateLosesNoUpdate: concurrent updates of one task from several
// nodes, each computed by a function on its node's copy, all take
// effect: none is overwritten by a write decided on an older state.
func TestMutateLosesNoUpdate(t *testing.T) {
	t.Parallel()
	nodes := coordNodes(t, 3)
	ctx := testCtx(t)
	now := time.Now().UTC()
	if err := nodes[0].tasks.Create(ctx, task.Task{ID: "t1", Title: "t", Priority: 3, Poster: "mgr", Status: task.StatusOpen,
		CreatedAt: now, UpdatedAt: now}, task.Event{TaskID: "t1", At: now, AgentID: "mgr", Action: "posted", To: task.StatusOpen}); err != nil {
		t.Fatal(err)
	}
	const per = 4
	var wg sync.WaitGroup
	errs := make(chan error, len(nodes)*per)
	for i, n := range nodes {
		wg.Go(func() {
			for j := range per {
				_, err := n.tasks.Mutate(ctx, "t1", func(tk *task.Task, _ map[string]task.Status) (task.Event, error) {
					tk.Note += fmt.Sprintf("[%d.%d]", i, j)
					return task.Event{At: now, AgentID: "w", Action: "updated", From: tk.Status, To: tk.Status, Note: "n"}, nil
				})
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Every write has returned: the last of them is at most the highest
	// sequence any node applied.
	var last uint64
	for _, n := range nodes {
		last = max(last, n.r.Applied())
	}
	for k, n := range nodes {
		if err := n.r.WaitApplied(ctx, last); err != nil {
			t.Fatal(err)
		}
		got, evs, err := n.tasks.Get(ctx, "t1")
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			for i := range nodes {
				for j := range per {
					if !strings.Contains(got.Note, fmt.Sprintf("[%d.%d]", i, j)) {
						t.Errorf("update %d.%d was lost: note %q", i, j, got.Note)
					}
				}
			}
			if len(evs) != 1+len(nodes)*per {
				t.Errorf("%d events, want %d", len(evs), 1+len(nodes)*per)
			}
		}
	}
}

// TestSessionsShared: a session created on one node is joined on another
// and the guard policy applied there is seen by the first.
func TestSessionsShared(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	var sa, sb *Sessions
	a := newNode(t, srv.ClientURL(), "", func(r *Replicator) { sa = NewSessions(r, r.db.Sessions()) })
	b := newNode(t, srv.ClientURL(), "", func(r *Replicator) { sb = NewSessions(r, r.db.Sessions()) })
	ctx := testCtx(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	s := session.Session{ID: "s1", Initiator: "alice", Task: "ship it", Status: session.StatusActive, CreatedAt: now, UpdatedAt: now,
		Participants: []session.Participant{{AgentID: "alice", Role: "lead", JoinedAt: now}}}
	if err := sa.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := b.r.WaitApplied(ctx, a.r.Applied()); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Update(ctx, "s1", func(s *session.Session) error {
		s.Participants = append(s.Participants, session.Participant{AgentID: "bob", Role: "dev", JoinedAt: now})
		s.Policies = append(s.Policies, session.AppliedPolicy{PolicyID: "docs-only", AppliedAt: now})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Update(ctx, "nope", func(*session.Session) error { return nil }); err != session.ErrNotFound {
		t.Fatalf("update of an unknown session: %v, want session.ErrNotFound", err)
	}
	if err := a.r.WaitApplied(ctx, b.r.Applied()); err != nil {
		t.Fatal(err)
	}
	got, err := sa.Get(ctx, "s1")
	if err != nil || len(got.Participants) != 2 || len(got.Policies) != 1 || got.Policies[0].PolicyID != "docs-only" || got.Metadata != nil {
		t.Fatalf("a reads %+v (%v), want bob joined, docs-only applied, no metadata", got, err)
	}
}
