package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestFramer(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []string // "ERR:long", "ERR:partial" for errors
	}{
		{"simple", "a\nb\n", 10, []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", 10, []string{"a", "b"}},
		{"blank and spaces", "\n \t\n\r\na\n", 10, []string{"a"}},
		{"exactly max", "abcde\n", 5, []string{"abcde"}},
		{"exactly max crlf", "abcde\r\n", 5, []string{"abcde"}},
		{"over max", "abcdef\nok\n", 5, []string{"ERR:long", "ok"}},
		{"way over max", strings.Repeat("x", 100000) + "\nok\n", 5, []string{"ERR:long", "ok"}},
		{"over bufio buffer but under max", strings.Repeat("y", 200000) + "\n", 300000, []string{strings.Repeat("y", 200000)}},
		{"over bufio buffer and over max", strings.Repeat("y", 200000) + "\nz\n", 150000, []string{"ERR:long", "z"}},
		{"fragment at eof", "a\nhalf", 10, []string{"a", "ERR:partial"}},
		{"blank fragment at eof", "a\n  ", 10, []string{"a"}},
		{"long fragment at eof", "a\n" + strings.Repeat("q", 100), 10, []string{"a", "ERR:partial"}},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tt.in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			f := NewFramer(r, tt.max)
			var got []string
			for {
				line, err := f.Next()
				if err == io.EOF {
					break
				}
				switch {
				case errors.Is(err, ErrLineTooLong):
					got = append(got, "ERR:long")
					continue
				case errors.Is(err, ErrPartialLine):
					got = append(got, "ERR:partial")
					continue
				case err != nil:
					t.Fatalf("%s: %v", tt.name, err)
				}
				got = append(got, string(line))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("%s (oneByte=%v): got %.100q, want %.100q", tt.name, oneByte, got, tt.want)
			}
		}
	}
}

// A json.RawMessage result is sent compacted as json.Compact compacts it;
// one that is not valid JSON is refused.
func TestRawResultCompacted(t *testing.T) {
	for _, in := range []string{`{}`, ` { "a" : [ 1 , "x y" , "q\" z" , "\\" ] }`, "[\n\t1,\r\n2 ]", `"  "`, `{"a":"\\\" "}`} {
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(in)); err != nil {
			t.Fatal(err)
		}
		got, err := encodeResult(Int64ID(1), json.RawMessage(in))
		if wantFrame := `{"jsonrpc":"2.0","id":1,"result":` + want.String() + "}\n"; err != nil || string(got) != wantFrame {
			t.Errorf("encodeResult(%q) = %q, %v; want %q", in, got, err, wantFrame)
		}
	}
	for _, bad := range []string{`{"a":`, `[1,]`, `"x`} {
		if got, err := encodeResult(Int64ID(1), json.RawMessage(bad)); err == nil {
			t.Errorf("encodeResult(%q) = %q, want an error", bad, got)
		}
	}
}

// chunkRecorder records the size of every write call.
type chunkRecorder struct{ writes [][]byte }

func (c *chunkRecorder) Write(p []byte) (int, error) {
	c.writes = append(c.writes, append([]byte(nil), p...))
	return len(p), nil
}

func TestWriteFramesKeepsFramesWholeWithinPipeBuf(t *testing.T) {
	var frames []byte
	sizes := []int{10, 4000, 50, 5000, 30, 4096, 1, 2000, 2095}
	for _, n := range sizes {
		frames = append(frames, bytes.Repeat([]byte("x"), n-1)...)
		frames = append(frames, '\n')
	}
	var rec chunkRecorder
	if err := writeFrames(&rec, frames); err != nil {
		t.Fatal(err)
	}
	var joined []byte
	for _, w := range rec.writes {
		if w[len(w)-1] != '\n' {
			t.Fatalf("a write ends inside a frame: %d bytes", len(w))
		}
		if len(w) > pipeBuf && bytes.Count(w, []byte("\n")) > 1 {
			t.Fatalf("a write of %d bytes holds several frames", len(w))
		}
		joined = append(joined, w...)
	}
	if !bytes.Equal(joined, frames) {
		t.Fatal("frames changed on the way")
	}
}
