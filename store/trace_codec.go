package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/mcprt/mcprt/domain/trace"
)

// The binary encoding of a trace_batches row's events.

// encodeBatch appends the binary encoding of events to b and returns it
// with the events' earliest and latest start. Per event: a flags byte, a
// byte marking which of Tool..ServerID repeat the previous event's (those
// are left out), the run id (16 bytes when it is a canonical UUID), the
// correlation id (and the trace and parent ids unless trace.Path derives
// them from it), the other strings, the start as a delta from the previous
// event's, the duration, and the captured arguments and result.
func encodeBatch(b []byte, events []trace.Event) (out []byte, first, last int64) {
	b = append(b, batchV1)
	b = binary.AppendUvarint(b, uint64(len(events)))
	var prev [10]string
	var prevStart int64
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for i, e := range events {
		start := nanos(e.Start)
		if i == 0 || start < first {
			first = start
		}
		if i == 0 || start > last {
			last = start
		}
		cur := [10]string{e.RunID, e.TraceID, e.CorrelationID, e.ParentID, e.Tool, e.Outcome,
			e.ErrorCode, e.ErrorMessage, e.SessionID, e.ServerID}
		var flags, same byte
		if e.Success {
			flags |= flagSuccess
		}
		if e.Args != nil {
			flags |= flagArgs
		}
		if e.Result != nil {
			flags |= flagResult
		}
		if t, p := trace.Path(e.CorrelationID); t == e.TraceID && p == e.ParentID {
			flags |= flagPath
		}
		uuid, isUUID := packUUID(e.RunID)
		if isUUID {
			flags |= flagUUID
		}
		for k := fTool; k < len(cur); k++ {
			if cur[k] == prev[k] {
				same |= 1 << (k - fTool)
			}
		}
		b = append(b, flags, same)
		if isUUID {
			b = append(b, uuid[:]...)
		} else {
			str(e.RunID)
		}
		str(e.CorrelationID)
		if flags&flagPath == 0 {
			str(e.TraceID)
			str(e.ParentID)
		}
		for k := fTool; k < len(cur); k++ {
			if same&(1<<(k-fTool)) == 0 {
				str(cur[k])
			}
		}
		b = binary.AppendVarint(b, start-prevStart)
		b = binary.AppendVarint(b, int64(e.Duration))
		if e.Args != nil {
			str(string(e.Args))
		}
		if e.Result != nil {
			str(string(e.Result))
		}
		prev, prevStart = cur, start
	}
	return b, first, last
}

const hexDigits = "0123456789abcdef"

// uuidHexAt are the offsets of the 16 hex digit pairs of a canonical UUID.
var uuidHexAt = [16]uint8{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

// packUUID returns the 16 bytes of a canonical lower-case UUID string.
func packUUID(s string) (u [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	bad := 0
	for j, i := range uuidHexAt {
		hi, lo := unhex(s[i]), unhex(s[i+1])
		bad |= hi | lo
		u[j] = byte(hi<<4 | lo)
	}
	return u, bad >= 0
}

// unhex is the value of a lower-case hex digit, or -1.
func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return -1
}

// unpackUUID writes the canonical string of u into dst.
func unpackUUID(dst *[36]byte, u []byte) {
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst[j] = '-'
			j++
		}
		dst[j], dst[j+1] = hexDigits[c>>4], hexDigits[c&15]
		j += 2
	}
}

// batchKeys returns the keySep-framed distinct trace ids and non-empty
// session ids of events.
func batchKeys(events []trace.Event) (traces, sessions string) {
	seen := make(map[string]struct{}, len(events))
	var tb, sb strings.Builder
	tb.Grow(len(events) * 40)
	tb.WriteString(keySep)
	sb.WriteString(keySep)
	for _, e := range events {
		if _, ok := seen[e.TraceID]; !ok {
			seen[e.TraceID] = struct{}{}
			tb.WriteString(e.TraceID)
			tb.WriteString(keySep)
		}
	}
	clear(seen)
	for _, e := range events {
		if e.SessionID == "" {
			continue
		}
		if _, ok := seen[e.SessionID]; !ok {
			seen[e.SessionID] = struct{}{}
			sb.WriteString(e.SessionID)
			sb.WriteString(keySep)
		}
	}
	return tb.String(), sb.String()
}

// rawEvent is a decoded event whose strings still point into the blob.
type rawEvent struct {
	str          [10][]byte // RunID, TraceID, CorrelationID, ParentID, Tool, Outcome, ErrorCode, ErrorMessage, SessionID, ServerID
	start, dur   int64
	flags        byte
	args, result []byte
	run          [36]byte
}

const (
	fTrace   = 1
	fTool    = 4
	fSession = 8
)

func (r *rawEvent) event() trace.Event {
	e := trace.Event{RunID: string(r.str[0]), TraceID: string(r.str[1]), CorrelationID: string(r.str[2]),
		ParentID: string(r.str[3]), Tool: string(r.str[4]), Outcome: string(r.str[5]), ErrorCode: string(r.str[6]),
		ErrorMessage: string(r.str[7]), SessionID: string(r.str[8]), ServerID: string(r.str[9]),
		Start: fromNanos(r.start), Duration: time.Duration(r.dur), Success: r.flags&flagSuccess != 0}
	if r.flags&flagArgs != 0 {
		e.Args = json.RawMessage(string(r.args))
	}
	if r.flags&flagResult != 0 {
		e.Result = json.RawMessage(string(r.result))
	}
	return e
}

var errCorrupt = errors.New("corrupt trace batch")

// pathOf is trace.Path over bytes.
func pathOf(corr []byte) (traceID, parentID []byte) {
	i := bytes.IndexByte(corr, trace.PathSeparator[0])
	if i < 0 {
		return corr, corr[:0]
	}
	return corr[:i], corr[:bytes.LastIndexByte(corr, trace.PathSeparator[0])]
}

// eachEvent calls fn with every event of a batch blob, in batch order; the
// rawEvent is reused and only valid during the call.
func eachEvent(data []byte, fn func(i int, r *rawEvent)) error {
	if len(data) > 0 && data[0] == '[' {
		legacy, err := decodeLegacy(data)
		if err != nil {
			return err
		}
		data, _, _ = encodeBatch(nil, legacy)
	}
	if len(data) == 0 || data[0] != batchV1 {
		return errCorrupt
	}
	p := data[1:]
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		return v, true
	}
	bytesOf := func() ([]byte, bool) {
		n, ok := uv()
		if !ok || n > uint64(len(p)) {
			return nil, false
		}
		s := p[:n:n]
		p = p[n:]
		return s, true
	}
	count, ok := uv()
	if !ok {
		return errCorrupt
	}
	var r rawEvent
	var prevStart int64
	for i := 0; i < int(count); i++ {
		if len(p) < 2 {
			return errCorrupt
		}
		flags, same := p[0], p[1]
		r.flags = flags
		p = p[2:]
		if r.flags&flagUUID != 0 {
			if len(p) < 16 {
				return errCorrupt
			}
			unpackUUID(&r.run, p[:16])
			r.str[0], p = r.run[:], p[16:]
		} else if r.str[0], ok = bytesOf(); !ok {
			return errCorrupt
		}
		if r.str[2], ok = bytesOf(); !ok {
			return errCorrupt
		}
		if r.flags&flagPath != 0 {
			r.str[1], r.str[3] = pathOf(r.str[2])
		} else if r.str[1], ok = bytesOf(); ok {
			r.str[3], ok = bytesOf()
		}
		for k := fTool; k < len(r.str) && ok; k++ {
			if i == 0 {
				r.str[k] = nil
			}
			if same&(1<<(k-fTool)) == 0 {
				r.str[k], ok = bytesOf()
			}
		}
		if !ok {
			return errCorrupt
		}
		delta, n1 := binary.Varint(p)
		if n1 <= 0 {
			return errCorrupt
		}
		var n2 int
		r.dur, n2 = binary.Varint(p[n1:])
		if n2 <= 0 {
			return errCorrupt
		}
		p = p[n1+n2:]
		r.start = prevStart + delta
		prevStart = r.start
		r.args, r.result = nil, nil
		if r.flags&flagArgs != 0 {
			if r.args, ok = bytesOf(); !ok {
				return errCorrupt
			}
		}
		if r.flags&flagResult != 0 {
			if r.result, ok = bytesOf(); !ok {
				return errCorrupt
			}
		}
		fn(i, &r)
	}
	return nil
}

// decodeLegacy decodes a batch that schema version 4 built from
// trace_events rows: a JSON array of [run_id, trace_id, correlation_id,
// parent_id, tool, started_at, duration_ns, outcome, success, error_code,
// error_message, session_id, server_id, args, result, id], in id order.
func decodeLegacy(data []byte) ([]trace.Event, error) {
	var rows []struct {
		e  trace.Event
		id int64
	}
	var raw [][16]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	for _, f := range raw {
		var e trace.Event
		var start, dur, success, id int64
		var a, r *string
		for i, dst := range []any{&e.RunID, &e.TraceID, &e.CorrelationID, &e.ParentID, &e.Tool, &start, &dur, &e.Outcome,
			&success, &e.ErrorCode, &e.ErrorMessage, &e.SessionID, &e.ServerID, &a, &r, &id} {
			if err := json.Unmarshal(f[i], dst); err != nil {
				return nil, err
			}
		}
		e.Start, e.Duration, e.Success = fromNanos(start), time.Duration(dur), success != 0
		if a != nil {
			e.Args = json.RawMessage(*a)
		}
		if r != nil {
			e.Result = json.RawMessage(*r)
		}
		rows = append(rows, struct {
			e  trace.Event
			id int64
		}{e, id})
	}
	slices.SortStableFunc(rows, func(x, y struct {
		e  trace.Event
		id int64
	}) int {
		return cmp.Compare(x.id, y.id)
	})
	out := make([]trace.Event, len(rows))
	for i := range rows {
		out[i] = rows[i].e
	}
	return out, nil
}
