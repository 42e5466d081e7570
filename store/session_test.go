package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/session"
)

func sessBackends(t *testing.T, f func(t *testing.T, svc *session.Service, clock *core.ManualClock)) {
	t.Run("sqlite", func(t *testing.T) {
		db, clock := newDB(t)
		f(t, session.NewService(db.Sessions(), clock, &core.SequenceGenerator{}), clock)
	})
	t.Run("mem", func(t *testing.T) {
		clock := core.NewManualClock(t0)
		f(t, session.NewService(session.NewMemStore(), clock, &core.SequenceGenerator{}), clock)
	})
}

func TestSessionLifecycle(t *testing.T) {
	sessBackends(t, func(t *testing.T, svc *session.Service, clock *core.ManualClock) {
		ctx := testCtx(t)
		s, err := svc.Create(ctx, session.CreateRequest{Initiator: "lead", Task: "ship it", Workspace: "/w", Metadata: json.RawMessage(`{ "k": 1 }`)})
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != session.StatusActive || len(s.Participants) != 1 || s.Participants[0].Role != session.RoleInitiator || string(s.Metadata) != `{"k":1}` {
			t.Fatalf("created %+v", s)
		}
		clock.Advance(time.Second)
		s, joined, err := svc.Join(ctx, s.ID, "dev", "")
		if err != nil || !joined || len(s.Participants) != 2 || s.Participants[1].Role != session.DefaultRole || !s.Participants[1].JoinedAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("join: %+v %v %v", s, joined, err)
		}
		clock.Advance(time.Second)
		s2, joined, err := svc.Join(ctx, s.ID, "dev", "reviewer")
		if err != nil || joined || s2.Participants[1].Role != session.DefaultRole || !s2.UpdatedAt.Equal(s.UpdatedAt) {
			t.Fatalf("re-join must change nothing: %+v %v %v", s2, joined, err)
		}
		if s, err = svc.RecordTask(ctx, s.ID, "dev", 2); err != nil || s.Participants[1].TaskCount != 2 {
			t.Fatalf("RecordTask: %+v %v", s, err)
		}
		_, err = svc.RecordTask(ctx, s.ID, "ghost", 1)
		wantCode(t, err, core.CodeNotFound)
		if s, err = svc.ApplyPolicy(ctx, s.ID, "default"); err != nil || len(s.Policies) != 1 {
			t.Fatalf("ApplyPolicy: %+v %v", s, err)
		}
		_, err = svc.ApplyPolicy(ctx, s.ID, "default")
		wantCode(t, err, session.CodePolicyAlreadyApplied)
		s, left, err := svc.Leave(ctx, s.ID, "dev")
		if err != nil || !left || len(s.Participants) != 1 {
			t.Fatalf("leave: %+v %v %v", s, left, err)
		}
		if _, left, err = svc.Leave(ctx, s.ID, "dev"); err != nil || left {
			t.Fatalf("second leave: %v %v", left, err)
		}
		clock.Advance(time.Second)
		s, err = svc.Complete(ctx, s.ID, "done")
		if err != nil || s.Status != session.StatusCompleted || s.Summary != "done" || !s.CompletedAt.Equal(t0.Add(3*time.Second)) {
			t.Fatalf("complete: %+v %v", s, err)
		}
		got, err := svc.Get(ctx, s.ID)
		if err != nil || got.Status != session.StatusCompleted || got.Summary != "done" || len(got.Policies) != 1 || got.Participants[0].AgentID != "lead" {
			t.Fatalf("Get after complete: %+v %v", got, err)
		}
	})
}

// Every documented error, and that it changes nothing.
func TestSessionErrors(t *testing.T) {
	sessBackends(t, func(t *testing.T, svc *session.Service, _ *core.ManualClock) {
		ctx := testCtx(t)
		mk := func() session.Session {
			s, err := svc.Create(ctx, session.CreateRequest{Initiator: "a", Task: "t"})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		done, failed := mk(), mk()
		if _, err := svc.Complete(ctx, done.ID, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Fail(ctx, failed.ID, "boom"); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name string
			call func() error
			code core.Code
		}{
			{"status of unknown", func() error { _, err := svc.Get(ctx, "nope"); return err }, session.CodeNotFound},
			{"complete unknown", func() error { _, err := svc.Complete(ctx, "nope", ""); return err }, session.CodeNotFound},
			{"join unknown", func() error { _, _, err := svc.Join(ctx, "nope", "x", ""); return err }, session.CodeNotFound},
			{"leave unknown", func() error { _, _, err := svc.Leave(ctx, "nope", "x"); return err }, session.CodeNotFound},
			{"fail unknown", func() error { _, err := svc.Fail(ctx, "nope", "r"); return err }, session.CodeNotFound},
			{"apply to unknown", func() error { _, err := svc.ApplyPolicy(ctx, "nope", "p"); return err }, session.CodeNotFound},
			{"complete completed", func() error { _, err := svc.Complete(ctx, done.ID, ""); return err }, session.CodeAlreadyCompleted},
			{"fail failed", func() error { _, err := svc.Fail(ctx, failed.ID, "again"); return err }, session.CodeAlreadyCompleted},
			{"complete failed", func() error { _, err := svc.Complete(ctx, failed.ID, ""); return err }, session.CodeInvalidTransition},
			{"fail completed", func() error { _, err := svc.Fail(ctx, done.ID, "late"); return err }, session.CodeInvalidTransition},
			{"join completed", func() error { _, _, err := svc.Join(ctx, done.ID, "x", ""); return err }, session.CodeAlreadyCompleted},
			{"leave failed", func() error { _, _, err := svc.Leave(ctx, failed.ID, "a"); return err }, session.CodeAlreadyCompleted},
			{"apply to completed", func() error { _, err := svc.ApplyPolicy(ctx, done.ID, "p"); return err }, session.CodeAlreadyCompleted},
			{"empty id", func() error { _, err := svc.Get(ctx, ""); return err }, core.CodeInvalidArgument},
			{"no initiator", func() error { _, err := svc.Create(ctx, session.CreateRequest{Task: "t"}); return err }, core.CodeInvalidArgument},
			{"no task", func() error { _, err := svc.Create(ctx, session.CreateRequest{Initiator: "a"}); return err }, core.CodeInvalidArgument},
			{"task too long", func() error {
				_, err := svc.Create(ctx, session.CreateRequest{Initiator: "a", Task: strings.Repeat("t", session.MaxTaskBytes+1)})
				return err
			}, core.CodeInvalidArgument},
			{"metadata not an object", func() error {
				_, err := svc.Create(ctx, session.CreateRequest{Initiator: "a", Task: "t", Metadata: json.RawMessage(`[1]`)})
				return err
			}, core.CodeInvalidArgument},
			{"metadata too deep", func() error {
				_, err := svc.Create(ctx, session.CreateRequest{Initiator: "a", Task: "t",
					Metadata: json.RawMessage(`{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`)})
				return err
			}, core.CodeInvalidArgument},
			{"metadata too big", func() error {
				_, err := svc.Create(ctx, session.CreateRequest{Initiator: "a", Task: "t",
					Metadata: json.RawMessage(`{"a":"` + strings.Repeat("m", session.MaxMetadataBytes) + `"}`)})
				return err
			}, core.CodeResourceExhausted},
			{"fail without reason", func() error { _, err := svc.Fail(ctx, mk().ID, ""); return err }, core.CodeInvalidArgument},
			{"control char in agent", func() error { _, _, err := svc.Join(ctx, done.ID, "a\x1b[31m", ""); return err }, core.CodeInvalidArgument},
			{"bad list status", func() error { _, _, err := svc.List(ctx, session.Filter{Status: "paused"}); return err }, core.CodeInvalidArgument},
			{"list limit too big", func() error { _, _, err := svc.List(ctx, session.Filter{Limit: 1000}); return err }, core.CodeInvalidArgument},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) { wantCode(t, c.call(), c.code) })
		}
		for _, s := range []session.Session{done, failed} {
			got, _ := svc.Get(ctx, s.ID)
			if len(got.Participants) != 1 || len(got.Policies) != 0 {
				t.Errorf("an error changed session %s: %+v", s.ID, got)
			}
		}
		if got, _ := svc.Get(ctx, failed.ID); got.FailureReason != "boom" || got.Status != session.StatusFailed {
			t.Errorf("failed session = %+v", got)
		}
	})
}

func TestSessionList(t *testing.T) {
	sessBackends(t, func(t *testing.T, svc *session.Service, clock *core.ManualClock) {
		ctx := testCtx(t)
		var ids []string
		for i := range 5 {
			s, err := svc.Create(ctx, session.CreateRequest{Initiator: fmt.Sprintf("agent-%d", i%2), Task: fmt.Sprintf("task %d", i)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, s.ID)
			if i != 3 { // sessions 3 and 4 share a time: creation order decides
				clock.Advance(time.Second)
			}
		}
		svc.Complete(ctx, ids[1], "")
		svc.Join(ctx, ids[4], "x", "")
		page, total, err := svc.List(ctx, session.Filter{})
		if err != nil || total != 5 || len(page) != 5 {
			t.Fatalf("List = %d items, total %d, %v", len(page), total, err)
		}
		if page[0].ID != ids[4] || page[1].ID != ids[3] || page[4].ID != ids[0] || page[0].ParticipantCount != 2 {
			t.Fatalf("order: %+v", page)
		}
		page, total, _ = svc.List(ctx, session.Filter{Status: session.StatusActive, Initiator: "agent-1", Limit: 1})
		if total != 1 || len(page) != 1 || page[0].ID != ids[3] {
			t.Fatalf("filtered: %+v total %d", page, total)
		}
		page, total, _ = svc.List(ctx, session.Filter{Status: session.StatusCompleted})
		if total != 1 || page[0].ID != ids[1] || page[0].Status != session.StatusCompleted {
			t.Fatalf("completed: %+v", page)
		}
	})
}
