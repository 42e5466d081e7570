package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/domain/task"
)

// fillReservations writes n active exclusive reservations, 100 agents
// with n/100 files each, in one transaction.
func fillReservations(b *testing.B, db *DB, n int, now time.Time) {
	b.Helper()
	err := db.write(context.Background(), func(conn *sql.Conn) error {
		for i := range n {
			p := fmt.Sprintf("pkg%d/sub%d/file%d.go", i%100, i%37, i)
			if _, err := conn.ExecContext(context.Background(), `INSERT INTO reservations (`+leaseCols+`)
				VALUES (?, ?, ?, ?, 1, '', '', ?, ?, NULL, '', '')`, fmt.Sprint("fill-", i), fmt.Sprint("agent", i%100), p, p,
				nanos(now), nanos(now.Add(time.Hour))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// p50 reports the median of ds as ms/p50.
func p50(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "ms/p50")
}

// BenchmarkReserveWith10k reserves a fresh path (and a glob every tenth
// time) with 10,000 active reservations in the store.
func BenchmarkReserveWith10k(b *testing.B) {
	db, clock := newDB(b)
	fillReservations(b, db, 10_000, clock.Now())
	svc, _ := newReservations(b, db, clock)
	ctx := as(context.Background(), "bencher")
	var ds []time.Duration
	i := 0
	for b.Loop() {
		p := fmt.Sprintf("pkg%d/sub%d/new%d.go", i%100, i%37, i)
		if i%10 == 0 {
			p = fmt.Sprintf("fresh%d/**", i)
		}
		start := time.Now()
		if _, err := svc.Reserve(ctx, reservation.Request{Paths: []string{p}, Exclusive: true}); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
		i++
	}
	p50(b, ds)
}

// BenchmarkCheckWith10k checks two paths against 10,000 active
// reservations.
func BenchmarkCheckWith10k(b *testing.B) {
	db, clock := newDB(b)
	fillReservations(b, db, 10_000, clock.Now())
	svc, _ := newReservations(b, db, clock)
	ctx := as(context.Background(), "bencher")
	var ds []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		cs, err := svc.Check(ctx, []string{fmt.Sprintf("pkg%d/sub%d/file%d.go", i%100, i%37, i%10_000)})
		if err != nil || len(cs) == 0 {
			b.Fatal(cs, err)
		}
		ds = append(ds, time.Since(start))
		i++
	}
	p50(b, ds)
}

// BenchmarkClaim claims the best open task from a queue of 2,000 open
// tasks (a tenth with labels, a tenth with a dependency).
func BenchmarkClaim(b *testing.B) {
	db, clock := newDB(b)
	m := &fakeMessaging{gone: map[string]bool{}}
	svc := task.NewService(db.Tasks(), clock, nil)
	svc.Connect(m)
	ctx := as(context.Background(), "poster")
	var first string
	for i := range 2_000 {
		in := task.PostInput{Title: fmt.Sprint("t", i), Priority: 1 + i%5}
		if i%10 == 0 {
			in.Labels = []string{"go", fmt.Sprint("l", i%7)}
		}
		if i%10 == 5 && first != "" {
			in.DependsOn = []string{first}
		}
		t, err := svc.Post(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		if first == "" {
			first = t.ID
		}
	}
	claimer := as(context.Background(), "claimer")
	var ds []time.Duration
	i := 0
	for b.Loop() {
		var labels []string
		if i%2 == 0 {
			labels = []string{"go"}
		}
		start := time.Now()
		if _, _, err := svc.Claim(claimer, "", labels); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
		i++
	}
	p50(b, ds)
}

// BenchmarkCheckGlobWith10k checks a glob that covers 100 of 10,000
// active reservations.
func BenchmarkCheckGlobWith10k(b *testing.B) {
	db, clock := newDB(b)
	fillReservations(b, db, 10_000, clock.Now())
	svc, _ := newReservations(b, db, clock)
	ctx := as(context.Background(), "bencher")
	var ds []time.Duration
	for b.Loop() {
		start := time.Now()
		cs, err := svc.Check(ctx, []string{"pkg7/**/*.go"})
		if err != nil || len(cs) != 100 {
			b.Fatal(len(cs), err)
		}
		ds = append(ds, time.Since(start))
	}
	p50(b, ds)
}
