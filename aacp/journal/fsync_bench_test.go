package journal

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkFsync measures the floor of a durable send on this disk: one
// 400-byte line appended to a file and fsynced, one at a time (p50 and
// p99 in milliseconds). A send under fsync=always cannot be faster.
func BenchmarkFsync(b *testing.B) {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "f.ndjson"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line := make([]byte, 400)
	line[len(line)-1] = '\n'
	lat := make([]float64, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2], "p50-ms")
	b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99-ms")
}
