package core

import (
	"regexp"
	"sync"
	"testing"
)

// uuidV4 matches a lowercase version 4, variant 10xx UUID.
var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestUUIDGeneratorFormatAndUniqueness(t *testing.T) {
	var g UUIDGenerator
	seen := make(map[string]bool, 10000)
	for range 10000 {
		id := g.NewID()
		if !uuidV4.MatchString(id) {
			t.Fatalf("NewID() = %q, not a lowercase v4 UUID", id)
		}
		if seen[id] {
			t.Fatalf("NewID() repeated %q", id)
		}
		seen[id] = true
	}
}

func TestUUIDGeneratorRandomBits(t *testing.T) {
	// Over many ids every one of the 122 random bits must take both values.
	var g UUIDGenerator
	var ones, zeros [16]byte
	for range 1000 {
		id := g.NewID()
		var u [16]byte
		j := 0
		for i := 0; i < len(id); i++ {
			if id[i] == '-' {
				continue
			}
			u[j/2] = u[j/2]<<4 | unhex(id[i])
			j++
		}
		for i := range u {
			ones[i] |= u[i]
			zeros[i] |= ^u[i]
		}
	}
	for i := range ones {
		wantOnes, wantZeros := byte(0xff), byte(0xff)
		switch i {
		case 6: // version nibble 0100
			wantOnes, wantZeros = 0x4f, 0xbf
		case 8: // variant bits 10
			wantOnes, wantZeros = 0xbf, 0x7f
		}
		if ones[i] != wantOnes || zeros[i] != wantZeros {
			t.Errorf("byte %d: bits seen set %08b, clear %08b; want %08b, %08b", i, ones[i], zeros[i], wantOnes, wantZeros)
		}
	}
}

func unhex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

func TestUUIDGeneratorConcurrent(t *testing.T) {
	var g UUIDGenerator
	const workers, each = 16, 1000
	ids := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				ids[w] = append(ids[w], g.NewID())
			}
		})
	}
	wg.Wait()
	seen := make(map[string]bool, workers*each)
	for _, list := range ids {
		for _, id := range list {
			if seen[id] || !uuidV4.MatchString(id) {
				t.Fatalf("bad or repeated id %q", id)
			}
			seen[id] = true
		}
	}
}

func TestSequenceGenerator(t *testing.T) {
	var g SequenceGenerator
	want := []string{
		"00000000-0000-4000-8000-000000000001",
		"00000000-0000-4000-8000-000000000002",
		"00000000-0000-4000-8000-000000000003",
	}
	for _, w := range want {
		if got := g.NewID(); got != w {
			t.Errorf("NewID() = %q, want %q", got, w)
		}
	}
	for range 12 {
		g.NewID()
	}
	if got, w := g.NewID(), "00000000-0000-4000-8000-000000000010"; got != w {
		t.Errorf("16th NewID() = %q, want %q", got, w)
	}
	if !uuidV4.MatchString(g.NewID()) {
		t.Errorf("sequence ids are not UUID-shaped")
	}
	var _ IDGenerator = &g
	var _ IDGenerator = &UUIDGenerator{}
}

func TestSequenceGeneratorConcurrent(t *testing.T) {
	var g SequenceGenerator
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			for range 100 {
				id := g.NewID()
				mu.Lock()
				if seen[id] {
					t.Errorf("repeated %q", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 1000 || !seen["00000000-0000-4000-8000-0000000003e8"] {
		t.Errorf("got %d ids, want 1..1000", len(seen))
	}
}

func BenchmarkUUID(b *testing.B) {
	var g UUIDGenerator
	b.ReportAllocs()
	for b.Loop() {
		_ = g.NewID()
	}
}

func BenchmarkUUIDParallel(b *testing.B) {
	var g UUIDGenerator
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = g.NewID()
		}
	})
}

// BenchmarkUUIDGenerator is one id, as a call takes two.
func BenchmarkUUIDGenerator(b *testing.B) {
	var g UUIDGenerator
	b.ReportAllocs()
	for b.Loop() {
		_ = g.NewID()
	}
}
