package core

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestManualClock(t *testing.T) {
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	c := NewManualClock(start)
	if !c.Now().Equal(start) {
		t.Errorf("Now() = %v, want %v", c.Now(), start)
	}
	if got := c.Advance(1500 * time.Millisecond); !got.Equal(start.Add(1500 * time.Millisecond)) {
		t.Errorf("Advance returned %v", got)
	}
	if !c.Now().Equal(start.Add(1500 * time.Millisecond)) {
		t.Errorf("Now() after Advance = %v", c.Now())
	}
	later := start.Add(time.Hour)
	c.Set(later)
	if !c.Now().Equal(later) {
		t.Errorf("Now() after Set = %v, want %v", c.Now(), later)
	}
	c.Advance(-time.Hour)
	if !c.Now().Equal(start) {
		t.Errorf("Now() after Advance(-1h) = %v, want %v", c.Now(), start)
	}
	var zero ManualClock
	if !zero.Now().IsZero() {
		t.Errorf("zero ManualClock reads %v", zero.Now())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				c.Advance(time.Second)
				_ = c.Now()
			}
		})
	}
	wg.Wait()
	if got := c.Now().Sub(start); got != 800*time.Second {
		t.Errorf("concurrent Advance total = %v, want 800s", got)
	}
}

func TestSystemClock(t *testing.T) {
	var c Clock = SystemClock{}
	before := time.Now()
	got := c.Now()
	if got.Before(before) || got.Sub(before) > time.Minute {
		t.Errorf("SystemClock.Now() = %v, not about %v", got, before)
	}
}

func TestManualClockTimersFireInDeadlineOrder(t *testing.T) {
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		arm    []time.Duration // timers "t0", "t1", ... armed in this order
		stop   []int           // indexes stopped before the move
		move   func(c *ManualClock)
		want   []int           // indexes fired, in order
		offset []time.Duration // Now() seen by each fired callback, from start
	}{
		{"advance past all", []time.Duration{3 * time.Second, time.Second, 2 * time.Second}, nil,
			func(c *ManualClock) { c.Advance(5 * time.Second) }, []int{1, 2, 0},
			[]time.Duration{time.Second, 2 * time.Second, 3 * time.Second}},
		{"equal deadlines in arming order", []time.Duration{time.Second, time.Second, time.Second}, nil,
			func(c *ManualClock) { c.Advance(time.Second) }, []int{0, 1, 2},
			[]time.Duration{time.Second, time.Second, time.Second}},
		{"deadline exactly reached", []time.Duration{time.Second, time.Second + 1}, nil,
			func(c *ManualClock) { c.Advance(time.Second) }, []int{0}, []time.Duration{time.Second}},
		{"not yet due", []time.Duration{time.Minute}, nil,
			func(c *ManualClock) { c.Advance(time.Second) }, nil, nil},
		{"zero and negative durations fire on Advance(0)", []time.Duration{0, -time.Second}, nil,
			func(c *ManualClock) { c.Advance(0) }, []int{1, 0}, []time.Duration{0, 0}},
		{"stopped timers do not fire", []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, []int{1},
			func(c *ManualClock) { c.Advance(time.Hour) }, []int{0, 2}, []time.Duration{time.Second, 3 * time.Second}},
		{"Set forward", []time.Duration{2 * time.Second, time.Second}, nil,
			func(c *ManualClock) { c.Set(start.Add(time.Minute)) }, []int{1, 0},
			[]time.Duration{time.Second, 2 * time.Second}},
		{"Set backward fires nothing new", []time.Duration{time.Second}, nil,
			func(c *ManualClock) { c.Set(start.Add(-time.Hour)) }, nil, nil},
		{"small steps", []time.Duration{1500 * time.Millisecond, 500 * time.Millisecond}, nil,
			func(c *ManualClock) {
				for range 4 {
					c.Advance(500 * time.Millisecond)
				}
			}, []int{1, 0}, []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewManualClock(start)
			var fired []int
			var seen []time.Duration
			timers := make([]Timer, len(tc.arm))
			for i, d := range tc.arm {
				timers[i] = c.AfterFunc(d, func() {
					fired = append(fired, i)
					seen = append(seen, c.Now().Sub(start))
				})
			}
			for _, i := range tc.stop {
				if !timers[i].Stop() {
					t.Errorf("Stop of armed timer %d = false", i)
				}
			}
			if len(fired) != 0 {
				t.Fatalf("callbacks ran before the clock moved: %v", fired)
			}
			tc.move(c)
			if !slices.Equal(fired, tc.want) || !slices.Equal(seen, tc.offset) {
				t.Errorf("fired %v at %v, want %v at %v", fired, seen, tc.want, tc.offset)
			}
			for i, tm := range timers {
				pending := !slices.Contains(tc.want, i) && !slices.Contains(tc.stop, i)
				if got := tm.Stop(); got != pending {
					t.Errorf("Stop of timer %d after the move = %v, want %v", i, got, pending)
				}
			}
			if n := c.Timers(); n != 0 {
				t.Errorf("Timers() = %d after stopping all", n)
			}
		})
	}
}

func TestManualClockCallbacks(t *testing.T) {
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	c := NewManualClock(start)

	// A callback that re-arms itself fires once per period of the move.
	var ticks []time.Duration
	var tick func()
	tick = func() {
		ticks = append(ticks, c.Now().Sub(start))
		if len(ticks) < 10 {
			c.AfterFunc(time.Second, tick)
		}
	}
	c.AfterFunc(time.Second, tick)
	// A callback may stop a later timer.
	var late Timer
	c.AfterFunc(2500*time.Millisecond, func() {
		if !late.Stop() {
			t.Error("Stop from a callback = false")
		}
	})
	late = c.AfterFunc(3*time.Second, func() { t.Error("stopped timer fired") })

	if got := c.Advance(4 * time.Second); !got.Equal(start.Add(4 * time.Second)) {
		t.Errorf("Advance returned %v", got)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}
	if !slices.Equal(ticks, want) {
		t.Errorf("ticks at %v, want %v", ticks, want)
	}
	if !c.Now().Equal(start.Add(4 * time.Second)) {
		t.Errorf("Now() after the move = %v", c.Now())
	}
	if n := c.Timers(); n != 1 {
		t.Errorf("Timers() = %d, want 1 (the next tick)", n)
	}
}

func TestManualClockWaitForTimers(t *testing.T) {
	c := NewManualClock(time.Time{})
	fired := make(chan struct{})
	go func() {
		c.AfterFunc(time.Second, func() { close(fired) })
	}()
	if err := c.WaitForTimers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	<-fired // closed on this goroutine, before Advance returned

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.WaitForTimers(ctx, 5); err != context.Canceled {
		t.Errorf("WaitForTimers with a cancelled context = %v", err)
	}
}

func TestManualClockConcurrentTimers(t *testing.T) {
	c := NewManualClock(time.Time{})
	var mu sync.Mutex
	count, stopped := 0, 0
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				tm := c.AfterFunc(time.Duration(i%7)*time.Millisecond, func() {
					mu.Lock()
					count++
					mu.Unlock()
				})
				if g%2 == 0 && i%3 == 0 && tm.Stop() {
					mu.Lock()
					stopped++
					mu.Unlock()
				}
				c.Advance(time.Millisecond)
			}
		})
	}
	wg.Wait()
	c.Advance(time.Hour)
	if n := c.Timers(); n != 0 {
		t.Errorf("Timers() = %d after the last move", n)
	}
	// Every timer either fired once or was stopped (a Stop may lose the
	// race with another goroutine's Advance, and then returns false).
	if count+stopped != 800 || stopped == 0 {
		t.Errorf("%d callbacks ran, %d timers stopped; want 800 in all", count, stopped)
	}
}

func TestSystemClockAfterFunc(t *testing.T) {
	var c Clock = SystemClock{}
	done := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(done) })
	<-done
	tm := c.AfterFunc(time.Hour, func() { t.Error("stopped timer fired") })
	if !tm.Stop() {
		t.Error("first Stop = false")
	}
	if tm.Stop() {
		t.Error("second Stop = true")
	}
	fired := make(chan struct{})
	tm = c.AfterFunc(0, func() { close(fired) })
	<-fired
	if tm.Stop() {
		t.Error("Stop after the callback ran = true")
	}
}
