package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
)

// The message index: a query-side copy of the agent messaging journal
// (package aacp/journal), which stays the source of truth. One row per
// transmission (not ACK, NACK or taken notices, which update the state of
// the transmission they answer), with a full-text index over its subject
// and payload text, and per channel the highest seq indexed, so that a
// process can tell whether the index is behind the journal.

// messageIndexSchema is the message index's migration.
var messageIndexSchema = []string{
	`CREATE TABLE aacp_messages (
		id           INTEGER PRIMARY KEY,
		message_id   TEXT    NOT NULL UNIQUE,
		request_id   TEXT    NOT NULL,
		thread_id    TEXT    NOT NULL, -- correlationId, else requestId
		sender       TEXT    NOT NULL,
		receiver     TEXT    NOT NULL,
		message_type TEXT    NOT NULL,
		subject      TEXT    NOT NULL,
		payload      TEXT    NOT NULL, -- JSON
		sent_at      INTEGER NOT NULL, -- Unix nanoseconds, UTC
		expires_at   INTEGER NOT NULL, -- Unix nanoseconds, UTC; 0 when none
		seq          INTEGER NOT NULL,
		retry_count  INTEGER NOT NULL,
		state        TEXT    NOT NULL  -- sent, taken, received, queued, processed, nacked
	)`,
	`CREATE INDEX aacp_messages_thread ON aacp_messages (thread_id, sent_at, id)`,
	`CREATE INDEX aacp_messages_receiver ON aacp_messages (receiver, state)`,
	`CREATE INDEX aacp_messages_sender ON aacp_messages (sender, state)`,
	`CREATE INDEX aacp_messages_request ON aacp_messages (request_id, receiver)`,
	`CREATE VIRTUAL TABLE aacp_messages_fts USING fts5(subject, body, tokenize = 'unicode61 remove_diacritics 0')`,
	`CREATE TABLE aacp_index_channels (
		channel TEXT    PRIMARY KEY, -- sender_to_receiver
		seq     INTEGER NOT NULL     -- the highest seq indexed
	)`,
}

// IndexedMessage is one transmission as the message index holds it.
type IndexedMessage struct {
	MessageID   string          `json:"messageId"`
	RequestID   string          `json:"requestId"`
	ThreadID    string          `json:"threadId"`
	Sender      string          `json:"sender"`
	Receiver    string          `json:"receiver"`
	MessageType string          `json:"messageType"`
	Subject     string          `json:"subject,omitempty"`
	Payload     json.RawMessage `json:"payload"`
	SentAt      time.Time       `json:"sentAt"`
	ExpiresAt   time.Time       `json:"expiresAt,omitzero"`
	Seq         uint64          `json:"seq"`
	RetryCount  int             `json:"retryCount,omitempty"`
	// State is sent (waiting), taken (handed out, unanswered), received
	// or queued (receipt confirmed), processed, or nacked, as far as the
	// journal tells.
	State string `json:"state"`
}

// Message index states.
const (
	MsgSent      = "sent"
	MsgTaken     = "taken"
	MsgProcessed = "processed"
	MsgNacked    = "nacked"
)

// MessageIndex is the message index in a DB. Safe for concurrent use.
type MessageIndex struct{ db *DB }

// NewMessageIndex returns the message index of db.
func NewMessageIndex(db *DB) *MessageIndex { return &MessageIndex{db: db} }

// takenType is the broker's taken notice (broker.TakenType; the store
// does not depend on the broker).
const takenType = "CUSTOM_MCPRT_TAKEN"

// Index adds envs, as read from or appended to the journal, in one
// transaction: a transmission becomes a row (once: indexing it again
// changes nothing); an ACK, NACK or taken notice updates the state of the
// transmission it answers; every envelope raises its channel's high-water
// mark. Envelopes without a seq update no mark.
func (x *MessageIndex) Index(ctx context.Context, envs []*envelope.Envelope) error {
	if len(envs) == 0 {
		return nil
	}
	return x.db.write(ctx, func(conn *sql.Conn) error {
		for _, e := range envs {
			if err := indexOne(ctx, conn, e); err != nil {
				return storeError(ctx, "indexing message "+e.MessageID, err)
			}
			if e.Seq > 0 {
				if _, err := conn.ExecContext(ctx, `INSERT INTO aacp_index_channels (channel, seq) VALUES (?, ?)
					ON CONFLICT (channel) DO UPDATE SET seq = max(seq, excluded.seq)`,
					envelope.Channel(e.Sender.AgentID, e.Receiver.AgentID), int64(e.Seq)); err != nil {
					return storeError(ctx, "indexing message "+e.MessageID, err)
				}
			}
		}
		return nil
	})
}

func indexOne(ctx context.Context, conn *sql.Conn, e *envelope.Envelope) error {
	var p struct {
		Acked    string   `json:"acknowledgedMessageId"`
		Rejected string   `json:"rejectedMessageId"`
		Status   string   `json:"status"`
		Taken    []string `json:"takenMessageIds"`
		Subject  string   `json:"subject"`
	}
	_ = json.Unmarshal(e.Payload, &p) // a payload is a JSON object; fields it lacks stay empty
	switch e.MessageType {
	case envelope.Ack:
		// processed is final; received/queued do not undo it.
		_, err := conn.ExecContext(ctx, `UPDATE aacp_messages SET state = ? WHERE message_id = ? AND state NOT IN ('processed', 'nacked')`, p.Status, p.Acked)
		return err
	case envelope.Nack:
		_, err := conn.ExecContext(ctx, `UPDATE aacp_messages SET state = 'nacked' WHERE message_id = ? AND state <> 'processed'`, p.Rejected)
		return err
	case takenType:
		for _, id := range p.Taken {
			if _, err := conn.ExecContext(ctx, `UPDATE aacp_messages SET state = 'taken' WHERE message_id = ? AND state = 'sent'`, id); err != nil {
				return err
			}
		}
		return nil
	}
	thread := e.CorrelationID
	if thread == "" {
		thread = e.RequestID
	}
	var expires int64
	if t := e.ExpiresAt(); !t.IsZero() {
		expires = t.UnixNano()
	}
	res, err := conn.ExecContext(ctx, `INSERT INTO aacp_messages (message_id, request_id, thread_id, sender, receiver, message_type,
			subject, payload, sent_at, expires_at, seq, retry_count, state)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'sent') ON CONFLICT (message_id) DO NOTHING`,
		e.MessageID, e.RequestID, thread, e.Sender.AgentID, e.Receiver.AgentID, e.MessageType, p.Subject, string(e.Payload),
		e.Time().UnixNano(), expires, int64(e.Seq), e.Metadata.RetryCount)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, `INSERT INTO aacp_messages_fts (rowid, subject, body) VALUES (?, ?, ?)`, id, p.Subject, payloadText(e.Payload))
	return err
}

// payloadText is the searchable text of a payload: its string values and
// numbers, not its keys.
func payloadText(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case string:
			b.WriteString(t)
			b.WriteByte('\n')
		case float64, bool:
			b.WriteString(strings.TrimSpace(string(mustJSON(t))))
			b.WriteByte('\n')
		case []any:
			for _, x := range t {
				walk(x)
			}
		case map[string]any:
			for _, x := range t {
				walk(x)
			}
		}
	}
	walk(v)
	return b.String()
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v) // numbers and booleans only
	return b
}

// Watermarks returns each channel's highest indexed seq.
func (x *MessageIndex) Watermarks(ctx context.Context) (map[string]uint64, error) {
	out := map[string]uint64{}
	err := x.db.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT channel, seq FROM aacp_index_channels`)
		if err != nil {
			return storeError(ctx, "reading the message index's marks", err)
		}
		defer rows.Close()
		for rows.Next() {
			var ch string
			var seq int64
			if err := rows.Scan(&ch, &seq); err != nil {
				return storeError(ctx, "reading the message index's marks", err)
			}
			out[ch] = uint64(seq)
		}
		return storeError2(ctx, "reading the message index's marks", rows.Err())
	})
	return out, err
}

// Reset empties the index (before a rebuild).
func (x *MessageIndex) Reset(ctx context.Context) error {
	return x.db.write(ctx, func(conn *sql.Conn) error {
		for _, q := range []string{`DELETE FROM aacp_messages`, `DELETE FROM aacp_messages_fts`, `DELETE FROM aacp_index_channels`} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return storeError(ctx, "emptying the message index", err)
			}
		}
		return nil
	})
}

const msgColumns = `m.message_id, m.request_id, m.thread_id, m.sender, m.receiver, m.message_type, m.subject, m.payload,
	m.sent_at, m.expires_at, m.seq, m.retry_count, m.state`

func scanMessage(rows interface{ Scan(...any) error }, extra ...any) (IndexedMessage, error) {
	var m IndexedMessage
	var payload string
	var sent, expires, seq int64
	dst := append([]any{&m.MessageID, &m.RequestID, &m.ThreadID, &m.Sender, &m.Receiver, &m.MessageType, &m.Subject, &payload,
		&sent, &expires, &seq, &m.RetryCount, &m.State}, extra...)
	if err := rows.Scan(dst...); err != nil {
		return m, err
	}
	m.Payload, m.SentAt, m.Seq = json.RawMessage(payload), fromNanos(sent), uint64(seq)
	if expires != 0 {
		m.ExpiresAt = fromNanos(expires)
	}
	return m, nil
}

// Message returns the indexed transmission messageID.
func (x *MessageIndex) Message(ctx context.Context, messageID string) (m IndexedMessage, ok bool, err error) {
	err = x.db.read(ctx, func(tx *sql.Tx) error {
		m, err = scanMessage(tx.QueryRowContext(ctx, `SELECT `+msgColumns+` FROM aacp_messages m WHERE m.message_id = ?`, messageID))
		if err == sql.ErrNoRows {
			return nil
		}
		ok = err == nil
		return storeError2(ctx, "reading message "+messageID, err)
	})
	return m, ok, err
}

// Thread returns the transmissions of a thread, oldest first, at most
// limit.
func (x *MessageIndex) Thread(ctx context.Context, threadID string, limit int) (out []IndexedMessage, err error) {
	err = x.db.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+msgColumns+` FROM aacp_messages m WHERE m.thread_id = ? ORDER BY m.sent_at, m.id LIMIT ?`, threadID, limit)
		if err != nil {
			return storeError(ctx, "reading thread "+threadID, err)
		}
		defer rows.Close()
		out = []IndexedMessage{}
		for rows.Next() {
			m, err := scanMessage(rows)
			if err != nil {
				return storeError(ctx, "reading thread "+threadID, err)
			}
			out = append(out, m)
		}
		return storeError2(ctx, "reading thread "+threadID, rows.Err())
	})
	return out, err
}

// MessageQuery is a search of the message index.
type MessageQuery struct {
	// Query is matched, word by word, against subjects and payload text.
	Query string
	// AgentID keeps messages it sent or received; ThreadID, MessageType
	// and Since (sent at or after) narrow further.
	AgentID, ThreadID, MessageType string
	Since                          time.Time
	Limit                          int
}

// MessageHit is a search result: the message, and where it matched.
type MessageHit struct {
	IndexedMessage
	Snippet string `json:"snippet"`
}

// Search returns the messages matching q, best first (bm25), each with a
// snippet of the text around the match ([ and ] mark the words).
func (x *MessageIndex) Search(ctx context.Context, q MessageQuery) (out []MessageHit, err error) {
	terms := strings.Fields(q.Query)
	if len(terms) == 0 {
		return nil, core.Errorf(core.CodeInvalidArgument, "the search query %q has no words; give one or more words to look for", q.Query)
	}
	where := []string{"aacp_messages_fts MATCH ?"}
	args := []any{ftsQuery(terms)}
	if q.AgentID != "" {
		where, args = append(where, "(m.sender = ? OR m.receiver = ?)"), append(args, q.AgentID, q.AgentID)
	}
	if q.ThreadID != "" {
		where, args = append(where, "m.thread_id = ?"), append(args, q.ThreadID)
	}
	if q.MessageType != "" {
		where, args = append(where, "m.message_type = ?"), append(args, q.MessageType)
	}
	if !q.Since.IsZero() {
		where, args = append(where, "m.sent_at >= ?"), append(args, q.Since.UnixNano())
	}
	query := `SELECT ` + msgColumns + `, snippet(aacp_messages_fts, -1, '[', ']', '…', 12)
		FROM aacp_messages_fts f JOIN aacp_messages m ON m.id = f.rowid
		WHERE ` + strings.Join(where, " AND ") + ` ORDER BY f.rank, m.sent_at DESC LIMIT ?`
	args = append(args, q.Limit)
	err = x.db.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return storeError(ctx, "searching messages", err)
		}
		defer rows.Close()
		out = []MessageHit{}
		for rows.Next() {
			var h MessageHit
			if h.IndexedMessage, err = scanMessage(rows, &h.Snippet); err != nil {
				return storeError(ctx, "searching messages", err)
			}
			out = append(out, h)
		}
		return storeError2(ctx, "searching messages", rows.Err())
	})
	return out, err
}

// Inbox views of the message index (InboxView).
const (
	ViewUnread           = "unread"             // sent to the agent, not taken yet
	ViewAwaitingMyAck    = "awaiting_my_ack"    // taken (or receipt confirmed), not processed or rejected
	ViewAwaitingTheirAck = "awaiting_their_ack" // sent by the agent, not processed or rejected yet
	ViewOverdue          = "overdue"            // either way, past its ttl without being processed or rejected
)

// InboxView lists, newest first, the latest transmission of each request
// in view for agentID, at most limit; now decides what is overdue.
func (x *MessageIndex) InboxView(ctx context.Context, agentID, view string, now time.Time, limit int) (out []IndexedMessage, err error) {
	var where string
	args := []any{agentID}
	switch view {
	case ViewUnread:
		where = `m.receiver = ? AND m.state = 'sent' AND (m.expires_at = 0 OR m.expires_at > ?)`
		args = append(args, now.UnixNano())
	case ViewAwaitingMyAck:
		where = `m.receiver = ? AND m.state IN ('taken', 'received', 'queued') AND (m.expires_at = 0 OR m.expires_at > ?)`
		args = append(args, now.UnixNano())
	case ViewAwaitingTheirAck:
		where = `m.sender = ? AND m.state IN ('sent', 'taken', 'received', 'queued') AND (m.expires_at = 0 OR m.expires_at > ?)`
		args = append(args, now.UnixNano())
	case ViewOverdue:
		where = `(m.sender = ? OR m.receiver = ?) AND m.state NOT IN ('processed', 'nacked') AND m.expires_at <> 0 AND m.expires_at <= ?`
		args = append(args, agentID, now.UnixNano())
	default:
		return nil, core.Errorf(core.CodeInvalidArgument, "view %q is unknown; want %s, %s, %s or %s", view, ViewUnread, ViewAwaitingMyAck, ViewAwaitingTheirAck, ViewOverdue)
	}
	// The latest transmission of each request (a retry has a higher id).
	query := `SELECT ` + msgColumns + ` FROM aacp_messages m
		WHERE ` + where + ` AND m.id = (SELECT max(l.id) FROM aacp_messages l WHERE l.request_id = m.request_id AND l.receiver = m.receiver)
		ORDER BY m.sent_at DESC, m.id DESC LIMIT ?`
	args = append(args, limit)
	err = x.db.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return storeError(ctx, "reading the "+view+" view", err)
		}
		defer rows.Close()
		out = []IndexedMessage{}
		for rows.Next() {
			m, err := scanMessage(rows)
			if err != nil {
				return storeError(ctx, "reading the "+view+" view", err)
			}
			out = append(out, m)
		}
		return storeError2(ctx, "reading the "+view+" view", rows.Err())
	})
	return out, err
}
