package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/domain/trace"
)

// messagesBody is the messages page's data.
type messagesBody struct {
	Agents    []string
	Agent     string
	Type      string
	Priority  string
	State     string
	Query     string
	Types     []string
	Messages  []message
	Pager     pager
	Dead      []journal.DeadLetter
	HasSearch bool
	Hits      []MessageHit
	Problem   string
}

// messageStates are the filter's states: open (unfinished), overdue,
// and the receiver's answers.
var messageStates = []string{"open", "overdue", "received", "queued", "processed", "nacked", "unanswered"}

func (c *Console) messages(ctx context.Context, q *request) {
	v := q.r.URL.Query()
	b := messagesBody{Agent: v.Get("agent"), Type: v.Get("type"), Priority: v.Get("priority"), State: v.Get("state"),
		Query: strings.TrimSpace(v.Get("q")), HasSearch: c.opts.Search != nil}
	snap, err := c.journal.current(ctx)
	if err != nil {
		c.fail(q, http.StatusInternalServerError, err.Error())
		return
	}
	for _, a := range snap.agents {
		b.Agents = append(b.Agents, a.AgentID)
	}
	src := snap.all
	if b.Agent != "" {
		src = snap.inboxes[b.Agent]
	}
	b.Types = snap.types
	if b.Type == "" && b.Priority == "" && b.State == "" && b.Query == "" {
		// No filter: the page is a slice of the list, with no scan of it.
		pg, lo, hi := paginate(q.r, len(src), c.cfg.PageSize)
		b.Pager, b.Messages = pg, src[lo:hi:hi]
	} else {
		var match []int
		for i := range src {
			if keep(&src[i], &b) {
				match = append(match, i)
			}
		}
		pg, lo, hi := paginate(q.r, len(match), c.cfg.PageSize)
		b.Pager = pg
		for _, i := range match[lo:hi] {
			b.Messages = append(b.Messages, src[i])
		}
	}
	dead := snap.activeDead()
	if len(dead) > c.cfg.PageSize {
		dead = dead[:c.cfg.PageSize]
	}
	b.Dead = dead
	if b.Query != "" && c.opts.Search != nil {
		if b.Hits, err = c.opts.Search.Search(ctx, b.Query, c.cfg.PageSize); err != nil {
			b.Problem = "search failed: " + err.Error()
		}
	}
	c.page(q, http.StatusOK, "messages", "messages", "messages", pageData{Body: b})
}

// keep applies the messages page's filters.
func keep(m *message, b *messagesBody) bool {
	if b.Type != "" && m.Type != b.Type || b.Priority != "" && m.Priority != b.Priority {
		return false
	}
	if b.Query != "" && !strings.Contains(strings.ToLower(m.Payload), strings.ToLower(b.Query)) &&
		!strings.Contains(m.MessageID, b.Query) && !strings.Contains(m.Sender, b.Query) {
		return false
	}
	switch b.State {
	case "":
		return true
	case "open":
		return m.Open
	case "overdue":
		return m.Overdue
	case "unanswered":
		return m.Answer == "" && m.Type != envelope.Ack && m.Type != envelope.Nack
	}
	return m.Answer == b.State
}

// messageBody is the message page's data.
type messageBody struct {
	Message message
	Replies []message
	Pretty  string
	Dead    *journal.DeadLetter
}

func (c *Console) messageDetail(ctx context.Context, q *request, id string) {
	snap, err := c.journal.current(ctx)
	if err != nil {
		c.fail(q, http.StatusInternalServerError, err.Error())
		return
	}
	m, ok := snap.find(id)
	if !ok {
		c.fail(q, http.StatusNotFound, "no stored message "+id+" (it may have expired or been compacted); see the messages page")
		return
	}
	b := messageBody{Message: m, Replies: snap.replies(m.Sender, m.MessageID), Pretty: displayJSON(m.Payload, true)}
	for _, d := range snap.dead {
		if d.MessageID == id {
			b.Dead = &d
			break
		}
	}
	c.page(q, http.StatusOK, "message", "messages", "messages", pageData{Title: "Message " + id, Body: b})
}

// displayJSON re-encodes a JSON payload for people: without the \u003c
// escapes of the wire form (the templates escape what they show),
// indented when indent is set. Text that is not JSON is returned as is.
func displayJSON(s string, indent bool) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if enc.Encode(v) != nil {
		return s
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// requeue sends a dead letter again, for its sender: the person's own
// agent, an agent this process hosts, or an agent no process runs (hosted
// for the moment it takes, as `mcprt aacp requeue` does).
func (c *Console) requeue(ctx context.Context, q *request) {
	id := strings.TrimSpace(q.r.PostFormValue("messageId"))
	start := c.clock.Now()
	out, sender, err := c.doRequeue(ctx, id)
	c.record(ctx, "console.requeue", start, map[string]any{"messageId": id, "sender": sender}, err)
	if err != nil {
		status := http.StatusConflict
		if strings.HasPrefix(err.Error(), "no dead letter") {
			status = http.StatusNotFound
		}
		c.fail(q, status, "requeue failed: "+err.Error())
		return
	}
	http.Redirect(q.w, q.r, c.opts.Prefix+"messages?requeued="+out.MessageID, http.StatusSeeOther)
}

func (c *Console) doRequeue(ctx context.Context, id string) (broker.RequeueOutput, string, error) {
	if err := envelope.CheckID("messageId", id); err != nil {
		return broker.RequeueOutput{}, "", fmt.Errorf("messageId %q: %s", id, err.Message)
	}
	snap, err := c.journal.current(ctx)
	if err != nil {
		return broker.RequeueOutput{}, "", err
	}
	i := slices.IndexFunc(snap.dead, func(d journal.DeadLetter) bool { return d.MessageID == id && d.Status == journal.DeadActive })
	if i < 0 {
		return broker.RequeueOutput{}, "", fmt.Errorf("no dead letter %q waiting (it may have been requeued already); see the dead letters on the messages page", id)
	}
	d := snap.dead[i]
	b, err := c.ensureHuman(ctx)
	if err != nil {
		return broker.RequeueOutput{}, d.Sender, err
	}
	agents, err := b.Agents(ctx, broker.AgentsInput{})
	if err != nil {
		return broker.RequeueOutput{}, d.Sender, err
	}
	j := slices.IndexFunc(agents.Agents, func(a broker.AgentInfo) bool { return a.AgentID == d.Sender })
	switch {
	case j >= 0 && agents.Agents[j].Local:
	case j >= 0 && agents.Agents[j].Online:
		return broker.RequeueOutput{}, d.Sender, fmt.Errorf("the sender %q runs in another process; requeue from that session with aacp_requeue, or stop it first", d.Sender)
	default:
		reg := broker.RegisterInput{Type: envelope.AdHoc}
		if j >= 0 {
			a := agents.Agents[j]
			reg = broker.RegisterInput{Type: a.Type, SupportedVersions: a.SupportedVersions, Capabilities: a.Capabilities}
		}
		if _, err := b.RegisterAgent(ctx, d.Sender, reg); err != nil {
			return broker.RequeueOutput{}, d.Sender, fmt.Errorf("host the sender %q to requeue for it: %w", d.Sender, err)
		}
		defer func() { _ = b.Release(d.Sender) }()
	}
	out, err := b.Requeue(ctx, d.Sender, broker.RequeueInput{MessageID: id})
	return out, d.Sender, err
}

// composeInput is the compose form.
type composeInput struct {
	To, Type, Priority, Subject, Body string
}

// composeBody is the compose page's data.
type composeBody struct {
	In         composeInput
	Agents     []string
	Human      string
	Priorities []string
	Sent       string
}

// defaultComposeType is the message type the person's messages have
// unless they choose another.
const defaultComposeType = "CUSTOM_HUMAN_MESSAGE"

func (c *Console) composeForm(ctx context.Context, q *request, in composeInput, sent, problem string) {
	b := composeBody{In: in, Human: c.cfg.HumanAgentID, Priorities: []string{"HIGH", "NORMAL", "LOW"}, Sent: sent}
	if in.To == "" {
		b.In.To = q.r.URL.Query().Get("to")
	}
	if snap, err := c.journal.current(ctx); err == nil {
		for _, a := range snap.agents {
			if a.AgentID != c.cfg.HumanAgentID {
				b.Agents = append(b.Agents, a.AgentID)
			}
		}
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusBadRequest
	}
	c.page(q, status, "compose", "compose", "", pageData{Title: "Compose", Body: b, Error: problem})
}

// compose sends the person's message through the durable broker.
func (c *Console) compose(ctx context.Context, q *request) {
	f := q.r.PostForm
	in := composeInput{To: strings.TrimSpace(f.Get("to")), Type: strings.TrimSpace(f.Get("type")),
		Priority: strings.TrimSpace(f.Get("priority")), Subject: f.Get("subject"), Body: f.Get("body")}
	if in.Type == "" {
		in.Type = defaultComposeType
	}
	if in.Priority == "" {
		in.Priority = "HIGH"
	}
	start := c.clock.Now()
	out, err := c.send(ctx, in)
	args := map[string]any{"to": in.To, "messageType": in.Type, "priority": in.Priority, "subject": in.Subject}
	if err == nil {
		args["messageId"], args["requestId"] = out.MessageID, out.RequestID
	}
	c.record(ctx, "console.compose", start, args, err)
	if err != nil {
		c.composeForm(ctx, q, in, "", err.Error())
		return
	}
	c.composeForm(ctx, q, composeInput{Priority: in.Priority, Type: in.Type}, out.MessageID, "")
}

func (c *Console) send(ctx context.Context, in composeInput) (broker.SendOutput, error) {
	if in.To == "" {
		return broker.SendOutput{}, fmt.Errorf("no receiver: choose an agent, or * to send to every agent")
	}
	if in.To != "*" {
		if err := envelope.CheckAgentID(in.To); err != nil {
			return broker.SendOutput{}, fmt.Errorf("receiver %q: %s", in.To, err.Message)
		}
	}
	var payload json.RawMessage
	if strings.HasPrefix(in.Type, envelope.CustomPrefix) {
		if strings.TrimSpace(in.Subject) == "" && strings.TrimSpace(in.Body) == "" {
			return broker.SendOutput{}, fmt.Errorf("the message is empty: write a subject or a body")
		}
		p, err := json.Marshal(map[string]string{"subject": in.Subject, "body": in.Body, "from": "the human overseer"})
		if err != nil {
			return broker.SendOutput{}, fmt.Errorf("encode the message: %w", err)
		}
		payload = p
	} else {
		if !json.Valid([]byte(in.Body)) || !strings.HasPrefix(strings.TrimSpace(in.Body), "{") {
			return broker.SendOutput{}, fmt.Errorf("a %s message's body must be its JSON payload object (as aacp_send takes it); use a CUSTOM_ type for free text", in.Type)
		}
		payload = json.RawMessage(in.Body)
	}
	b, err := c.ensureHuman(ctx)
	if err != nil {
		return broker.SendOutput{}, err
	}
	rcv := broker.Receiver{AgentID: in.To}
	if in.To == "*" {
		rcv.Type = envelope.AnyType
	}
	return b.Send(ctx, c.cfg.HumanAgentID, broker.SendInput{Receiver: rcv, MessageType: in.Type, Payload: payload,
		Priority: envelope.Priority(in.Priority)})
}

// record writes the person's action as a trace event (tool console.*,
// server "console"), so that it shows among the traces.
func (c *Console) record(ctx context.Context, tool string, start time.Time, args map[string]any, err error) {
	id := c.ids.NewID()
	raw, _ := json.Marshal(args)
	ev := trace.Event{RunID: id, TraceID: id, CorrelationID: id, Tool: tool, Start: start, Duration: c.clock.Now().Sub(start),
		Outcome: "success", Success: err == nil, ServerID: "console:" + c.cfg.HumanAgentID, Args: raw}
	if err != nil {
		ev.Outcome, ev.ErrorCode = "tool_error", "CONSOLE_ACTION_FAILED"
		ev.ErrorMessage = clipBytes(err.Error(), trace.MaxErrorMessageBytes)
	}
	if werr := c.db.Traces().Append(context.WithoutCancel(ctx), []trace.Event{ev}); werr != nil {
		c.log.Warn("console: recording the person's action in the traces failed", "tool", tool, "error", werr.Error())
	}
}

func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
