package main

// `mcprt hook [claude|gemini|codex]`: the command an AI client's hooks run
// (Claude Code, Gemini CLI, Codex). It reads the client's hook input (one
// JSON object) from stdin, reads the agent's inbox from the messaging
// journal without claiming the agent, and prints what the client adds to
// the model's context: a short summary of the unread messages and of the
// reservations that expire soon. It always exits 0 and never waits for
// more than a moment: a hook must never hold up or fail the client's turn.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/store"
)

const hookUsage = `mcprt hook — tell an AI session about its unread messages, from a client hook.

Usage:
  mcprt hook [flags] [claude|gemini|codex]

The client runs it on SessionStart, UserPromptSubmit / BeforeAgent and Stop /
AfterAgent with its hook input (JSON) on stdin; the client is detected from
the input when not named. It prints the client's hook output (JSON) when the
agent has unread messages or path reservations that expire within ten
minutes, and nothing otherwise. It always exits 0. docs/hooks.md has copy-paste configurations.

Flags:
  --agent ID       the agent whose inbox to read (default: aacp.agentId,
                   MCPRT_AACP_AGENT_ID)
  --data-dir DIR   the messaging data directory (default: aacp.dataDir,
                   MCPRT_AACP_DATA_DIR, else .mcprt)
  --config FILE    the configuration file to read aacp.* from
`

// Hook limits: how long stdin may take to bring the hook input, how long
// the journal may take to read, and how much the summary lists.
const (
	hookStdinWait    = 250 * time.Millisecond
	hookReadTimeout  = 2 * time.Second
	hookMaxInput     = 1 << 20
	hookListed       = 5
	hookClip         = 100
	hookExpiringSoon = 10 * time.Minute
)

// Clients whose hook formats `mcprt hook` speaks.
const (
	clientClaude = "claude"
	clientGemini = "gemini"
	clientCodex  = "codex"
)

// hookInput is what the clients' hooks send on stdin (the fields used).
// Claude Code and Codex send session_id, cwd, hook_event_name and, for
// Stop, stop_hook_active; Codex adds turn_id and model; Gemini CLI adds
// timestamp and names its events BeforeAgent / AfterAgent.
type hookInput struct {
	Event          string `json:"hook_event_name"`
	StopHookActive bool   `json:"stop_hook_active"`
	TurnID         string `json:"turn_id"`
	Model          string `json:"model"`
	Timestamp      string `json:"timestamp"`
}

// hookReport is what the hook has to tell the model.
type hookReport struct {
	agent    string
	messages []stored
	expiring []expiringReservation
}

// expiringReservation is a path reservation of the agent that ends soon.
type expiringReservation struct {
	Paths     []string
	ExpiresAt time.Time
}

// runClientHook is `mcprt hook [CLIENT]`. Whatever goes wrong, it exits 0
// with nothing on stdout and one line on stderr.
func runClientHook(args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	fs := flag.NewFlagSet("mcprt hook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	agent := fs.String("agent", "", "")
	dataDir := fs.String("data-dir", "", "")
	configPath := fs.String("config", "", "")
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, hookUsage)
				return exitOK
			}
			fmt.Fprintf(stderr, "mcprt hook: %v (mcprt hook --help shows the flags); nothing reported\n", err)
			return exitOK
		}
		if rest = fs.Args(); len(rest) == 0 {
			break
		}
		pos, rest = append(pos, rest[0]), rest[1:]
	}
	client := ""
	if len(pos) > 0 {
		client = pos[0]
		if !slices.Contains([]string{clientClaude, clientGemini, clientCodex}, client) || len(pos) > 1 {
			fmt.Fprintf(stderr, "mcprt hook: unknown client %q; name claude, gemini or codex, or none to detect it; nothing reported\n",
				strings.Join(pos, " "))
			return exitOK
		}
	}
	in := readHookInput(stdin, stderr)
	if client == "" {
		client = detectClient(in)
	}
	now := time.Now()
	rep, err := hookGather(*configPath, *dataDir, *agent, environ, now)
	if err != nil {
		fmt.Fprintf(stderr, "mcprt hook: %v; nothing reported\n", err)
		return exitOK
	}
	if out := hookOutput(client, in, rep, now); out != nil {
		stdout.Write(append(out, '\n'))
	}
	return exitOK
}

// readHookInput decodes the one JSON object a client writes on stdin,
// waiting at most hookStdinWait for it: a terminal or a pipe that stays
// open without input yields the zero input, never a hang.
func readHookInput(stdin io.Reader, stderr io.Writer) hookInput {
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice != 0 {
			return hookInput{} // a terminal: nobody will write the input
		}
	}
	got := make(chan hookInput, 1)
	go func() { // left behind, blocked, when stdin never delivers; the process exits anyway
		var in hookInput
		if err := json.NewDecoder(io.LimitReader(stdin, hookMaxInput)).Decode(&in); err != nil && !errors.Is(err, io.EOF) {
			fmt.Fprintf(stderr, "mcprt hook: the hook input on stdin is not a JSON object (%v); using none\n", err)
		}
		got <- in
	}()
	timer := time.NewTimer(hookStdinWait)
	defer timer.Stop()
	select {
	case in := <-got:
		return in
	case <-timer.C:
		return hookInput{}
	}
}

// detectClient tells the client from its hook input: Gemini CLI's events
// and timestamp, Codex's turn_id and model, else Claude Code (whose
// output format Codex shares).
func detectClient(in hookInput) string {
	switch {
	case in.Event == "BeforeAgent" || in.Event == "AfterAgent" || in.Timestamp != "":
		return clientGemini
	case in.TurnID != "" || in.Model != "":
		return clientCodex
	default:
		return clientClaude
	}
}

// hookGather reads the agent's unfinished messages and expiring
// reservations. No agent id, or no data directory yet, is an empty report.
func hookGather(configPath, dataDir, agent string, environ []string, now time.Time) (hookReport, error) {
	if configPath == "" {
		configPath = lookupEnv(environ, "MCPRT_CONFIG")
	}
	all, err := config.Load(configPath, environ, version)
	cfg, dom := all.Base, all.Domain
	if err != nil {
		return hookReport{}, fmt.Errorf("invalid configuration: %w", err)
	}
	if dataDir != "" {
		cfg.AACP.DataDir = dataDir
	}
	if agent == "" {
		agent = cfg.AACP.AgentID
	}
	rep := hookReport{agent: agent}
	if agent == "" {
		return rep, nil // nobody to report for: say nothing
	}
	if err := envelope.CheckAgentID(agent); err != nil {
		return rep, fmt.Errorf("agent id %q: %s", agent, err.Message)
	}
	if st, err := os.Stat(cfg.AACP.DataDir); err != nil || !st.IsDir() {
		return rep, nil // no messaging data yet: nothing waits
	}
	store, err := journal.OpenFile(journal.FileOptions{Dir: cfg.AACP.DataDir, Fsync: journal.FsyncPolicy(cfg.AACP.Fsync)})
	if err != nil {
		return rep, err
	}
	defer store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hookReadTimeout)
	defer cancel()
	c := &aacpCmd{store: store, cfg: cfg.AACP}
	msgs, err := c.read(ctx, "", agent)
	if err != nil {
		return rep, fmt.Errorf("reading the inbox of %s: %w", agent, err)
	}
	rep.messages = unfinished(msgs, now)
	rep.expiring, err = reservationsExpiringSoon(ctx, dom.StoreDir(cfg.AACP.DataDir), agent, now, hookExpiringSoon,
		dom.Coord.MaxReservationsPerAgent)
	if err != nil {
		return rep, fmt.Errorf("reading the reservations of %s: %w", agent, err)
	}
	return rep, nil
}

// unfinished keeps what the agent has not finished, as `mcprt aacp inbox`
// lists it: the latest transmission of each request that is neither an
// ACK/NACK, nor expired, nor processed or rejected; HIGH priority first.
func unfinished(msgs []stored, now time.Time) []stored {
	latest := map[string]int{}
	var open []stored
	for _, m := range msgs {
		exp := m.Envelope.ExpiresAt()
		if m.MessageType == envelope.Ack || m.MessageType == envelope.Nack || m.Answer == journal.InboundProcessed ||
			m.Answer == journal.InboundNacked || !exp.IsZero() && !exp.After(now) {
			continue
		}
		key := m.Sender + "\x00" + m.RequestID
		if i, ok := latest[key]; ok {
			open[i] = m
			continue
		}
		latest[key] = len(open)
		open = append(open, m)
	}
	slices.SortStableFunc(open, func(a, b stored) int {
		return envelope.Priority(a.Priority).Rank() - envelope.Priority(b.Priority).Rank()
	})
	return open
}

// reservationsExpiringSoon returns the agent's active path reservations
// that expire within soon of now, read from the coordination store in
// storeDir opened for reading only; the leases of one reserve_paths (or
// renew_reservations) call, which end together, make one entry, soonest
// first, at most hookListed of them. A store that does not exist yet holds
// none and is not created. limit is the most leases one agent may hold.
func reservationsExpiringSoon(ctx context.Context, storeDir, agent string, now time.Time, soon time.Duration,
	limit int) ([]expiringReservation, error) {
	if _, err := os.Stat(filepath.Join(storeDir, store.FileName)); err != nil {
		return nil, nil // no coordination store yet: no reservations
	}
	db, err := store.New(store.Options{Dir: storeDir, ReadOnly: true, BusyTimeout: hookStdinWait})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if v, err := db.Version(ctx); err != nil || v < store.ReservationsVersion {
		return nil, err // a store still being created holds none yet
	}
	leases, _, err := db.Reservations().List(ctx, agent, now, limit)
	if err != nil {
		return nil, err
	}
	var out []expiringReservation
	at := map[time.Time]int{}
	for _, l := range leases {
		if l.ExpiresAt.Sub(now) > soon {
			continue
		}
		if i, ok := at[l.ExpiresAt]; ok {
			out[i].Paths = append(out[i].Paths, l.Pattern)
			continue
		}
		at[l.ExpiresAt] = len(out)
		out = append(out, expiringReservation{Paths: []string{l.Pattern}, ExpiresAt: l.ExpiresAt})
	}
	slices.SortStableFunc(out, func(a, b expiringReservation) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
	return out[:min(len(out), hookListed)], nil
}

// hookText is the summary the model reads; "" when there is nothing to say.
func hookText(rep hookReport, now time.Time) string {
	if len(rep.messages) == 0 && len(rep.expiring) == 0 {
		return ""
	}
	var b strings.Builder
	if n := len(rep.messages); n > 0 {
		fmt.Fprintf(&b, "mcprt: agent %q has %d unread message%s. Take them with aacp_receive, act on each, "+
			"answer its sender, then aacp_ack it (status processed):\n", rep.agent, n, plural(n))
		for _, m := range rep.messages[:min(n, hookListed)] {
			fmt.Fprintf(&b, "- %s from %s (%s, %s)%s\n", m.MessageType, m.Sender, m.Priority, ago(m.Timestamp, now), gist(m.Envelope.Payload))
		}
		if n > hookListed {
			fmt.Fprintf(&b, "- and %d more\n", n-hookListed)
		}
	}
	for _, r := range rep.expiring {
		paths := strings.Join(r.Paths[:min(len(r.Paths), hookListed)], ", ")
		if n := len(r.Paths) - hookListed; n > 0 {
			paths += fmt.Sprintf(" and %d more", n)
		}
		fmt.Fprintf(&b, "mcprt: your reservation of %s expires in %s; renew it if you still edit there, else release it.\n",
			paths, r.ExpiresAt.Sub(now).Round(time.Second))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ago says how long ago an RFC 3339 timestamp was ("sent 3m ago").
func ago(ts string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return "sent " + ts
	}
	return "sent " + max(now.Sub(t), 0).Round(time.Second).String() + " ago"
}

// gist is ": <what the message is about>" from its payload: a task's
// description, an error's message, or a short text field; "" when none.
func gist(payload json.RawMessage) string {
	var p map[string]any
	if json.Unmarshal(payload, &p) != nil {
		return ""
	}
	for _, k := range []string{"taskDescription", "errorMessage", "text", "message", "question", "reason", "status"} {
		if s, ok := p[k].(string); ok && s != "" {
			s = strings.Join(strings.Fields(s), " ")
			if len(s) > hookClip {
				s = s[:hookClip] + "…"
			}
			return ": " + s
		}
	}
	return ""
}

// hookOutput is what the client reads on stdout, in its format, or nil
// when there is nothing to say. Claude Code and Codex: SessionStart and
// UserPromptSubmit add hookSpecificOutput.additionalContext; Stop (unless
// stop_hook_active, a stop already extended by a hook) returns decision
// block with the summary as the reason, so the model handles its inbox
// before it stops. Gemini CLI: SessionStart and BeforeAgent add
// additionalContext; AfterAgent (unless stop_hook_active) returns
// decision deny, which makes the agent go on with the reason. Other events
// get nothing.
func hookOutput(client string, in hookInput, rep hookReport, now time.Time) []byte {
	text := hookText(rep, now)
	if text == "" {
		return nil
	}
	event := in.Event
	if event == "" {
		event = "SessionStart" // run by hand or without input: context, the safe choice
	}
	addContext := func() []byte {
		b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
			"hookEventName": event, "additionalContext": text}})
		return b
	}
	decision := func(d string) []byte {
		if in.StopHookActive {
			return nil
		}
		b, _ := json.Marshal(map[string]string{"decision": d, "reason": text})
		return b
	}
	switch client {
	case clientGemini:
		switch event {
		case "SessionStart", "BeforeAgent":
			return addContext()
		case "AfterAgent":
			return decision("deny")
		}
	default: // Claude Code and Codex share the format
		switch event {
		case "SessionStart", "UserPromptSubmit":
			return addContext()
		case "Stop":
			return decision("block")
		}
	}
	return nil
}
