package wiretest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Checks of what the server writes: protocol lines on stdout, log lines
// on stderr.

// CheckProtocolLine reports why line is not one JSON-RPC 2.0 message or a
// non-empty array of them, or nil.
func CheckProtocolLine(line string) error {
	v, err := decode([]byte(line))
	if err != nil {
		return fmt.Errorf("stdout carries protocol only, got %s: %v", clip(line), err)
	}
	check := func(v any) error {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("stdout line is not a JSON-RPC message object: %s", clip(line))
		}
		if m["jsonrpc"] != "2.0" {
			return fmt.Errorf(`stdout line lacks "jsonrpc":"2.0": %s`, clip(line))
		}
		return nil
	}
	if arr, ok := v.([]any); ok {
		if len(arr) == 0 {
			return fmt.Errorf("stdout line is an empty array")
		}
		for _, e := range arr {
			if err := check(e); err != nil {
				return err
			}
		}
		return nil
	}
	return check(v)
}

// CheckLogLine decodes one stderr line and reports an error unless it is a
// JSON object with a string time, level and msg.
func CheckLogLine(line string) (map[string]any, error) {
	v, err := decode([]byte(line))
	if err != nil {
		return nil, fmt.Errorf("stderr line is not JSON: %s: %v", clip(line), err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("stderr line is not a JSON object: %s", clip(line))
	}
	for _, k := range []string{"time", "level", "msg"} {
		if _, ok := m[k].(string); !ok {
			return nil, fmt.Errorf("stderr line has no string %q: %s", k, clip(line))
		}
	}
	return m, nil
}

// decode decodes exactly one JSON value with UseNumber.
func decode(b []byte) (any, error) {
	if !json.Valid(b) {
		return nil, errors.New("not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// clip shortens a line for a failure message.
func clip(s string) string {
	const max = 300
	if len(s) > max {
		return fmt.Sprintf("%s…(%d bytes)", s[:max], len(s))
	}
	return s
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// lineQueue is an unbounded queue of stdout lines, so that the process is
// never blocked by a test that reads slowly.
type lineQueue struct {
	mu     sync.Mutex
	lines  []string
	err    error // set when stdout could not be read
	closed bool
	signal chan struct{} // closed and replaced on every change
}

func newLineQueue() *lineQueue { return &lineQueue{signal: make(chan struct{})} }

func (q *lineQueue) notify() {
	close(q.signal)
	q.signal = make(chan struct{})
}

func (q *lineQueue) push(s string) {
	q.mu.Lock()
	q.lines = append(q.lines, s)
	q.notify()
	q.mu.Unlock()
}

func (q *lineQueue) fail(err error) {
	q.mu.Lock()
	q.err = err
	q.notify()
	q.mu.Unlock()
}

func (q *lineQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.notify()
	q.mu.Unlock()
}

// pop returns the next line, waiting up to d.
func (q *lineQueue) pop(d time.Duration) (string, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		q.mu.Lock()
		if len(q.lines) > 0 {
			s := q.lines[0]
			q.lines[0] = ""
			q.lines = q.lines[1:]
			q.mu.Unlock()
			return s, nil
		}
		if q.err != nil {
			err := q.err
			q.mu.Unlock()
			return "", err
		}
		if q.closed {
			q.mu.Unlock()
			return "", errors.New("stdout was closed (the process exited)")
		}
		sig := q.signal
		q.mu.Unlock()
		select {
		case <-sig:
		case <-timer.C:
			return "", fmt.Errorf("nothing within %v", d)
		}
	}
}

// drain returns the lines nobody read.
func (q *lineQueue) drain() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.lines
	q.lines = nil
	return l
}

// logBuffer collects stderr; it is safe for concurrent use.
type logBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	signal chan struct{}
}

func newLogBuffer() *logBuffer { return &logBuffer{signal: make(chan struct{})} }

// Write implements io.Writer.
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	close(b.signal)
	b.signal = make(chan struct{})
	return len(p), nil
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines returns the complete lines written so far.
func (b *logBuffer) lines() []string {
	s := b.String()
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	} else {
		return nil
	}
	return strings.Split(s, "\n")
}

// changed returns a channel closed at the next write.
func (b *logBuffer) changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.signal
}
