package core

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func TestSlots(t *testing.T) {
	s := NewSlots(2)
	steps := []struct {
		op   string
		want bool
		use  int
	}{
		{"acquire", true, 1},
		{"acquire", true, 2},
		{"acquire", false, 2},
		{"release", true, 1},
		{"acquire", true, 2},
		{"release", true, 1},
		{"release", true, 0},
	}
	for i, st := range steps {
		got := true
		if st.op == "acquire" {
			got = s.TryAcquire()
		} else {
			s.Release()
		}
		if got != st.want || s.InUse() != st.use {
			t.Errorf("step %d %s: got %v, in use %d; want %v, %d", i, st.op, got, s.InUse(), st.want, st.use)
		}
	}
	if s.Max() != 2 {
		t.Errorf("Max() = %d, want 2", s.Max())
	}
}

func TestSlotsPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"NewSlots(0)", func() { NewSlots(0) }},
		{"NewSlots(-1)", func() { NewSlots(-1) }},
		{"Release with none held", func() { NewSlots(1).Release() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", tt.name)
				}
			}()
			tt.f()
		})
	}
}

func TestSlotsNeverExceedMax(t *testing.T) {
	const max = 7
	s := NewSlots(max)
	var held, peak, acquired atomic.Int64
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			for range 500 {
				if !s.TryAcquire() {
					runtime.Gosched()
					continue
				}
				acquired.Add(1)
				n := held.Add(1)
				if n > max {
					t.Errorf("%d slots held, max %d", n, max)
				}
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				if u := s.InUse(); u > max || u < 1 {
					t.Errorf("InUse() = %d while holding a slot (max %d)", u, max)
				}
				runtime.Gosched()
				held.Add(-1)
				s.Release()
			}
		})
	}
	wg.Wait()
	if s.InUse() != 0 {
		t.Errorf("InUse() = %d after all released", s.InUse())
	}
	if acquired.Load() == 0 || peak.Load() > max {
		t.Errorf("acquired %d, peak %d (max %d)", acquired.Load(), peak.Load(), max)
	}
}

func TestExhaustionCounter(t *testing.T) {
	var c ExhaustionCounter
	for i, want := range []int{1, 2, 3} {
		if got := c.Inc(); got != want {
			t.Errorf("Inc #%d = %d, want %d", i+1, got, want)
		}
	}
	if c.Value() != 3 {
		t.Errorf("Value() = %d, want 3", c.Value())
	}
	c.Reset()
	if c.Value() != 0 {
		t.Errorf("Value() after Reset = %d", c.Value())
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 100 {
				c.Inc()
			}
		})
	}
	wg.Wait()
	if c.Value() != 5000 {
		t.Errorf("Value() after concurrent Inc = %d, want 5000", c.Value())
	}
}

func BenchmarkSlots(b *testing.B) {
	s := NewSlots(10)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if s.TryAcquire() {
				s.Release()
			}
		}
	})
}
