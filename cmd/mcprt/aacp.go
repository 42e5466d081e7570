package main

// The operator commands: mcprt aacp agents | channel | inbox |
// dead-letters | requeue | quarantine. They read (and for requeue, write) the agent
// messaging journal directly and print to stdout; they are not the MCP
// server.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/natsengine"
	"github.com/mcprt/mcprt/tools/messaging"
)

const aacpUsage = `mcprt aacp — inspect and repair the agent messaging journal.

Usage:
  mcprt aacp [flags] agents                    the registered agents
  mcprt aacp [flags] channel SENDER RECEIVER   every stored message SENDER sent RECEIVER
  mcprt aacp [flags] inbox AGENT               messages AGENT has not finished (not processed, not rejected)
  mcprt aacp [flags] dead-letters              sends that failed for good and were not requeued
  mcprt aacp [flags] requeue MESSAGE_ID        send a dead letter again (its sender must not be running)
  mcprt aacp [flags] quarantine                damaged channel lines readers refused and set aside
  mcprt aacp [flags] reindex                   rebuild the message index (search, threads) from the journal

Flags (before or after the command):
  --data-dir DIR   the data directory (default: aacp.dataDir from --config,
                   MCPRT_CONFIG or MCPRT_AACP_DATA_DIR, else .mcprt)
  --config FILE    the configuration file to read aacp.* from
  --json           print JSON instead of a table

Exit codes: 0 done, 1 failed (no data directory, unknown message, ...),
2 bad usage, 78 invalid configuration.
`

// aacpCmd is one operator command invocation.
type aacpCmd struct {
	store journal.Store
	// presence grades each agent's presence from where the sessions keep
	// it (the data directory's files, or the shared bucket on NATS).
	presence *messaging.Service
	cfg      messaging.Config
	json     bool
	stdout   io.Writer
}

// runAACP runs `mcprt aacp ARGS` and returns the exit code.
func runAACP(args []string, stdout, stderr io.Writer, environ []string) int {
	fs := flag.NewFlagSet("mcprt aacp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "", "")
	configPath := fs.String("config", "", "")
	asJSON := fs.Bool("json", false, "")
	help := fs.Bool("help", false, "")
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "mcprt aacp: %v\n", err)
		if code == exitUsage {
			fmt.Fprint(stderr, "Run 'mcprt aacp --help' for usage.\n")
		}
		return code
	}
	// Flags may come before, between and after the positional arguments.
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, aacpUsage)
				return exitOK
			}
			return fail(exitUsage, err)
		}
		if rest = fs.Args(); len(rest) == 0 {
			break
		}
		pos, rest = append(pos, rest[0]), rest[1:]
	}
	if *help {
		fmt.Fprint(stdout, aacpUsage)
		return exitOK
	}
	if len(pos) == 0 {
		return fail(exitUsage, errors.New("no command given; want agents, channel, inbox, dead-letters, requeue, quarantine or reindex"))
	}
	want := map[string]int{"agents": 0, "channel": 2, "inbox": 1, "dead-letters": 0, "requeue": 1, "quarantine": 0, "reindex": 0}
	n, known := want[pos[0]]
	switch {
	case !known:
		return fail(exitUsage, fmt.Errorf("unknown command %q; want agents, channel, inbox, dead-letters, requeue, quarantine or reindex", pos[0]))
	case len(pos)-1 != n:
		return fail(exitUsage, fmt.Errorf("%s takes %d argument(s), got %d: %q", pos[0], n, len(pos)-1, pos[1:]))
	}
	for _, id := range pos[1:] {
		if pos[0] == "requeue" {
			if err := envelope.CheckID("messageId", id); err != nil {
				return fail(exitUsage, errors.New(err.Message))
			}
		} else if err := envelope.CheckAgentID(id); err != nil && id != envelope.SystemAgentID {
			return fail(exitUsage, errors.New(err.Message))
		}
	}
	path := *configPath
	if path == "" {
		path = lookupEnv(environ, "MCPRT_CONFIG")
	}
	// The server's loader, so that every key the server accepts (domain
	// sections included) is accepted here too.
	all, err := config.Load(path, environ, version)
	if err != nil {
		return fail(exitConfig, err)
	}
	if *dataDir != "" {
		all.Base.AACP.DataDir = *dataDir
	}
	cfg := all.Base
	if all.Backend.Backend != natsengine.BackendNATS {
		if st, err := os.Stat(cfg.AACP.DataDir); err != nil || !st.IsDir() {
			return fail(exitFatal, fmt.Errorf("no agent messaging data in %q: it is not a directory; pass --data-dir (the sessions' MCPRT_AACP_DATA_DIR)", cfg.AACP.DataDir))
		}
	}
	// The stores as the server builds them (backends.go): the journal and
	// the agents' presence where the sessions keep them. An operator
	// command embeds no NATS server.
	ctx := context.Background()
	back, err := openBackends(ctx, backendOptions{Config: all, AACP: cfg.AACP})
	if err != nil {
		var be *backendError
		if errors.As(err, &be) {
			return fail(be.code, be.err)
		}
		return fail(exitFatal, err)
	}
	defer back.Close(ctx)
	store, err := back.openJournal()
	if err != nil {
		return fail(exitFatal, err)
	}
	c := &aacpCmd{store: store, presence: back.msgs, cfg: cfg.AACP, json: *asJSON, stdout: stdout}
	switch pos[0] {
	case "agents":
		err = c.agents(ctx)
	case "channel":
		err = c.channel(ctx, pos[1], pos[2])
	case "inbox":
		err = c.inbox(ctx, pos[1])
	case "dead-letters":
		err = c.deadLetters(ctx)
	case "requeue":
		err = c.requeue(ctx, pos[1])
	case "quarantine":
		err = c.quarantine(ctx)
	case "reindex":
		var n int
		if n, err = messaging.Reindex(ctx, cfg.AACP.DataDir); err == nil {
			if c.json {
				err = c.emit(map[string]int{"indexed": n}, nil, nil)
			} else {
				_, err = fmt.Fprintf(stdout, "reindexed: %d envelope(s) read from the journal\n", n)
			}
		}
	}
	if cerr := store.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fail(exitFatal, err)
	}
	return exitOK
}

// emit prints v as JSON, or the table rows under header.
func (c *aacpCmd) emit(v any, header []string, rows [][]string) error {
	if c.json {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(c.stdout, "(none)")
		return err
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		for i, cell := range r {
			r[i] = printable(cell)
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// printable keeps a table cell on one line and free of control
// characters, and cuts it at 60 characters.
func printable(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	if s == "" {
		return "-"
	}
	return s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// agentRow is one agent in `agents --json`: Online says whether a
// process hosts it, Presence and LastSeen what its heartbeats say
// (online, idle, stale, offline), as the coordination tools judge it.
type agentRow struct {
	journal.AgentRecord
	Online   bool      `json:"online"`
	Presence string    `json:"presence"`
	LastSeen time.Time `json:"lastSeen,omitzero"`
}

func (c *aacpCmd) agents(ctx context.Context) error {
	recs, err := c.store.Agents(ctx)
	if err != nil {
		return err
	}
	out := struct {
		Agents []agentRow `json:"agents"`
	}{Agents: []agentRow{}}
	var rows [][]string
	for _, r := range recs {
		presence, seen := c.presence.GradePresence(ctx, r.AgentID, r.Online, r.RegisteredAt)
		out.Agents = append(out.Agents, agentRow{r, r.Online, presence, seen})
		online := "no"
		if r.Online {
			online = "yes"
		}
		rows = append(rows, []string{r.AgentID, string(r.Type), online, presence, stamp(seen), fmt.Sprint(r.PID), stamp(r.RegisteredAt),
			strings.Join(r.Capabilities, ",")})
	}
	return c.emit(out, []string{"AGENT", "TYPE", "ONLINE", "PRESENCE", "LAST_SEEN", "PID", "REGISTERED", "CAPABILITIES"}, rows)
}

// stored is one transmission as the operator commands show it.
type stored struct {
	Seq         uint64            `json:"seq"`
	MessageID   string            `json:"messageId"`
	RequestID   string            `json:"requestId"`
	Sender      string            `json:"sender"`
	Receiver    string            `json:"receiver"`
	MessageType string            `json:"messageType"`
	Priority    string            `json:"priority"`
	Timestamp   string            `json:"timestamp"`
	RetryCount  int               `json:"retryCount"`
	State       string            `json:"state,omitempty"`  // the delivery's state in the sender's ledger
	Answer      string            `json:"answer,omitempty"` // the receiver's answer: received, queued, processed, nacked
	Envelope    envelope.Envelope `json:"envelope"`
}

// read returns the stored transmissions into receiver (from sender only,
// when set), in seq order per channel, with their delivery state and
// answer.
func (c *aacpCmd) read(ctx context.Context, sender, receiver string) ([]stored, error) {
	in, err := c.store.Inbox(receiver)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	var out []stored
	err = in.Read(ctx, func(e *envelope.Envelope) error {
		if sender == "" || e.Sender.AgentID == sender {
			out = append(out, stored{Seq: e.Seq, MessageID: e.MessageID, RequestID: e.RequestID, Sender: e.Sender.AgentID,
				Receiver: e.Receiver.AgentID, MessageType: e.MessageType, Priority: string(e.Priority), Timestamp: e.Timestamp,
				RetryCount: e.Metadata.RetryCount, Envelope: *e})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ledgers := map[string]journal.Ledger{}
	ledger := func(id string) journal.Ledger {
		l, ok := ledgers[id]
		if !ok {
			l, _ = c.store.Ledger(id) // nil for _broker: it keeps none
			ledgers[id] = l
		}
		return l
	}
	for i := range out {
		s := &out[i]
		if l := ledger(s.Sender); l != nil {
			if m, ok := l.Message(s.MessageID); ok {
				s.State = string(m.State)
			}
		}
		if l := ledger(receiver); l != nil && s.MessageType != envelope.Ack && s.MessageType != envelope.Nack && s.MessageType != broker.TakenType {
			if a, ok := l.Inbound(s.Sender, s.RequestID); ok {
				s.Answer = a.Status
			}
		}
	}
	return out, nil
}

func (c *aacpCmd) channel(ctx context.Context, sender, receiver string) error {
	msgs, err := c.read(ctx, sender, receiver)
	if err != nil {
		return err
	}
	out := struct {
		Channel  string   `json:"channel"`
		Messages []stored `json:"messages"`
	}{envelope.Channel(sender, receiver), append([]stored{}, msgs...)}
	var rows [][]string
	for _, m := range msgs {
		rows = append(rows, []string{fmt.Sprint(m.Seq), m.MessageID, m.MessageType, m.Priority, m.Timestamp, fmt.Sprint(m.RetryCount), m.State, m.Answer})
	}
	if !c.json {
		fmt.Fprintf(c.stdout, "channel %s: %d stored message(s)\n", out.Channel, len(msgs))
	}
	return c.emit(out, []string{"SEQ", "MESSAGE_ID", "TYPE", "PRIORITY", "SENT", "RETRY", "STATE", "ANSWER"}, rows)
}

func (c *aacpCmd) deadLetters(ctx context.Context) error {
	all, err := c.store.DeadLetters(ctx)
	if err != nil {
		return err
	}
	out := struct {
		DeadLetters []journal.DeadLetter `json:"deadLetters"`
	}{[]journal.DeadLetter{}}
	var rows [][]string
	for _, d := range all {
		if d.Status != journal.DeadActive {
			continue
		}
		out.DeadLetters = append(out.DeadLetters, d)
		rows = append(rows, []string{d.MessageID, d.Sender, d.Receiver, d.MessageType, string(d.Code), fmt.Sprint(d.RetryCount), stamp(d.FailedAt), d.Reason})
	}
	return c.emit(out, []string{"MESSAGE_ID", "FROM", "TO", "TYPE", "CODE", "RETRIES", "FAILED", "REASON"}, rows)
}

// requeue sends a dead letter again on behalf of its sender, which this
// command hosts for the moment it takes (so the sender must not be
// running elsewhere).
func (c *aacpCmd) requeue(ctx context.Context, messageID string) error {
	all, err := c.store.DeadLetters(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(all, func(d journal.DeadLetter) bool { return d.MessageID == messageID && d.Status == journal.DeadActive })
	if i < 0 {
		return fmt.Errorf("no dead letter %q; list them with 'mcprt aacp dead-letters'", messageID)
	}
	d := all[i]
	recs, err := c.store.Agents(ctx)
	if err != nil {
		return err
	}
	reg := broker.RegisterInput{Type: envelope.AdHoc}
	if j := slices.IndexFunc(recs, func(r journal.AgentRecord) bool { return r.AgentID == d.Sender }); j >= 0 {
		r := recs[j]
		if r.Online {
			return fmt.Errorf("the sender %q is running (pid %d); requeue from that session with aacp_requeue, or stop it first", d.Sender, r.PID)
		}
		reg = broker.RegisterInput{Type: r.Type, SupportedVersions: r.SupportedVersions, Capabilities: r.Capabilities}
	}
	b, err := broker.Open(broker.Options{Store: c.store, Manual: true, DefaultTTL: c.cfg.DefaultTTL,
		Policies: messaging.Policies(c.cfg)})
	if err != nil {
		return err
	}
	defer b.Close()
	if _, err := b.RegisterAgent(ctx, d.Sender, reg); err != nil {
		return fmt.Errorf("host the sender %q to requeue for it: %w", d.Sender, err)
	}
	defer b.Release(d.Sender)
	out, err := b.Requeue(ctx, d.Sender, broker.RequeueInput{MessageID: messageID})
	if err != nil {
		return err
	}
	if c.json {
		return c.emit(out, nil, nil)
	}
	_, err = fmt.Fprintf(c.stdout, "requeued %s (%s → %s) as %s, seq %d, request %s; the sender's session follows it up when it runs\n",
		messageID, d.Sender, d.Receiver, out.MessageID, out.Seq, out.RequestID)
	return err
}
