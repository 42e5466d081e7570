package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// ErrLineTooLong reports a line longer than the framer's limit. The line
// was discarded; the next call to Next reads the line after it.
var ErrLineTooLong = errors.New("jsonrpc: line exceeds the maximum message size")

// ErrPartialLine reports input that ended in the middle of a line. The
// fragment was discarded; the next call to Next returns io.EOF.
var ErrPartialLine = errors.New("jsonrpc: input ended in the middle of a line")

// readBufferSize is the bufio buffer: lines up to this size are returned
// without copying.
const readBufferSize = 64 << 10

// keepBufferMax bounds the assembly buffer kept between long lines, so a
// single huge message does not pin its memory for the connection's life.
const keepBufferMax = 1 << 20

// Framer splits a byte stream into newline-terminated lines under a maximum
// length. It never buffers more than the limit: an over-long line is read
// and dropped in bounded chunks. A Framer is not safe for concurrent use.
type Framer struct {
	r   *bufio.Reader
	max int
	buf []byte // assembles lines longer than the bufio buffer
}

// NewFramer returns a Framer reading from r that accepts lines of at most
// max bytes (terminator excluded).
func NewFramer(r io.Reader, max int) *Framer {
	size := readBufferSize
	if max+2 < size {
		size = max + 2
	}
	if size < 16 {
		size = 16
	}
	return &Framer{r: bufio.NewReaderSize(r, size), max: max}
}

// Next returns the next line that is not blank, without its "\n" or "\r\n"
// terminator. The slice is valid only until the next call. It returns
// ErrLineTooLong for an over-long line, ErrPartialLine when the input ends
// inside a line, io.EOF at the end of the input, and any read error.
func (f *Framer) Next() ([]byte, error) {
	for {
		line, err := f.readLine()
		if err != nil {
			return nil, err
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) == 0 || isBlank(line) {
			continue
		}
		return line, nil
	}
}

// Buffered returns the number of input bytes read but not yet returned.
func (f *Framer) Buffered() int { return f.r.Buffered() }

// readLine returns one line without its '\n'.
func (f *Framer) readLine() ([]byte, error) {
	chunk, err := f.r.ReadSlice('\n')
	if err == nil {
		line := chunk[:len(chunk)-1]
		if len(line) > f.max+1 || (len(line) == f.max+1 && line[f.max] != '\r') {
			return nil, ErrLineTooLong
		}
		return line, nil
	}
	if err != bufio.ErrBufferFull {
		return nil, f.atEnd(chunk, err)
	}
	// The line is longer than the bufio buffer: assemble it, up to max.
	if f.buf != nil && cap(f.buf) > keepBufferMax {
		f.buf = nil
	}
	f.buf = append(f.buf[:0], chunk...)
	for {
		chunk, err = f.r.ReadSlice('\n')
		if len(f.buf)+len(chunk) > f.max+2 {
			return nil, f.discard(err)
		}
		f.buf = append(f.buf, chunk...)
		switch err {
		case nil:
			line := f.buf[:len(f.buf)-1]
			if len(line) > f.max+1 || (len(line) == f.max+1 && line[f.max] != '\r') {
				return nil, ErrLineTooLong
			}
			return line, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return nil, f.atEnd(f.buf, err)
		}
	}
}

// discard drops the rest of an over-long line in bounded chunks.
func (f *Framer) discard(err error) error {
	for err == bufio.ErrBufferFull {
		_, err = f.r.ReadSlice('\n')
	}
	if err != nil {
		// The input ended (or failed) inside the over-long line.
		if err == io.EOF {
			return ErrPartialLine
		}
		return err
	}
	return ErrLineTooLong
}

// atEnd classifies the end of input: a clean EOF, or a fragment at EOF.
func (f *Framer) atEnd(rest []byte, err error) error {
	if err == io.EOF {
		if len(bytes.TrimRight(rest, " \t\r")) > 0 {
			return ErrPartialLine
		}
		return io.EOF
	}
	return err
}
