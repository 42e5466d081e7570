package core

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// LogOptions configures NewLogger. The zero value logs at level info and
// redacts nothing (it still sanitizes).
type LogOptions struct {
	// Level is the minimum level written; nil means slog.LevelInfo.
	Level slog.Leveler
	// RedactKeys are the keys whose values are replaced by RedactedValue,
	// matched exactly but case-insensitively (the logging.redactKeys
	// setting).
	RedactKeys []string
}

// NewLogger returns a *slog.Logger that writes JSON lines to w in the
// slog.JSONHandler format (time, level, msg, then the attributes), with
// redaction and sanitization applied to every record:
//
//   - an attribute whose key matches a redaction key has its value replaced
//     by RedactedValue, at any depth: inside slog.Group values, inside
//     groups opened with Logger.WithGroup (a redacted group name hides the
//     whole group), and inside slog.Any values through Redactor.Redact;
//   - the message, every attribute key and every string value is sanitized
//     (see Sanitize); an error value is written as its sanitized Error()
//     text.
//
// Values of simple kinds (string, numbers, bool, duration, time) are handled
// without reflection, and a record that needs no change is passed on as it
// is. The caller's values are never modified.
func NewLogger(w io.Writer, opts LogOptions) *slog.Logger {
	lw := &lockedWriter{w: w}
	inner := slog.NewJSONHandler(lw, &slog.HandlerOptions{Level: opts.Level})
	return slog.New(&redactHandler{inner: inner, red: NewRedactor(opts.RedactKeys),
		direct: &directSink{out: lw}, canDirect: true})
}

// ParseLevel maps "debug", "info", "warn" and "error" to their slog levels.
// Anything else is an error naming the allowed values.
func ParseLevel(s string) (slog.Level, error) {
	switch s {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return slog.LevelInfo, fmt.Errorf("invalid log level %q: allowed values are debug, info, warn, error", s)
}

// Sanitize replaces each control character U+0000–U+001F (including \n, \r
// and \t) in s with the six characters `\u00xx` (lowercase hex), so "a\nb"
// becomes `a\u000ab`. Other characters, non-ASCII ones included, are kept.
// It returns s itself, without allocating, when s has no control character.
func Sanitize(s string) string {
	first := controlIndex(s)
	if first < 0 {
		return s
	}
	n := 0
	for i := first; i < len(s); i++ {
		if s[i] < 0x20 {
			n++
		}
	}
	const hexDigits = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 5*n)
	b.WriteString(s[:first])
	for i := first; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 {
			b.WriteByte(c)
			continue
		}
		b.WriteString(`\u00`)
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xf])
	}
	return b.String()
}

// controlIndex returns the index of the first control character in s, or -1.
// Bytes below 0x20 never occur inside a multi-byte UTF-8 sequence, so a byte
// scan is exact.
func controlIndex(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return i
		}
	}
	return -1
}

// hasControl reports whether s holds a control character.
func hasControl(s string) bool { return controlIndex(s) >= 0 }

// redactHandler is the slog.Handler behind NewLogger: it rewrites records
// and attributes, then hands them to a slog.JSONHandler.
type redactHandler struct {
	inner slog.Handler
	red   *Redactor

	// hiding is set once a group whose name is a redaction key has been
	// opened with WithGroup: everything logged inside it is dropped and the
	// group is written as hidden:"[REDACTED]" (when it has content, as slog
	// omits empty groups).
	hiding bool
	hidden string // the sanitized name of that group
	shown  bool   // hidden:"[REDACTED]" is already in inner (via WithAttrs)

	// direct writes records of LogFields without slog (see logfields.go);
	// canDirect says whether this handler may use it: no group is open
	// and every attribute added by WithAttrs is one it can write (pre
	// holds them, as inner writes them).
	direct    *directSink
	canDirect bool
	pre       []byte
	fields    [cachedFields]fieldCache // what LogFields keeps per field position; guarded by direct.out.mu
}

// Enabled implements slog.Handler.
func (h *redactHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle implements slog.Handler.
func (h *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	if h.hiding {
		out := slog.NewRecord(rec.Time, rec.Level, Sanitize(rec.Message), rec.PC)
		if !h.shown && rec.NumAttrs() > 0 {
			out.AddAttrs(slog.String(h.hidden, RedactedValue))
		}
		return h.inner.Handle(ctx, out)
	}
	if !h.needsRewrite(&rec) {
		return h.inner.Handle(ctx, rec)
	}
	out := slog.NewRecord(rec.Time, rec.Level, Sanitize(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.cleanAttr(a, 0))
		return true
	})
	return h.inner.Handle(ctx, out)
}

// WithAttrs implements slog.Handler. The attributes are cleaned once, here.
func (h *redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	if h.hiding {
		if h.shown {
			return h
		}
		return &redactHandler{
			inner:  h.inner.WithAttrs([]slog.Attr{slog.String(h.hidden, RedactedValue)}),
			red:    h.red,
			hiding: true,
			hidden: h.hidden,
			shown:  true,
		}
	}
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.cleanAttr(a, 0)
	}
	pre, ok := appendPreformatted(h.pre, clean)
	return &redactHandler{inner: h.inner.WithAttrs(clean), red: h.red,
		direct: h.direct, canDirect: h.canDirect && ok, pre: pre}
}

// WithGroup implements slog.Handler.
func (h *redactHandler) WithGroup(name string) slog.Handler {
	if name == "" || h.hiding {
		return h
	}
	if h.red.IsRedacted(name) {
		return &redactHandler{inner: h.inner, red: h.red, hiding: true, hidden: Sanitize(name)}
	}
	return &redactHandler{inner: h.inner.WithGroup(Sanitize(name)), red: h.red}
}

// needsRewrite reports whether rec must be rebuilt: its message holds a
// control character, or some attribute needs cleaning. It never resolves a
// LogValuer (that is done once, by cleanAttr).
func (h *redactHandler) needsRewrite(rec *slog.Record) bool {
	if hasControl(rec.Message) {
		return true
	}
	need := false
	rec.Attrs(func(a slog.Attr) bool {
		need = h.attrNeedsRewrite(a)
		return !need
	})
	return need
}

// attrNeedsRewrite reports whether cleanAttr could change a. Groups and
// values of kind Any or LogValuer are always rewritten.
func (h *redactHandler) attrNeedsRewrite(a slog.Attr) bool {
	if hasControl(a.Key) || h.red.IsRedacted(a.Key) {
		return true
	}
	switch a.Value.Kind() {
	case slog.KindString:
		return hasControl(a.Value.String())
	case slog.KindAny, slog.KindGroup, slog.KindLogValuer:
		return true
	}
	return false
}

// cleanAttr returns a redacted, sanitized copy of a; depth counts the
// groups around it.
func (h *redactHandler) cleanAttr(a slog.Attr, depth int) slog.Attr {
	a.Value = a.Value.Resolve()
	key := Sanitize(a.Key)
	if h.red.IsRedacted(a.Key) {
		return slog.String(key, RedactedValue)
	}
	switch a.Value.Kind() {
	case slog.KindString:
		return slog.String(key, Sanitize(a.Value.String()))
	case slog.KindGroup:
		if depth >= MaxRedactDepth {
			return slog.String(key, TruncatedValue)
		}
		group := a.Value.Group()
		clean := make([]slog.Attr, len(group))
		for i, ga := range group {
			clean[i] = h.cleanAttr(ga, depth+1)
		}
		return slog.Attr{Key: key, Value: slog.GroupValue(clean...)}
	case slog.KindAny:
		v, _ := h.red.walk(a.Value.Any(), depth, modeShare)
		return slog.Any(key, v)
	}
	a.Key = key
	return a
}
