package idle

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestGroupCounts: Idle is closed exactly when the count is zero, for any
// sequence of moves.
func TestGroupCounts(t *testing.T) {
	cases := []struct {
		name  string
		moves []int
		idle  bool
	}{
		{"zero value", nil, true},
		{"one running", []int{1}, false},
		{"one done", []int{1, -1}, true},
		{"two, one done", []int{2, -1}, false},
		{"add after idle", []int{1, -1, 1}, false},
		{"many", []int{3, -1, -1, -1}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var g Group
			for _, d := range c.moves {
				g.Add(d)
			}
			select {
			case <-g.Idle():
				if !c.idle {
					t.Fatal("Idle is closed while jobs run")
				}
			default:
				if c.idle {
					t.Fatal("Idle is open with no job running")
				}
			}
		})
	}
}

// TestGroupWaitWakes: a waiter wakes when the last job is done, and a
// channel handed out before stays closed when a new job starts.
func TestGroupWaitWakes(t *testing.T) {
	var g Group
	g.Add(2)
	ch := g.Idle()
	done := make(chan error, 1)
	go func() { done <- g.Wait(context.Background()) }()
	g.Done()
	g.Done()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Wait = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return after the last Done")
	}
	g.Add(1)
	select {
	case <-ch:
	default:
		t.Fatal("a channel handed out before reopened")
	}
}

// TestGroupWaitTimeoutLeavesNothing: waits that give up start no goroutine.
func TestGroupWaitTimeoutLeavesNothing(t *testing.T) {
	var g Group
	g.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := runtime.NumGoroutine()
	for range 200 {
		if err := g.Wait(ctx); err != context.Canceled {
			t.Fatalf("Wait = %v, want context.Canceled", err)
		}
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines after 200 timed-out waits, %d before", after, before)
	}
}

func TestGroupNegativePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Done on an idle group did not panic")
		}
	}()
	var g Group
	g.Done()
}
