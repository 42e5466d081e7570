package core

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// MaxRepeatMessages is how many distinct messages a LimitRepeats handler
// tracks. Beyond it, the records of messages not yet tracked share one
// limit, so the handler's memory stays bounded whatever is logged.
const MaxRepeatMessages = 1024

// SuppressedKey is the attribute LimitRepeats adds to a record to say how
// many records of the same message it suppressed before this one.
const SuppressedKey = "suppressed"

// LimitRepeats returns a handler that passes records to h but limits
// repeated warnings: records at slog.LevelWarn or above with the same
// message pass at most burst times per window; the rest are counted and
// dropped. The next record of that message that passes carries the count
// as an attribute, "suppressed": N (inside the groups the logger opened
// with WithGroup, like any attribute of the record). Records below
// slog.LevelWarn always pass.
//
// Each message's window starts with the first record of it that arrives
// after the previous window ended; time comes from clock (nil means
// SystemClock). burst < 1 counts as 1; window <= 0 disables the limit and
// returns h. Suppressed records of a message that never appears again are
// never reported.
//
// Handlers derived with WithAttrs and WithGroup share the limits, so a
// message is limited however many loggers write it. Memory is bounded:
// see MaxRepeatMessages.
//
// Use it for warnings a client can trigger at will (a response nobody
// asked for, a malformed notification), never for records that must all be
// written, such as the completion record of every tool call.
func LimitRepeats(h slog.Handler, clock Clock, burst int, window time.Duration) slog.Handler {
	if window <= 0 {
		return h
	}
	if clock == nil {
		clock = SystemClock{}
	}
	return &repeatHandler{inner: h, lim: &repeatLimiter{
		clock:   clock,
		burst:   max(burst, 1),
		window:  window,
		entries: make(map[string]*repeatEntry),
	}}
}

// repeatHandler is the handler LimitRepeats returns.
type repeatHandler struct {
	inner slog.Handler
	lim   *repeatLimiter // shared by the handlers derived from one LimitRepeats
}

// Enabled implements slog.Handler.
func (h *repeatHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle implements slog.Handler.
func (h *repeatHandler) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level < slog.LevelWarn {
		return h.inner.Handle(ctx, rec)
	}
	suppressed, pass := h.lim.admit(rec.Message)
	if !pass {
		return nil
	}
	if suppressed > 0 {
		rec = rec.Clone()
		rec.AddAttrs(slog.Uint64(SuppressedKey, suppressed))
	}
	return h.inner.Handle(ctx, rec)
}

// WithAttrs implements slog.Handler.
func (h *repeatHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &repeatHandler{inner: h.inner.WithAttrs(attrs), lim: h.lim}
}

// WithGroup implements slog.Handler.
func (h *repeatHandler) WithGroup(name string) slog.Handler {
	return &repeatHandler{inner: h.inner.WithGroup(name), lim: h.lim}
}

// repeatLimiter holds the per-message windows.
type repeatLimiter struct {
	clock  Clock
	burst  int
	window time.Duration

	mu       sync.Mutex
	entries  map[string]*repeatEntry // at most MaxRepeatMessages; guarded by mu
	overflow repeatEntry             // shared by untracked messages; guarded by mu
}

// repeatEntry is one message's current window.
type repeatEntry struct {
	start      time.Time // when the window began
	passed     int       // records passed in the window
	suppressed uint64    // records dropped since the last one passed
}

// admit decides whether a record of msg passes; when it does, it returns
// the number of records of msg suppressed since the previous one passed.
func (l *repeatLimiter) admit(msg string) (uint64, bool) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries[msg]
	if e == nil {
		if len(l.entries) >= MaxRepeatMessages {
			l.sweep(now)
		}
		if len(l.entries) < MaxRepeatMessages {
			e = &repeatEntry{start: now}
			l.entries[msg] = e
		} else {
			e = &l.overflow
		}
	}
	// A new window begins once the last one has ended (or when the clock
	// went back past its start).
	if now.Sub(e.start) >= l.window || now.Before(e.start) {
		e.start, e.passed = now, 0
	}
	if e.passed >= l.burst {
		e.suppressed++
		return 0, false
	}
	e.passed++
	n := e.suppressed
	e.suppressed = 0
	return n, true
}

// sweep forgets the messages whose window has ended with nothing left to
// report. mu is held.
func (l *repeatLimiter) sweep(now time.Time) {
	for msg, e := range l.entries {
		if e.suppressed == 0 && (now.Sub(e.start) >= l.window || now.Before(e.start)) {
			delete(l.entries, msg)
		}
	}
}
