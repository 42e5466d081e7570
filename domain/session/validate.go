package session

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/mcprt/mcprt/domain/internal/check"
)

// TimeFormat is how session times are written: RFC 3339, UTC, nanoseconds.
const TimeFormat = time.RFC3339Nano

func checkID(id string) error { return check.Text("sessionId", id, MaxIDBytes, true) }

// normMetadata returns nil for absent metadata, else the compact object.
func normMetadata(raw json.RawMessage) (json.RawMessage, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	return check.JSON("metadata", raw, MaxMetadataBytes, MaxMetadataDepth, true)
}
