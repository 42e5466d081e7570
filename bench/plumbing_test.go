package bench

import (
	"bufio"
	"io"
	"testing"
)

// cannedAnswer is the size and shape of mcprt's answer to a noop call.
var cannedAnswer = []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"{}"}],` +
	`"structuredContent":{},"isError":false}}` + "\n")

// BenchmarkPlumbing measures the in-process transport of the session
// benchmarks with a server that does nothing but read a line and write a
// canned answer, to show what of a BenchmarkDispatch* figure is plumbing:
//
//   - inline: the fake server answers on its reading goroutine, so the
//     pipe never blocks: the cost of making, copying and scanning the lines;
//   - goroutine: the fake server answers from a new goroutine per request,
//     as mcprt's tools/call does, so the reading goroutine parks in Read and
//     is woken per call: the floor of a goroutine-per-request server;
//   - iopipe: the usual alternative, io.Pipe both ways with a client
//     goroutine writing a request and reading its answer, and the inline
//     fake server: the overhead the pipe avoids.
func BenchmarkPlumbing(b *testing.B) {
	b.Run("inline", func(b *testing.B) {
		p := newPipe()
		done := fakeServer(p, p, false)
		ph := &phase{n: b.N, window: 1, line: requests(noopTail, 1)}
		b.ReportAllocs()
		b.ResetTimer()
		p.do(b, ph, b.N)
		b.StopTimer()
		close(p.phases)
		<-done
	})
	b.Run("goroutine", func(b *testing.B) {
		p := newPipe()
		done := fakeServer(p, p, true)
		ph := &phase{n: b.N, window: 1, line: requests(noopTail, 1)}
		b.ReportAllocs()
		b.ResetTimer()
		p.do(b, ph, b.N)
		b.StopTimer()
		close(p.phases)
		<-done
	})
	b.Run("iopipe", func(b *testing.B) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := fakeServer(inR, outW, false)
		line := requests(noopTail, 1)
		buf := make([]byte, 0, 256)
		br := bufio.NewReader(outR)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			buf, _ = line(buf[:0], i)
			if _, err := inW.Write(buf); err != nil {
				b.Fatal(err)
			}
			if _, err := br.ReadSlice('\n'); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		inW.Close()
		<-done
		outW.Close()
	})
}

// fakeServer reads lines from r and answers each with cannedAnswer on w,
// from a new goroutine per line when spawn is set. The returned channel is
// closed when r ends.
func fakeServer(r io.Reader, w io.Writer, spawn bool) chan struct{} {
	done := make(chan struct{})
	br := bufio.NewReaderSize(r, 64<<10)
	go func() {
		defer close(done)
		for {
			if _, err := br.ReadSlice('\n'); err != nil {
				return
			}
			if spawn {
				go w.Write(cannedAnswer)
			} else {
				_, _ = w.Write(cannedAnswer)
			}
		}
	}()
	return done
}
