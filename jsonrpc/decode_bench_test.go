package jsonrpc

import "testing"

// benchLine is a small tools/call request, as a client sends it.
const benchLine = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"search","arguments":{"query":"hello world"}}}`

// BenchmarkDecodeReused decodes request after request with one Decoder,
// as a connection's reader does (the params copied out of the line).
func BenchmarkDecodeReused(b *testing.B) {
	line := []byte(benchLine)
	var d Decoder
	b.ReportAllocs()
	for b.Loop() {
		if _, derr := d.Decode(line); derr != nil {
			b.Fatal(derr.Err)
		}
	}
}

// BenchmarkDecodeInPlace is BenchmarkDecodeReused for a message the
// decoder may slice (an HTTP body): nothing is copied out of it.
func BenchmarkDecodeInPlace(b *testing.B) {
	line := []byte(benchLine)
	var d Decoder
	b.ReportAllocs()
	for b.Loop() {
		if _, derr := d.DecodeInPlace(line); derr != nil {
			b.Fatal(derr.Err)
		}
	}
}
