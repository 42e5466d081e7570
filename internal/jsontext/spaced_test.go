package jsontext

import (
	"io"
	"testing"
)

// TestSpacedInsertsOnlyTopLevelSpaces reads through buffers of every small
// size: the decoder must see the object with a space before each
// top-level ',', ':' and '}', and nothing else changed; Offset maps every
// served byte that came from the object back to it.
func TestSpacedInsertsOnlyTopLevelSpaces(t *testing.T) {
	for _, tc := range []struct{ obj, want string }{
		{`{"a":"x,:}\"","b":{"c":[1,{"d":":"}]},"e":-1.5e3}`, `{"a" :"x,:}\"" ,"b" :{"c":[1,{"d":":"}]} ,"e" :-1.5e3 }`},
		{` { "a" : [ ] , "b":"\\" }  `, ` { "a"  : [ ]  , "b" :"\\"  }  `},
		{`{}`, `{ }`},
	} {
		for size := 1; size <= len(tc.want)+1; size++ {
			var s Spaced
			s.Reset([]byte(tc.obj))
			var got []byte
			buf := make([]byte, size)
			for {
				n, err := s.Read(buf)
				got = append(got, buf[:n]...)
				if err == io.EOF {
					break
				}
			}
			if string(got) != tc.want {
				t.Fatalf("size %d: got %s, want %s", size, got, tc.want)
			}
			if !s.Done() {
				t.Fatalf("size %d: not done after EOF", size)
			}
			// Every byte served that is not an inserted space maps back to
			// the same byte of the object, in order.
			inserted := map[int]bool{}
			for _, p := range s.spaces {
				inserted[p] = true
			}
			if len(got)-len(inserted) != len(tc.obj) {
				t.Fatalf("size %d: %d spaces recorded for %q, want %d", size, len(inserted), tc.want, len(got)-len(tc.obj))
			}
			next := 0
			for p := range got {
				if inserted[p] {
					continue
				}
				if o := s.Offset(p); o != next || tc.obj[o] != got[p] {
					t.Fatalf("size %d: Offset(%d) = %d, want %d", size, p, o, next)
				}
				next++
			}
		}
	}
}
