package bench

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/mcprt/mcprt/jsonrpc"
)

// BenchmarkDecode frames and decodes tools/call request lines of about
// 100 B, 10 KB and 1 MB: jsonrpc.Framer.Next (the 1 MB line is longer than
// the framer's 64 KB read buffer, so it is assembled) then jsonrpc.Decode
// (UTF-8 and JSON validity, then the envelope). The lines come from an
// in-memory reader that repeats one line, whose copy into the framer's
// buffer is part of the cost, as a read from a pipe would be.
func BenchmarkDecode(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"small", 100}, {"medium", 10 << 10}, {"large", 1 << 20}} {
		b.Run(size.name, func(b *testing.B) {
			line := requestLine(size.bytes)
			fr := jsonrpc.NewFramer(&repeatReader{data: append(line, '\n')}, 4<<20)
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				l, err := fr.Next()
				if err != nil {
					b.Fatal(err)
				}
				msg, derr := jsonrpc.Decode(l)
				if derr != nil {
					b.Fatal(derr.Err)
				}
				if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != "tools/call" {
					b.Fatalf("decoded %#v", msg)
				}
			}
		})
	}
}

// requestLine returns a tools/call request line of about n bytes: a short
// string argument for small lines, an array of small objects (numbers,
// strings, a nested array, an escaped string) for larger ones.
func requestLine(n int) []byte {
	head := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"search","arguments":{`
	tail := `}}}`
	var b bytes.Buffer
	b.WriteString(head)
	if n <= 200 {
		b.WriteString(`"query":"`)
		for b.Len()+len(`"`)+len(tail) < n {
			b.WriteByte('q')
		}
		b.WriteString(`"`)
	} else {
		b.WriteString(`"items":[`)
		for i := 0; b.Len()+len(tail)+2 < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			is := strconv.Itoa(i)
			b.WriteString(`{"id":` + is + `,"name":"item-` + is + `","price":` + is + `.25,"tags":["a","b\"c"],"ok":true}`)
		}
		b.WriteString(`]`)
	}
	b.WriteString(tail)
	return b.Bytes()
}

// repeatReader reads data over and over.
type repeatReader struct {
	data []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.data[r.off:])
		n += c
		r.off = (r.off + c) % len(r.data)
	}
	return n, nil
}
