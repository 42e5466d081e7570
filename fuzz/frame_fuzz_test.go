package fuzz

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/mcprt/mcprt/jsonrpc"
)

// A frameEvent is one result of Framer.Next, or of the reference splitter.
type frameEvent struct {
	Kind string // one of the ev* values
	Line string // the line, for evLine
}

const (
	evLine    = "line"
	evTooLong = "too-long"
	evPartial = "partial"
	evEOF     = "eof"
	evErr     = "read-error"
)

// errReadFailed is what a reader in read-error mode returns at the end of
// its data instead of io.EOF.
var errReadFailed = errors.New("fuzz: read failed")

// refFrames is the reference splitter: split on '\n', strip one trailing
// '\r', drop lines holding only spaces and tabs, report a line longer than
// max as too long (its length counted without the terminator), and end
// with evPartial when the input ends in a fragment holding anything but
// spaces, tabs and CRs, evEOF otherwise.
//
// loose reports a final fragment of only spaces, tabs and CRs that is longer
// than max: the framer discards such a fragment unread, so it may report it
// as evPartial instead of evEOF. Both end the input; the Conn only logs a
// partial line.
func refFrames(data []byte, max int) (events []frameEvent, loose bool) {
	rest := data
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		line := rest[:i]
		rest = rest[i+1:]
		line = bytes.TrimSuffix(line, []byte{'\r'})
		switch {
		case len(line) > max:
			events = append(events, frameEvent{Kind: evTooLong})
		case len(bytes.Trim(line, " \t")) == 0:
			// blank
		default:
			events = append(events, frameEvent{Kind: evLine, Line: string(line)})
		}
	}
	if len(bytes.Trim(rest, " \t\r")) > 0 {
		return append(events, frameEvent{Kind: evPartial}), false
	}
	return append(events, frameEvent{Kind: evEOF}), len(rest) > max
}

// runFramer reads data through r with a Framer of limit max until the
// input ends, checking each line as it comes.
func runFramer(t *testing.T, data []byte, r io.Reader, max int) []frameEvent {
	t.Helper()
	fr := jsonrpc.NewFramer(r, max)
	limit := bytes.Count(data, []byte{'\n'}) + 2
	var events []frameEvent
	for calls := 0; ; calls++ {
		if calls > limit {
			t.Fatalf("max %d: Next was called %d times on input with %d newlines without reaching the end; events %v",
				max, calls, limit-2, events)
		}
		line, err := fr.Next()
		switch {
		case err == nil:
			if bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("max %d: line %q holds a newline", max, line)
			}
			if len(line) > max {
				t.Fatalf("max %d: line of %d bytes is over the limit: %q", max, len(line), line)
			}
			if len(bytes.Trim(line, " \t")) == 0 {
				t.Fatalf("max %d: blank line %q returned", max, line)
			}
			events = append(events, frameEvent{Kind: evLine, Line: string(line)})
			continue
		case errors.Is(err, jsonrpc.ErrLineTooLong):
			if line != nil {
				t.Fatalf("max %d: ErrLineTooLong with a line %q", max, line)
			}
			events = append(events, frameEvent{Kind: evTooLong})
			continue
		case errors.Is(err, jsonrpc.ErrPartialLine):
			events = append(events, frameEvent{Kind: evPartial})
		case err == io.EOF:
			events = append(events, frameEvent{Kind: evEOF})
		case errors.Is(err, errReadFailed):
			events = append(events, frameEvent{Kind: evErr})
			return events
		default:
			t.Fatalf("max %d: unexpected error %v", max, err)
		}
		// The input has ended: the framer must stay at io.EOF.
		for range 2 {
			if line, err := fr.Next(); err != io.EOF || line != nil {
				t.Fatalf("max %d: after %s, Next returned %q, %v; want io.EOF", max,
					events[len(events)-1].Kind, line, err)
			}
		}
		return events
	}
}

// chunkReader returns its data in chunks of random size, sometimes an
// empty read, and sometimes the last chunk together with its end error.
type chunkReader struct {
	data     []byte
	rng      *rand.Rand
	maxChunk int
	end      error // io.EOF or errReadFailed
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.end
	}
	if len(p) == 0 || r.rng.IntN(16) == 0 {
		return 0, nil
	}
	n := min(1+r.rng.IntN(r.maxChunk), len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	if len(r.data) == 0 && r.rng.IntN(2) == 0 {
		return n, r.end
	}
	return n, nil
}

// frameReader is a way of delivering the input.
type frameReader struct {
	name  string
	fails bool // ends with errReadFailed instead of io.EOF
	make  func(data []byte, seed uint64) io.Reader
}

var frameReaders = []frameReader{
	{name: "one-byte", make: func(d []byte, _ uint64) io.Reader { return iotest.OneByteReader(bytes.NewReader(d)) }},
	{name: "half", make: func(d []byte, _ uint64) io.Reader { return iotest.HalfReader(bytes.NewReader(d)) }},
	{name: "data-eof", make: func(d []byte, _ uint64) io.Reader { return iotest.DataErrReader(bytes.NewReader(d)) }},
	{name: "chunks", make: func(d []byte, seed uint64) io.Reader {
		rng := rand.New(rand.NewPCG(seed, 1))
		return &chunkReader{data: d, rng: rng, maxChunk: 1 + rng.IntN(64), end: io.EOF}
	}},
	{name: "chunks-read-error", fails: true, make: func(d []byte, seed uint64) io.Reader {
		rng := rand.New(rand.NewPCG(seed, 2))
		return &chunkReader{data: d, rng: rng, maxChunk: 1 + rng.IntN(4096), end: errReadFailed}
	}},
}

// frameLimits returns the line limits to try on data: two derived from its
// hash (one below the 16-byte minimum read buffer), the longest line's
// length and one less (the boundary), and one above the whole input.
func frameLimits(data []byte, h uint64) []int {
	longest := 0
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		longest = max(longest, len(bytes.TrimSuffix(line, []byte{'\r'})))
	}
	limits := []int{1 + int(h%13), 1 + int(h>>8%300), len(data) + 1}
	if longest > 0 {
		limits = append(limits, longest)
	}
	if longest > 1 {
		limits = append(limits, longest-1)
	}
	return limits
}

func FuzzFramer(f *testing.F) {
	for _, s := range framerSeeds() {
		f.Add(s.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h := fnv.New64a()
		h.Write(data)
		seed := h.Sum64()
		for _, max := range frameLimits(data, seed) {
			want, loose := refFrames(data, max)
			for _, fr := range frameReaders {
				got := runFramer(t, data, fr.make(data, seed), max)
				expect := want
				if fr.fails {
					// Whatever the end of the input holds, the read error
					// is reported after the complete lines.
					expect = append(append([]frameEvent(nil), want[:len(want)-1]...), frameEvent{Kind: evErr})
				} else if loose && got[len(got)-1].Kind == evPartial {
					expect = append(append([]frameEvent(nil), want[:len(want)-1]...), frameEvent{Kind: evPartial})
				}
				if diff := cmp.Diff(expect, got); diff != "" {
					t.Fatalf("reader %s, max %d: events differ from the reference splitter (-want +got):\n%s",
						fr.name, max, diff)
				}
			}
		}
	})
}

// TestRefFrames pins the reference splitter itself on a few inputs, so a
// mistake in it cannot hide one in the framer.
func TestRefFrames(t *testing.T) {
	line := func(s string) frameEvent { return frameEvent{Kind: evLine, Line: s} }
	tooLong := frameEvent{Kind: evTooLong}
	eof := frameEvent{Kind: evEOF}
	partial := frameEvent{Kind: evPartial}
	tests := []struct {
		in    string
		max   int
		want  []frameEvent
		loose bool
	}{
		{"", 5, []frameEvent{eof}, false},
		{"a\nbb\r\n\n \t\r\n", 5, []frameEvent{line("a"), line("bb"), eof}, false},
		{"abcde\r\nabcdef\n", 5, []frameEvent{line("abcde"), tooLong, eof}, false},
		{"abcde\r\r\n", 5, []frameEvent{tooLong, eof}, false},
		{"abcd\r\r\n", 5, []frameEvent{line("abcd\r"), eof}, false},
		{"\r\r\n", 5, []frameEvent{line("\r"), eof}, false},
		{"      \n", 5, []frameEvent{tooLong, eof}, false},
		{"a\nb", 5, []frameEvent{line("a"), partial}, false},
		{"a\n \r\t", 5, []frameEvent{line("a"), eof}, false},
		{"a\n       ", 5, []frameEvent{line("a"), eof}, true},
	}
	for _, tt := range tests {
		got, loose := refFrames([]byte(tt.in), tt.max)
		if diff := cmp.Diff(tt.want, got); diff != "" || loose != tt.loose {
			t.Errorf("refFrames(%q, %d) loose %v (want %v), diff (-want +got):\n%s", tt.in, tt.max, loose, tt.loose, diff)
		}
	}
}

// framerSeeds are multi-line inputs for FuzzFramer.
func framerSeeds() []seed {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	long := `{"jsonrpc":"2.0","id":2,"method":"x","params":{"pad":"` + strings.Repeat("a", 300) + `"}}`
	s := []seed{
		{"lf", []byte(ping + "\n" + ping + "\n")},
		{"crlf", []byte(ping + "\r\n" + ping + "\r\n")},
		{"blank-lines", []byte("\n\n \n\t\r\n" + ping + "\n \t \n")},
		{"cr-only-lines", []byte("\r\n\r\r\n\r\n \r \n")},
		{"double-cr", []byte(ping + "\r\r\n")},
		{"half-written", []byte(ping + "\n" + `{"jsonrpc":"2.0","id":3,"meth`)},
		{"half-written-blank", []byte(ping + "\n  \t\r")},
		{"over-long", []byte(long + "\n" + ping + "\n")},
		{"over-long-at-eof", []byte(ping + "\n" + long)},
		{"over-long-blank", []byte(strings.Repeat(" ", 400) + "\n" + ping + "\n" + strings.Repeat("\t", 400))},
		{"over-long-crlf", []byte(long + "\r\n" + long + "\r\r\n")},
		{"nul-bytes", []byte("\x00\n" + ping + "\x00\n\x00")},
		{"invalid-utf8", []byte("\xff\xfe\n\xc3\x28\r\n" + ping + "\n")},
		{"only-newlines", []byte("\n\n\n\n")},
		{"no-newline", []byte(ping)},
		{"exact-16", []byte("0123456789abcdef\n0123456789abcde\r\n0123456789abcdefg\n")},
		{"batch", []byte("[" + ping + "," + ping + "]\n")},
	}
	for _, d := range decodeSeeds() {
		s = append(s, seed{"line-" + d.name, append(append([]byte(nil), d.data...), '\n')})
	}
	return s
}

// seed is a named seed input.
type seed struct {
	name string
	data []byte
}

// writeCorpus writes seeds as the go test fuzz v1 corpus of target under
// testdata/fuzz/, one file per seed.
func writeCorpus(t *testing.T, target string, seeds []seed) {
	t.Helper()
	dir := "testdata/fuzz/" + target
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s.data)
		if err := os.WriteFile(dir+"/seed-"+s.name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
