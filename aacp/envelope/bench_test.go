package envelope

import (
	"encoding/json"
	"testing"
)

// BenchmarkParse parses a valid TASK_ASSIGNMENT line, as a receive does:
// the strict fast path, the envelope, and the payload's quick check.
func BenchmarkParse(b *testing.B) {
	v := newValidator(b)
	line, err := json.Marshal(valid())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Parse(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStrictFastPath is the strict check's fast path alone, on the
// same line.
func BenchmarkStrictFastPath(b *testing.B) {
	line, err := json.Marshal(valid())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if !strictOK(line) {
			b.Fatal("refused")
		}
	}
}

// BenchmarkAppendJSON encodes an envelope, as every send does.
func BenchmarkAppendJSON(b *testing.B) {
	v := newValidator(b)
	line, err := json.Marshal(valid())
	if err != nil {
		b.Fatal(err)
	}
	env, err := v.Parse(line)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	buf := make([]byte, 0, 1024)
	for b.Loop() {
		if buf, err = AppendJSON(buf[:0], env); err != nil {
			b.Fatal(err)
		}
	}
}
