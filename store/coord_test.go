package store

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/domain/task"
)

// fakeMessaging names the caller from the context and reports every
// agent online except those marked gone.
type fakeMessaging struct {
	mu   sync.Mutex
	gone map[string]bool
	told []string
}

type callerKey struct{}

func as(ctx context.Context, agent string) context.Context {
	return context.WithValue(ctx, callerKey{}, agent)
}

func (f *fakeMessaging) Caller(ctx context.Context) (string, error) {
	return ctx.Value(callerKey{}).(string), nil
}

func (f *fakeMessaging) Presence(_ context.Context, id string) (string, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone[id] {
		return "offline", time.Time{}, nil
	}
	return "online", time.Time{}, nil
}

func (f *fakeMessaging) Tell(_ context.Context, id, subject string, _ map[string]any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.told = append(f.told, id+": "+subject)
	return nil
}

func newReservations(t testing.TB, db *DB, clock core.Clock) (*reservation.Service, *fakeMessaging) {
	t.Helper()
	m := &fakeMessaging{gone: map[string]bool{}}
	return reservation.NewService(reservation.Options{Store: db.Reservations(), Messaging: m, Clock: clock, MaxPerAgent: 100_000}), m
}

func TestReservationsStore(t *testing.T) {
	db, clock := newDB(t)
	svc, m := newReservations(t, db, clock)
	ctx := testCtx(t)
	a, b := as(ctx, "a"), as(ctx, "b")
	for _, c := range []struct {
		ctx   context.Context
		paths []string
		excl  bool
		ok    bool
	}{
		{a, []string{"src/**"}, true, true},
		{b, []string{"src/x/y.go"}, true, false},
		{b, []string{"src/x/y.go"}, false, false}, // shared vs exclusive
		{b, []string{"docs/**", "lib/*.go"}, false, true},
		{a, []string{"lib/a.go"}, false, true}, // shared + shared
		{a, []string{"lib/b.go"}, true, false},
		{b, []string{"**/*.md"}, true, false}, // overlaps a's src/**
	} {
		res, err := svc.Reserve(c.ctx, reservation.Request{Paths: c.paths, Exclusive: c.excl})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(res.Conflict) == 0; got != c.ok || got != (len(res.Granted) == len(c.paths)) {
			t.Fatalf("reserve %v exclusive=%v: granted %d conflicts %v, want ok=%v", c.paths, c.excl, len(res.Granted), res.Conflict, c.ok)
		}
	}
	// Idempotency key: the second call returns the first grant.
	r1, _ := svc.Reserve(a, reservation.Request{Paths: []string{"k/**"}, Exclusive: true, IdempotencyKey: "k1"})
	r2, _ := svc.Reserve(a, reservation.Request{Paths: []string{"other/**"}, Exclusive: true, IdempotencyKey: "k1"})
	if len(r2.Granted) != 1 || r2.Granted[0].ID != r1.Granted[0].ID {
		t.Fatalf("idempotent replay granted %v, want %v", r2.Granted, r1.Granted)
	}
	// Expiry counts at the query's time.
	svc.Reserve(b, reservation.Request{Paths: []string{"tmp/x"}, Exclusive: true, TTL: time.Minute})
	if r, _ := svc.Reserve(a, reservation.Request{Paths: []string{"tmp/**"}, Exclusive: true}); len(r.Conflict) != 1 {
		t.Fatalf("before expiry: %v", r)
	}
	clock.Advance(time.Minute)
	if r, _ := svc.Reserve(a, reservation.Request{Paths: []string{"tmp/**"}, Exclusive: true}); len(r.Conflict) != 0 {
		t.Fatalf("after expiry: %v", r.Conflict)
	}
	// A gone holder stops blocking, is released and told.
	m.mu.Lock()
	m.gone["a"] = true
	m.mu.Unlock()
	r, err := svc.Reserve(b, reservation.Request{Paths: []string{"src/main.go"}, Exclusive: true})
	if err != nil || len(r.Conflict) != 0 || len(r.Released) == 0 || r.Released[0].ReleasedBy != "b" {
		t.Fatalf("reserve over a gone holder: %+v %v", r, err)
	}
	if len(m.told) == 0 || m.told[0] != "a: reservations released" {
		t.Fatalf("told %v", m.told)
	}
}

// TestReservationsConcurrent: goroutines reserving overlapping globs at
// once; exactly one wins each round.
func TestReservationsConcurrent(t *testing.T) {
	db, clock := newDB(t)
	svc, _ := newReservations(t, db, clock)
	ctx := testCtx(t)
	for round := range 20 {
		var wins atomic.Int32
		var wg sync.WaitGroup
		for g := range 6 {
			wg.Go(func() {
				p := fmt.Sprintf("r%d/**", round)
				if g%2 == 1 {
					p = fmt.Sprintf("r%d/x/[a-z].go", round) // overlaps r/** and itself
				}
				res, err := svc.Reserve(as(ctx, fmt.Sprintf("g%d", g)), reservation.Request{Paths: []string{p}, Exclusive: true})
				if err != nil {
					t.Error(err)
				}
				if len(res.Granted) > 0 {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d winners", round, wins.Load())
		}
	}
}

func TestTaskClaimConcurrent(t *testing.T) {
	db, clock := newDB(t)
	m := &fakeMessaging{gone: map[string]bool{}}
	svc := task.NewService(db.Tasks(), clock, nil)
	svc.Connect(m)
	ctx := testCtx(t)
	for round := range 20 {
		if _, err := svc.Post(as(ctx, "poster"), task.PostInput{Title: "t", Labels: []string{fmt.Sprint(round)}}); err != nil {
			t.Fatal(err)
		}
		var wins atomic.Int32
		var wg sync.WaitGroup
		for g := range 6 {
			wg.Go(func() {
				_, ok, err := svc.Claim(as(ctx, fmt.Sprintf("g%d", g)), "", []string{fmt.Sprint(round)})
				if err != nil {
					t.Error(err)
				}
				if ok {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d claims", round, wins.Load())
		}
	}
}

func TestTaskClaimLabels(t *testing.T) {
	db, clock := newDB(t)
	svc := task.NewService(db.Tasks(), clock, nil)
	svc.Connect(&fakeMessaging{gone: map[string]bool{}})
	ctx := as(testCtx(t), "p")
	low, _ := svc.Post(ctx, task.PostInput{Title: "low", Labels: []string{"a", "b"}, Priority: 1})
	high, _ := svc.Post(ctx, task.PostInput{Title: "high", Labels: []string{"a", "b", "c"}, Priority: 5})
	svc.Post(ctx, task.PostInput{Title: "only a", Labels: []string{"a"}, Priority: 5})
	for _, c := range []struct {
		labels []string
		want   string
	}{
		{[]string{"b", "c", "a"}, high.ID},
		{[]string{"a", "c"}, ""}, // high is taken
		{[]string{"b", "a"}, low.ID},
		{[]string{"x"}, ""},
	} {
		got, ok, err := svc.Claim(ctx, "", c.labels)
		if err != nil || ok != (c.want != "") || ok && got.ID != c.want {
			t.Fatalf("claim %v: %v %v %v, want %q", c.labels, got.ID, ok, err, c.want)
		}
	}
}
