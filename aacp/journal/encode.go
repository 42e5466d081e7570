package journal

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
)

// appendRecord appends r's line (JSON and a newline) to dst: the bytes of
// json.Marshal, made without reflection for the records every send and
// answer writes (UTC times, no error object); others go through
// json.Marshal.
func appendRecord(dst []byte, r Record) ([]byte, error) {
	if q := r.Request; q != nil && q.PayloadAt != nil && q.Envelope.Payload != nil {
		c := *q
		c.Envelope.Payload = nil // in the channel line PayloadAt names
		r.Request = &c
	}
	n := len(dst)
	if fast(r) {
		var err error
		if dst, err = appendRecordFast(dst, r); err == nil {
			return append(dst, '\n'), nil
		}
		dst = dst[:n]
	}
	line, err := json.Marshal(r)
	if err != nil {
		return dst, fmt.Errorf("encode a %s record: %w", r.Kind, err)
	}
	return append(append(dst, line...), '\n'), nil
}

// fast reports whether appendRecordFast encodes r.
func fast(r Record) bool {
	ok := true
	if m := r.Message; m != nil {
		ok = ok && utc(m.At) && utc(m.SentAt) && utc(m.AckDeadline) && utc(m.NextRetryAt) && utc(m.ExpiresAt)
	}
	if q := r.Request; q != nil {
		ok = ok && q.Error == nil && utc(q.CreatedAt) && utc(q.ExpiresAt)
	}
	if o := r.Outcome; o != nil {
		ok = ok && o.Error == nil
	}
	if i := r.Inbound; i != nil {
		ok = ok && utc(i.At) && utc(i.ExpiresAt)
	}
	return ok
}

// utc: t encodes like time.Time.MarshalJSON through appendTime.
func utc(t time.Time) bool {
	return t.IsZero() || t.Location() == time.UTC && t.Year() >= 0 && t.Year() <= 9999
}

func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	return append(t.AppendFormat(dst, time.RFC3339Nano), '"')
}

func appendRecordFast(dst []byte, r Record) ([]byte, error) {
	dst = append(dst, `{"kind":`...)
	dst = envelope.AppendString(dst, r.Kind)
	var err error
	if q := r.Request; q != nil {
		dst = append(dst, `,"request":`...)
		if dst, err = appendRequest(dst, q); err != nil {
			return dst, err
		}
	}
	if m := r.Message; m != nil {
		dst = append(dst, `,"message":`...)
		dst = appendMessage(dst, m)
	}
	if o := r.Outcome; o != nil {
		dst = append(dst, `,"outcome":{"requestId":`...)
		dst = envelope.AppendString(dst, o.RequestID)
		dst = append(dst, `,"outcome":`...)
		dst = envelope.AppendString(dst, string(o.Outcome))
		dst = optString(dst, `,"completionRef":`, o.CompletionRef)
		dst = append(dst, '}')
	}
	if i := r.Inbound; i != nil {
		dst = append(dst, `,"inbound":{"sender":`...)
		dst = envelope.AppendString(dst, i.Sender)
		dst = append(dst, `,"requestId":`...)
		dst = envelope.AppendString(dst, i.RequestID)
		dst = append(dst, `,"messageId":`...)
		dst = envelope.AppendString(dst, i.MessageID)
		if i.Seq != 0 {
			dst = append(dst, `,"seq":`...)
			dst = strconv.AppendUint(dst, i.Seq, 10)
		}
		dst = append(dst, `,"status":`...)
		dst = envelope.AppendString(dst, i.Status)
		if i.CanRetry {
			dst = append(dst, `,"canRetry":true`...)
		}
		dst = optString(dst, `,"reason":`, i.Reason)
		dst = optString(dst, `,"errorCode":`, i.ErrorCode)
		dst = append(dst, `,"at":`...)
		dst = appendTime(dst, i.At)
		dst = optTime(dst, `,"expiresAt":`, i.ExpiresAt)
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

func appendRequest(dst []byte, q *RequestRecord) ([]byte, error) {
	dst = append(dst, `{"requestId":`...)
	dst = envelope.AppendString(dst, q.RequestID)
	dst = append(dst, `,"sender":`...)
	dst = envelope.AppendString(dst, q.Sender)
	dst = append(dst, `,"receivers":`...)
	if q.Receivers == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, r := range q.Receivers {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = envelope.AppendString(dst, r)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"envelope":`...)
	var err error
	if dst, err = envelope.AppendJSON(dst, &q.Envelope); err != nil {
		return dst, err
	}
	dst = append(dst, `,"outcome":`...)
	dst = envelope.AppendString(dst, string(q.Outcome))
	dst = append(dst, `,"createdAt":`...)
	dst = appendTime(dst, q.CreatedAt)
	dst = optTime(dst, `,"expiresAt":`, q.ExpiresAt)
	dst = optString(dst, `,"completionRef":`, q.CompletionRef)
	if at := q.PayloadAt; at != nil {
		dst = append(dst, `,"payloadAt":{"receiver":`...)
		dst = envelope.AppendString(dst, at.Receiver)
		dst = append(dst, `,"seq":`...)
		dst = strconv.AppendUint(dst, at.Seq, 10)
		dst = append(dst, `,"messageId":`...)
		dst = envelope.AppendString(dst, at.MessageID)
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

func appendMessage(dst []byte, m *MessageRecord) []byte {
	dst = append(dst, `{"messageId":`...)
	dst = envelope.AppendString(dst, m.MessageID)
	dst = append(dst, `,"requestId":`...)
	dst = envelope.AppendString(dst, m.RequestID)
	dst = append(dst, `,"sender":`...)
	dst = envelope.AppendString(dst, m.Sender)
	dst = append(dst, `,"receiver":`...)
	dst = envelope.AppendString(dst, m.Receiver)
	if m.Seq != 0 {
		dst = append(dst, `,"seq":`...)
		dst = strconv.AppendUint(dst, m.Seq, 10)
	}
	dst = append(dst, `,"state":`...)
	dst = envelope.AppendString(dst, string(m.State))
	dst = append(dst, `,"retryCount":`...)
	dst = strconv.AppendInt(dst, int64(m.RetryCount), 10)
	if m.RetryBase != 0 {
		dst = append(dst, `,"retryBase":`...)
		dst = strconv.AppendInt(dst, int64(m.RetryBase), 10)
	}
	dst = append(dst, `,"at":`...)
	dst = appendTime(dst, m.At)
	dst = optTime(dst, `,"sentAt":`, m.SentAt)
	dst = optTime(dst, `,"ackDeadline":`, m.AckDeadline)
	dst = optTime(dst, `,"nextRetryAt":`, m.NextRetryAt)
	dst = optTime(dst, `,"expiresAt":`, m.ExpiresAt)
	dst = optString(dst, `,"ackStatus":`, m.AckStatus)
	dst = optString(dst, `,"reason":`, m.Reason)
	dst = optString(dst, `,"code":`, string(m.Code))
	return append(dst, '}')
}

func optString(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return envelope.AppendString(append(dst, key...), s)
}

func optTime(dst []byte, key string, t time.Time) []byte {
	if t.IsZero() {
		return dst
	}
	return appendTime(append(dst, key...), t)
}
