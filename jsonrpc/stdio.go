package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"
)

// LineOptions configures a line transport. The zero value of each field
// means its default.
type LineOptions struct {
	// MaxMessageBytes bounds one line (default 4 MiB). A longer line is
	// read and dropped in bounded chunks and answered with -32600.
	MaxMessageBytes int
	// OutputBudget bounds the bytes of output accepted but not yet written
	// (default 1 MiB). While a client does not read and the queue is over
	// the budget, writers wait and the reader stops reading. A single
	// message larger than the budget is still written, alone.
	OutputBudget int
	// Logger receives the transport's logs (default: discarded).
	Logger *slog.Logger
}

const (
	defaultMaxMessageBytes = 4 << 20
	defaultOutputBudget    = 1 << 20
	// corkMaxBytes and corkMaxDelay bound how much output gathers, and for
	// how long, while the reader works through input it already has.
	corkMaxBytes = 64 << 10
	corkMaxDelay = time.Millisecond
)

// Line is the newline-delimited transport (stdio): one message per line
// in, one per line out. Reading frames lines under a size limit; writing
// goes through one write path that gathers the responses made while more
// input is already buffered (pipelined requests) and writes them together,
// in calls of at most PIPE_BUF bytes of whole lines, so a write cut short
// never leaves half a line. Create it with NewLine.
type Line struct {
	framer *Framer
	wr     *writer
	log    *slog.Logger
	max    int
	closer io.Closer // closes the input, if it can be closed

	werr   atomic.Pointer[error] // the write error that ended the output, if any
	failed chan struct{}         // closed when a write fails
}

var (
	_ Stream  = (*Line)(nil)
	_ Pacer   = (*Line)(nil)
	_ Failer  = (*Line)(nil)
	_ Drainer = (*Line)(nil)

	_ dataCopier = (*Line)(nil)
)

// NewLine returns a line transport reading from r and writing to w. When r
// is an io.Closer, Close closes it too, so that a blocked Read returns.
func NewLine(r io.Reader, w io.Writer, opts LineOptions) *Line {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = defaultMaxMessageBytes
	}
	if opts.OutputBudget <= 0 {
		opts.OutputBudget = defaultOutputBudget
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &Line{framer: NewFramer(r, opts.MaxMessageBytes), log: logger, max: opts.MaxMessageBytes,
		failed: make(chan struct{})}
	l.closer, _ = r.(io.Closer)
	l.wr = newWriter(w, opts.OutputBudget, func(err error) {
		// The output is gone: make the reader stop too, even when no
		// caller of Write sees the error (the cork timer wrote).
		if l.werr.CompareAndSwap(nil, &err) {
			close(l.failed)
			if l.closer != nil {
				_ = l.closer.Close()
			}
		}
	})
	return l
}

// Read returns the next non-blank line. Responses made while more input
// is buffered gather in the writer (bounded in bytes and time) and go out
// in one write before Read waits for input.
func (l *Line) Read() ([]byte, error) {
	if werr := l.werr.Load(); werr != nil {
		return nil, fmt.Errorf("jsonrpc: writing output: %w", *werr)
	}
	if l.framer.Buffered() == 0 {
		l.wr.uncork()
	}
	line, err := l.framer.Next()
	if err != nil {
		l.wr.uncork()
		// Wait for a write in progress (the cork timer's, say) to finish
		// what was accepted: the close that follows the end of the input
		// would drop it.
		_ = l.wr.write(nil, true)
	} else if l.framer.Buffered() > 0 {
		l.wr.cork()
	}
	if werr := l.werr.Load(); werr != nil && err != nil {
		return nil, fmt.Errorf("jsonrpc: writing output: %w", *werr)
	}
	switch {
	case err == nil:
		return line, nil
	case errors.Is(err, ErrLineTooLong):
		l.log.Warn("discarded a message over the size limit", "limit", l.max)
		return nil, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: the message is longer than " +
			strconv.Itoa(l.max) + " bytes (transport.maxMessageBytes) and was discarded; " +
			"send smaller messages or raise the limit",
			Data: map[string]any{"maxMessageBytes": l.max}}
	case errors.Is(err, ErrPartialLine):
		l.log.Warn("input ended in the middle of a line; the fragment was discarded")
		return nil, io.EOF
	case err == io.EOF:
		return nil, io.EOF
	}
	return nil, err
}

// Write sends one line. It returns before the line is written when
// another write is in progress or output is gathering, unless m.Flush is
// set; it waits while the output queued is over the budget.
func (l *Line) Write(_ context.Context, m Outgoing) error {
	return l.wr.write(m.Data, m.Flush)
}

// copiesData marks Line as a dataCopier: Write appends the message to the
// gathered batch (a copy) or writes it before it returns.
func (l *Line) copiesData() {}

// Failed is closed when a write fails: the output is gone, and the
// connection over this transport should end even while its reader waits.
func (l *Line) Failed() <-chan struct{} { return l.failed }

// Pace blocks while the output queued is over the budget (the client is
// not reading), until it drains or done is closed.
func (l *Line) Pace(done <-chan struct{}) { l.wr.pace(done) }

// Drain waits until every line accepted by Write is written (or writing
// failed), or done is closed. Call it after Close to let the output catch
// up before the process exits.
func (l *Line) Drain(done <-chan struct{}) { l.wr.drain(done) }

// Close refuses every later Write (lines already accepted are still
// written; Drain waits for them) and closes the input when it can be
// closed.
func (l *Line) Close() error {
	l.wr.close()
	if l.closer != nil {
		return l.closer.Close()
	}
	return nil
}
