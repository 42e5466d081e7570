package core

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcprt/mcprt/internal/jsontext"
)

// Field is one attribute of a record logged with LogFields: a string
// (StringField) or an integer (IntField).
type Field struct {
	Key   string
	Str   string
	Int   int64
	IsInt bool
}

// StringField is the attribute key: value, as slog.String makes it.
func StringField(key, value string) Field { return Field{Key: key, Str: value} }

// IntField is the attribute key: value, as slog.Int64 makes it.
func IntField(key string, value int64) Field { return Field{Key: key, Int: value, IsInt: true} }

// attr is f as a slog attribute.
func (f Field) attr() slog.Attr {
	if f.IsInt {
		return slog.Int64(f.Key, f.Int)
	}
	return slog.String(f.Key, f.Str)
}

// maxFields is how many fields LogFields takes on the stack when it falls
// back to slog; more cost an allocation.
const maxFields = 12

// LogFields logs msg at level through l with the fields as its attributes,
// in order: what l.LogAttrs(ctx, level, msg, attrs...) writes with the
// matching slog.String and slog.Int64 attributes, byte for byte. When l is
// a logger of NewLogger (or one derived from it by With, with attributes
// of kind string, integer or bool, and no group), LogFields writes the line
// itself, without slog's reflective path and without allocating: the same
// time (time.Now, as slog takes it), level, message, the attributes added
// by With, then the fields, redacted and sanitized as the handler would.
// Nothing is built when the level is not enabled.
func LogFields(ctx context.Context, l *slog.Logger, level slog.Level, msg string, fields ...Field) {
	if !l.Enabled(ctx, level) {
		return
	}
	if h, ok := l.Handler().(*redactHandler); ok && h.canDirect {
		h.writeFields(time.Now(), level, msg, fields)
		return
	}
	var buf [maxFields]slog.Attr
	attrs := buf[:0]
	for _, f := range fields {
		attrs = append(attrs, f.attr())
	}
	l.LogAttrs(ctx, level, msg, attrs...)
}

// directSink is where the handlers of one NewLogger write the lines of
// LogFields: the writer slog's handler writes to as well. Each line is
// built under its lock in a buffer it keeps.
type directSink struct {
	out *lockedWriter
}

// maxKeptLine bounds the line buffer kept for reuse.
const maxKeptLine = 4 << 10

// writeFields writes one record as slog.JSONHandler would after the
// handler's rewriting. The encoded key of each position (with its
// redaction) and the last value written there are kept (fieldCache), so a
// record that repeats the last one's keys, as the completion record does,
// encodes only the values that changed.
func (h *redactHandler) writeFields(t time.Time, level slog.Level, msg string, fields []Field) {
	lw := h.direct.out
	lw.mu.Lock()
	defer lw.mu.Unlock()
	b := lw.clock.appendTime(append(lw.line[:0], `{"time":"`...), t)
	b = append(b, `","level":`...)
	b = jsontext.AppendStringNoHTML(b, level.String())
	b = append(b, `,"msg":`...)
	b = jsontext.AppendStringNoHTML(b, Sanitize(msg))
	b = append(b, h.pre...)
	for i, f := range fields {
		if i >= len(h.fields) {
			b = h.appendField(b, f)
			continue
		}
		c := &h.fields[i]
		if c.key != f.Key || c.enc == nil {
			c.key, c.redacted = f.Key, h.red.IsRedacted(f.Key)
			c.enc = appendJSONKey(append(c.enc[:0], ','), f.Key)
		}
		b = append(b, c.enc...)
		switch {
		case c.redacted:
			b = jsontext.AppendStringNoHTML(b, RedactedValue)
		case f.IsInt:
			b = strconv.AppendInt(b, f.Int, 10)
		case c.hasVal && c.val == f.Str:
			b = append(b, c.valEnc...)
		default:
			start := len(b)
			b = jsontext.AppendStringNoHTML(b, Sanitize(f.Str))
			if len(f.Str) <= maxCachedValue {
				c.val, c.valEnc, c.hasVal = f.Str, append(c.valEnc[:0], b[start:]...), true
			}
		}
	}
	b = append(b, '}', '\n')
	_, _ = lw.w.Write(b) // as slog.Logger does, a failed log write is dropped
	if cap(b) <= maxKeptLine {
		lw.line = b
	}
}

// appendField appends one field after a comma, uncached.
func (h *redactHandler) appendField(b []byte, f Field) []byte {
	b = appendJSONKey(append(b, ','), f.Key)
	switch {
	case h.red.IsRedacted(f.Key):
		return jsontext.AppendStringNoHTML(b, RedactedValue)
	case f.IsInt:
		return strconv.AppendInt(b, f.Int, 10)
	}
	return jsontext.AppendStringNoHTML(b, Sanitize(f.Str))
}

// maxCachedValue bounds the string values fieldCache keeps.
const maxCachedValue = 64

// fieldCache is what writeFields keeps of one field position of a
// handler's records: the key, its encoding (comma, key, colon) and whether
// it is redacted, and the last string value with its encoding. It is
// guarded by the lockedWriter's mutex.
type fieldCache struct {
	key      string
	enc      []byte
	redacted bool
	hasVal   bool
	val      string
	valEnc   []byte
}

// appendJSONKey appends a sanitized key and its colon.
func appendJSONKey(b []byte, key string) []byte {
	b = jsontext.AppendStringNoHTML(b, Sanitize(key))
	return append(b, ':')
}

// appendPreformatted appends to a copy of pre the attributes that
// WithAttrs added (already cleaned), each after a comma, as
// slog.JSONHandler writes them, and reports whether it could: only
// strings, integers and booleans are written here; anything else leaves
// the handler to slog. An empty key is dropped with its value, as slog
// drops an empty attribute.
func appendPreformatted(pre []byte, attrs []slog.Attr) ([]byte, bool) {
	out := slices.Clip(pre)
	for _, a := range attrs {
		if a.Key == "" {
			return nil, false
		}
		v := a.Value
		switch v.Kind() {
		case slog.KindString:
			out = appendJSONKey(append(out, ','), a.Key)
			out = jsontext.AppendStringNoHTML(out, v.String())
		case slog.KindInt64:
			out = strconv.AppendInt(appendJSONKey(append(out, ','), a.Key), v.Int64(), 10)
		case slog.KindUint64:
			out = strconv.AppendUint(appendJSONKey(append(out, ','), a.Key), v.Uint64(), 10)
		case slog.KindBool:
			out = strconv.AppendBool(appendJSONKey(append(out, ','), a.Key), v.Bool())
		default:
			return nil, false
		}
	}
	return out, true
}

// lockedWriter serialises the writes of slog's handler and of LogFields
// to one destination: each line is one Write, never interleaved.
type lockedWriter struct {
	mu    sync.Mutex
	w     io.Writer
	line  []byte    // LogFields' line buffer, reused; guarded by mu
	clock timeCache // LogFields' time formatting; guarded by mu
}

// Write writes p whole under the lock.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// cachedFields is how many field positions of a handler's records
// writeFields keeps encoded.
const cachedFields = 12
