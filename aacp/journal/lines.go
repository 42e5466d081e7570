package journal

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// tailChunk is how much of a file's end is read at a time when looking
// for its last line.
const tailChunk = 64 << 10

// completeSize returns the length of f's longest prefix that ends with a
// newline (0 when there is none): the bytes after it are a torn tail, a
// line whose writer stopped before finishing it.
func completeSize(f *os.File, size int64) (int64, error) {
	if size == 0 {
		return 0, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, fmt.Errorf("read the end of %s: %w", f.Name(), err)
	}
	if last[0] == '\n' {
		return size, nil
	}
	buf := make([]byte, tailChunk)
	end := size
	for end > 0 {
		start := max(0, end-tailChunk)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && err != io.EOF {
			return 0, fmt.Errorf("read %s: %w", f.Name(), err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// eachLine calls fn with each complete line of data (without its
// newline) and returns how many bytes the complete lines took.
func eachLine(data []byte, fn func(line []byte)) int {
	used := 0
	for {
		i := bytes.IndexByte(data[used:], '\n')
		if i < 0 {
			return used
		}
		if line := data[used : used+i]; len(bytes.TrimSpace(line)) > 0 {
			fn(line)
		}
		used += i + 1
	}
}
