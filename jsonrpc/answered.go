package jsonrpc

import "context"

// Answerer hears whether the answer a request's handler returned reached
// the stream. A layer that must know what the peer saw (a completion
// record) registers one with OnAnswered and answers by returning, as every
// handler does.
type Answerer interface {
	// Answered is called once, after the handler returned and its answer
	// was settled: sent is true when the response was handed to the
	// stream, false when none went out (the peer cancelled the request,
	// the connection closed, Respond answered first, or the handler
	// returned ErrNoResponse).
	Answered(sent bool)
}

// OnAnswered registers a for the request whose context ctx is; a later
// call replaces it. It must be called on the handler's own goroutine,
// before the handler returns. It reports whether ctx is a request's
// context; when it is not, a is never called.
func OnAnswered(ctx context.Context, a Answerer) bool {
	e, ok := ctx.Value(inflightKey{}).(*inflight)
	if ok {
		e.answerer = a
	}
	return ok
}

// answered tells e's Answerer, if any, whether its answer went out.
func (e *inflight) answered(sent bool) {
	if a := e.answerer; a != nil {
		e.answerer = nil
		a.Answered(sent)
	}
}
