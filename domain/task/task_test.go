package task_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/task"
	"github.com/mcprt/mcprt/store"
)

type callerKey struct{}

func as(ctx context.Context, agent string) context.Context {
	return context.WithValue(ctx, callerKey{}, agent)
}

// messaging names the caller from the context; agents in gone are
// offline; notices are kept.
type messaging struct {
	mu   sync.Mutex
	gone map[string]bool
	told []string
}

func (m *messaging) Caller(ctx context.Context) (string, error) {
	return ctx.Value(callerKey{}).(string), nil
}

func (m *messaging) Presence(_ context.Context, id string) (string, time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone[id] {
		return "offline", time.Time{}, nil
	}
	return "online", time.Time{}, nil
}

func (m *messaging) Tell(_ context.Context, id, subject string, _ map[string]any) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.told = append(m.told, id+": "+subject)
	return nil
}

func newService(t *testing.T) (*task.Service, *messaging, context.Context) {
	t.Helper()
	clock := core.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	db, err := store.New(store.Options{Dir: t.TempDir(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	m := &messaging{gone: map[string]bool{}}
	svc := task.NewService(db.Tasks(), clock, nil)
	svc.Connect(m)
	return svc, m, t.Context()
}

func code(err error) core.Code {
	if err == nil {
		return ""
	}
	return core.AsError(err).Code
}

func TestPostValidation(t *testing.T) {
	svc, _, ctx := newService(t)
	ctx = as(ctx, "p")
	long := string(make([]byte, task.MaxTitleBytes+1))
	for _, c := range []struct {
		name string
		in   task.PostInput
		want core.Code
	}{
		{"ok", task.PostInput{Title: "t"}, ""},
		{"no title", task.PostInput{}, core.CodeInvalidArgument},
		{"long title", task.PostInput{Title: long}, core.CodeInvalidArgument},
		{"priority", task.PostInput{Title: "t", Priority: 6}, core.CodeInvalidArgument},
		{"empty label", task.PostInput{Title: "t", Labels: []string{""}}, core.CodeInvalidArgument},
		{"unknown dependency", task.PostInput{Title: "t", DependsOn: []string{"nope"}}, task.CodeNotFound},
	} {
		if _, err := svc.Post(ctx, c.in); code(err) != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}

// TestTransitions walks one task through the state machine, with the
// refusals each step must give.
func TestTransitions(t *testing.T) {
	svc, m, ctx := newService(t)
	p, a, b := as(ctx, "poster"), as(ctx, "a"), as(ctx, "b")
	tk, err := svc.Post(p, task.PostInput{Title: "t", Assignee: "a"})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func() error
		want core.Code
	}{
		{"b claims a's task", func() error { _, _, err := svc.Claim(b, tk.ID, nil); return err }, task.CodeNotClaimable},
		{"a updates before claiming", func() error { _, err := svc.Update(a, tk.ID, task.StatusDone, "", ""); return err }, task.CodeNotHolder},
		{"a claims", func() error { _, _, err := svc.Claim(a, tk.ID, nil); return err }, ""},
		{"a claims again", func() error { _, _, err := svc.Claim(a, tk.ID, nil); return err }, task.CodeNotClaimable},
		{"bad status", func() error { _, err := svc.Update(a, tk.ID, task.StatusOpen, "", ""); return err }, core.CodeInvalidArgument},
		{"a blocks", func() error { _, err := svc.Update(a, tk.ID, task.StatusBlocked, "waiting", ""); return err }, ""},
		{"b steals from live a", func() error { _, err := svc.Steal(b, tk.ID, "mine"); return err }, task.CodeHolderLive},
		{"a hands to herself", func() error { _, err := svc.Handoff(a, tk.ID, "a", "x"); return err }, core.CodeInvalidArgument},
		{"a hands to b", func() error { _, err := svc.Handoff(a, tk.ID, "b", "yours"); return err }, ""},
		{"a releases b's task", func() error { _, err := svc.Release(a, tk.ID, ""); return err }, task.CodeNotHolder},
		{"b releases", func() error { _, err := svc.Release(b, tk.ID, "later"); return err }, ""},
		{"b claims", func() error { _, _, err := svc.Claim(b, tk.ID, nil); return err }, ""},
		{"b goes away; a steals", func() error {
			m.mu.Lock()
			m.gone["b"] = true
			m.mu.Unlock()
			_, err := svc.Steal(a, tk.ID, "b is gone")
			return err
		}, ""},
		{"a fails it", func() error { _, err := svc.Update(a, tk.ID, task.StatusFailed, "", "broken"); return err }, ""},
		{"b claims a failed task", func() error { _, _, err := svc.Claim(b, tk.ID, nil); return err }, task.CodeNotClaimable},
		{"a steals a final task", func() error { _, err := svc.Steal(a, tk.ID, "x"); return err }, task.CodeInvalidTransition},
	}
	for _, s := range steps {
		if err := s.do(); code(err) != s.want {
			t.Fatalf("%s: %v, want %q", s.name, err, s.want)
		}
	}
	got, hist, err := svc.Get(ctx, tk.ID)
	if err != nil || got.Status != task.StatusFailed || got.Result != "broken" || len(hist) != 8 {
		t.Fatalf("task %+v, %d events, %v", got, len(hist), err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, want := range []string{"a: task posted for you", "poster: task claimed", "b: task handed to you", "b: task stolen", "poster: task failed"} {
		found := false
		for _, n := range m.told {
			found = found || n == want
		}
		if !found {
			t.Errorf("no notice %q in %v", want, m.told)
		}
	}
}
