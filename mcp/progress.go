package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"sync"

	"github.com/mcprt/mcprt/core"
)

// NotifyProgress is the notification that reports a request's progress.
const NotifyProgress = "notifications/progress"

// Progress reporting: a client that wants progress for a request puts a
// progressToken in its _meta; the handler then reports with
// CallToolRequest.Progress, and the client gets notifications/progress
// carrying that token, until the request is answered.
var (
	// ErrNoProgressToken is returned by Progress when the request carries
	// no progressToken: the client did not ask for progress, nothing is
	// sent, and the handler may ignore the error.
	ErrNoProgressToken = errors.New("mcp: the request has no progressToken: the client did not ask for progress")
	// ErrProgressEnded is returned by Progress once the request has been
	// answered (or given up: timed out, cancelled, its session closed):
	// nothing is sent after the response.
	ErrProgressEnded = errors.New("mcp: the request has been answered or abandoned: no more progress is sent for it")
)

// progressParams are the params of notifications/progress.
type progressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         float64         `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
}

// progressReporter is the progress reporting of one request that carries
// a progressToken. end is called before the request's response is sent;
// mu makes a notification being written finish before that response.
type progressReporter struct {
	sess    *Session
	ctx     context.Context // the request's context: notifications belong to it
	token   json.RawMessage
	message bool // the revision has progress messages (from 2025-03-26)

	mu    sync.Mutex // guards the fields below; held while a notification is written
	ended bool
	sent  bool
	last  float64
}

// newProgressReporter returns the reporter of a request with _meta meta,
// or nil when the request carries no progressToken. ctx is the request's
// context; version the request's protocol revision.
func newProgressReporter(sess *Session, ctx context.Context, meta Meta, version string) *progressReporter {
	token, ok := meta.ProgressToken()
	if !ok {
		return nil
	}
	return &progressReporter{sess: sess, ctx: ctx, token: token, message: version >= Version20250326}
}

// end marks the request as answered or abandoned: every later report is
// refused. It waits for a report being written. A nil reporter is fine.
func (p *progressReporter) end() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
}

// report sends one notifications/progress; see CallToolRequest.Progress.
func (p *progressReporter) report(ctx context.Context, progress, total float64, message string) error {
	if p == nil {
		return ErrNoProgressToken
	}
	if math.IsNaN(progress) || math.IsInf(progress, 0) {
		return core.NewError(core.CodeInvalidArgument, "progress must be a finite number")
	}
	if math.IsNaN(total) || math.IsInf(total, 0) || total < 0 {
		return core.NewError(core.CodeInvalidArgument, "total must be a finite number >= 0 (0: unknown)")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.ended || p.ctx.Err() != nil:
		return ErrProgressEnded
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case p.sent && progress <= p.last:
		return core.NewError(core.CodeInvalidArgument, "progress must increase with every report: got "+
			formatFloat(progress)+" after "+formatFloat(p.last)+"; nothing was sent")
	}
	params := progressParams{ProgressToken: p.token, Progress: progress, Total: total}
	if p.message {
		params.Message = message
	}
	if err := p.sess.Notify(p.ctx, NotifyProgress, params); err != nil {
		return err
	}
	p.sent, p.last = true, progress
	return nil
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Progress reports the call's progress to the client
// (notifications/progress) when the client asked for it with a
// _meta.progressToken; otherwise it sends nothing and returns
// ErrNoProgressToken, which the handler may ignore.
//
// progress must increase with every report (the first may be any finite
// number); a value that does not is refused with an *core.Error and
// nothing is sent. total is the amount of work when known, 0 when not
// (then it is left out). message describes the step; it is sent from
// revision 2025-03-26 on and left out under 2024-11-05.
//
// Once the call has been answered — the handler returned, its deadline
// passed, the client cancelled it or the session closed — Progress
// returns ErrProgressEnded and sends nothing: no progress ever follows the
// response. A report being written when the call is answered goes out
// before the answer. Progress may be called from several goroutines;
// reports are sent one at a time.
func (r *CallToolRequest) Progress(ctx context.Context, progress, total float64, message string) error {
	return r.progress.report(ctx, progress, total, message)
}
