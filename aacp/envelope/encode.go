package envelope

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mcprt/mcprt/internal/jsontext"
)

// AppendJSON appends the JSON encoding of e to dst: the same bytes as
// json.Marshal(e), made without reflection (a channel line, a ledger
// record and the size check of every send each encode an envelope). It
// fails, like json.Marshal, when the payload is not valid JSON.
func AppendJSON(dst []byte, e *Envelope) ([]byte, error) {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, e.Seq, 10)
	if e.Ack != 0 {
		dst = append(dst, `,"ack":`...)
		dst = strconv.AppendUint(dst, e.Ack, 10)
	}
	dst = append(dst, `,"version":`...)
	dst = AppendString(dst, e.Version)
	dst = append(dst, `,"messageId":`...)
	dst = AppendString(dst, e.MessageID)
	dst = append(dst, `,"requestId":`...)
	dst = AppendString(dst, e.RequestID)
	if e.CorrelationID != "" {
		dst = append(dst, `,"correlationId":`...)
		dst = AppendString(dst, e.CorrelationID)
	}
	dst = append(dst, `,"timestamp":`...)
	dst = AppendString(dst, e.Timestamp)
	dst = append(dst, `,"sender":`...)
	dst = appendAgent(dst, e.Sender)
	dst = append(dst, `,"receiver":`...)
	dst = appendAgent(dst, e.Receiver)
	dst = append(dst, `,"messageType":`...)
	dst = AppendString(dst, e.MessageType)
	dst = append(dst, `,"priority":`...)
	dst = AppendString(dst, string(e.Priority))
	dst = append(dst, `,"payload":`...)
	var err error
	if dst, err = appendRaw(dst, e.Payload); err != nil {
		return dst, err
	}
	dst = append(dst, `,"metadata":{"retryCount":`...)
	dst = strconv.AppendInt(dst, int64(e.Metadata.RetryCount), 10)
	if e.Metadata.TTL != 0 {
		dst = append(dst, `,"ttl":`...)
		dst = strconv.AppendInt(dst, e.Metadata.TTL, 10)
	}
	if len(e.Metadata.Tags) > 0 {
		dst = append(dst, `,"tags":[`...)
		for i, t := range e.Metadata.Tags {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, t)
		}
		dst = append(dst, ']')
	}
	return append(dst, "}}"...), nil
}

func appendAgent(dst []byte, a Agent) []byte {
	dst = append(dst, `{"agentId":`...)
	dst = AppendString(dst, a.AgentID)
	dst = append(dst, `,"type":`...)
	dst = AppendString(dst, string(a.Type))
	return append(dst, '}')
}

// appendRaw appends raw JSON as json.Marshal does a json.RawMessage:
// null when nil, else compacted with <, >, & and U+2028/9 escaped.
func appendRaw(dst, raw []byte) ([]byte, error) {
	if raw == nil {
		return append(dst, "null"...), nil
	}
	if !json.Valid(raw) {
		return dst, fmt.Errorf("json: error calling MarshalJSON for type json.RawMessage: invalid JSON")
	}
	if plainCompact(raw) {
		return append(dst, raw...), nil
	}
	var c, h bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return dst, err
	}
	json.HTMLEscape(&h, c.Bytes())
	return append(dst, h.Bytes()...), nil
}

// plainCompact reports that valid JSON raw has no white space outside
// strings and nothing json.Marshal would escape: it is copied as is.
func plainCompact(raw []byte) bool {
	for _, c := range raw {
		if c == '<' || c == '>' || c == '&' || c == 0xE2 { // 0xE2 may start U+2028 or U+2029
			return false
		}
	}
	return jsontext.CompactLen(raw) == len(raw)
}

// AppendString appends s as a JSON string exactly as json.Marshal writes
// it: HTML-sensitive characters, U+2028 and U+2029 escaped, invalid
// UTF-8 replaced by U+FFFD (jsontext.AppendString, the module's one
// escaper).
func AppendString(dst []byte, s string) []byte { return jsontext.AppendString(dst, s) }
