package main

// mcprt aacp inbox AGENT, streamed: its memory does not grow with the
// payloads stored. A first pass over the agent's channels keeps a small
// row per unfinished request (no envelope); the table is printed from
// those rows, and --json reads the channels again, once per priority
// present, writing each envelope as it is read.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// inboxRow is what the first pass keeps of one unfinished transmission.
type inboxRow struct {
	Seq                                                 uint64
	MessageID, RequestID, Sender, Receiver, MessageType string
	Priority, Timestamp, State, Answer                  string
	RetryCount                                          int
	rank                                                int  // priority rank
	dead                                                bool // replaced by a later transmission of the same request
}

// inboxFlushRows is how many table rows are aligned and written at once.
const inboxFlushRows = 1000

// inbox lists what agent has not finished: the latest transmission of
// each request that is not ACK/NACK, not expired, and neither processed
// nor rejected by agent; by priority, then in the order read (sender,
// then seq).
func (c *aacpCmd) inbox(ctx context.Context, agent string) error {
	rows, err := c.inboxRows(ctx, agent)
	if err != nil {
		return err
	}
	if c.json {
		return c.inboxJSON(ctx, agent, rows)
	}
	fmt.Fprintf(c.stdout, "inbox of %s: %d unfinished message(s)\n", agent, len(rows))
	if len(rows) == 0 {
		_, err := fmt.Fprintln(c.stdout, "(none)")
		return err
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FROM\tSEQ\tMESSAGE_ID\tTYPE\tPRIORITY\tSENT\tANSWER")
	for i, m := range rows {
		answer := m.Answer
		if answer == "" {
			answer = "waiting"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", printable(m.Sender), m.Seq, printable(m.MessageID), printable(m.MessageType),
			printable(m.Priority), printable(m.Timestamp), printable(answer))
		if (i+1)%inboxFlushRows == 0 {
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	return tw.Flush()
}

// inboxRows is the first pass: the unfinished transmissions into agent,
// sorted for printing, without their envelopes.
func (c *aacpCmd) inboxRows(ctx context.Context, agent string) ([]inboxRow, error) {
	in, err := c.store.Inbox(agent)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	ledgers := map[string]journal.Ledger{}
	ledger := func(id string) journal.Ledger {
		l, ok := ledgers[id]
		if !ok {
			l, _ = c.store.Ledger(id) // nil for _broker: it keeps none
			ledgers[id] = l
		}
		return l
	}
	now := time.Now()
	latest := map[string]int{}
	var rows []inboxRow
	err = in.Read(ctx, func(e *envelope.Envelope) error {
		if e.MessageType == envelope.Ack || e.MessageType == envelope.Nack || e.MessageType == broker.TakenType {
			return nil
		}
		if exp := e.ExpiresAt(); !exp.IsZero() && !exp.After(now) {
			return nil
		}
		var answer string
		if l := ledger(agent); l != nil {
			if a, ok := l.Inbound(e.Sender.AgentID, e.RequestID); ok {
				answer = a.Status
			}
		}
		if answer == journal.InboundProcessed || answer == journal.InboundNacked {
			return nil
		}
		r := inboxRow{Seq: e.Seq, MessageID: e.MessageID, RequestID: e.RequestID, Sender: e.Sender.AgentID,
			Receiver: e.Receiver.AgentID, MessageType: e.MessageType, Priority: string(e.Priority), Timestamp: e.Timestamp,
			RetryCount: e.Metadata.RetryCount, Answer: answer, rank: e.Priority.Rank()}
		if l := ledger(r.Sender); l != nil {
			if m, ok := l.Message(r.MessageID); ok {
				r.State = string(m.State)
			}
		}
		key := r.Sender + "\x00" + r.RequestID
		if i, ok := latest[key]; ok {
			rows[i].dead = true // a retry replaces the earlier transmission
		}
		latest[key] = len(rows)
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	rows = slices.DeleteFunc(rows, func(r inboxRow) bool { return r.dead })
	slices.SortStableFunc(rows, func(a, b inboxRow) int { return a.rank - b.rank })
	return rows, nil
}

// inboxJSON writes {"agent": ..., "messages": [...]} with each message's
// envelope, reading the channels again for each priority present, so
// that only one envelope is held at a time.
func (c *aacpCmd) inboxJSON(ctx context.Context, agent string, rows []inboxRow) error {
	byID := make(map[string]*inboxRow, len(rows))
	ranks := map[int]bool{}
	for i := range rows {
		byID[rows[i].MessageID] = &rows[i]
		ranks[rows[i].rank] = true
	}
	name, _ := json.Marshal(agent)
	if _, err := fmt.Fprintf(c.stdout, "{\n  \"agent\": %s,\n  \"messages\": [", name); err != nil {
		return err
	}
	n := 0
	for rank := range 4 {
		if !ranks[rank] {
			continue
		}
		in, err := c.store.Inbox(agent)
		if err != nil {
			return err
		}
		err = in.Read(ctx, func(e *envelope.Envelope) error {
			r := byID[e.MessageID]
			if r == nil || r.rank != rank {
				return nil
			}
			s := stored{Seq: r.Seq, MessageID: r.MessageID, RequestID: r.RequestID, Sender: r.Sender, Receiver: r.Receiver,
				MessageType: r.MessageType, Priority: r.Priority, Timestamp: r.Timestamp, RetryCount: r.RetryCount,
				State: r.State, Answer: r.Answer, Envelope: *e}
			b, err := json.MarshalIndent(s, "    ", "  ")
			if err != nil {
				return fmt.Errorf("encode message %s: %w", e.MessageID, err)
			}
			sep := ",\n    "
			if n == 0 {
				sep = "\n    "
			}
			n++
			_, err = fmt.Fprintf(c.stdout, "%s%s", sep, b)
			return err
		})
		in.Close()
		if err != nil {
			return err
		}
	}
	end := "]\n}\n"
	if n > 0 {
		end = "\n  ]\n}\n"
	}
	_, err := fmt.Fprint(c.stdout, end)
	return err
}
