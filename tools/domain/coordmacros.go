package domain

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/domain/task"
	"github.com/mcprt/mcprt/domain/toolspec"
)

// macroSpecs are the one-call openings and closings of a session's work.
func macroSpecs() []toolspec.Spec {
	return []toolspec.Spec{
		{Name: "coord_start", Title: "Start coordinated work", Description: "One call to begin: register (or resume) your agent identity with agentType, join sessionId, reserve reservePaths, and get your inbox summary, the open tasks and your held tasks, and the active reservations."},
		{Name: "coord_finish", Title: "Finish coordinated work", Description: "One call to end: release your reservations, send summary to the other participants of your sessions (or sessionId), and ack as processed the messages you took (or ackMessageIds).",
			Destructive: true},
	}
}

// brokerMessaging is the part of *messaging.Service the macros need
// beyond Messaging: the broker behind it (register, inbox, ack).
type brokerMessaging interface {
	Messaging
	Broker(create bool) (*broker.Broker, error)
}

// maxSummaryItems bounds the lists coord_start returns.
const maxSummaryItems = 20

// StartArgs is the input of coord_start.
type StartArgs struct {
	AgentType    string   `json:"agentType" jsonschema:"Manager, Implementation or AdHoc"`
	SessionID    string   `json:"sessionId,omitempty"`
	ReservePaths []string `json:"reservePaths,omitempty" jsonschema:"Paths or globs to reserve exclusively"`
	TTLSeconds   int      `json:"ttlSeconds,omitempty" jsonschema:"Lease time of the reservations (default coord.defaultTtlSeconds)"`
}

// InboxItem is one message of the inbox summary.
type InboxItem struct {
	MessageID   string `json:"messageId"`
	From        string `json:"from"`
	MessageType string `json:"messageType"`
	Priority    string `json:"priority"`
	State       string `json:"state" jsonschema:"queued (not taken yet) or handedOut (taken, not answered)"`
	Subject     string `json:"subject,omitempty"`
}

// InboxSummary is coord_start's view of the inbox.
type InboxSummary struct {
	Queued    int         `json:"queued"`
	HandedOut int         `json:"handedOut"`
	Messages  []InboxItem `json:"messages" jsonschema:"The first 20, in the order aacp_receive hands them out"`
}

// TaskBrief is a task in coord_start's lists (task_get has the rest).
type TaskBrief struct {
	TaskID   string   `json:"taskId"`
	Title    string   `json:"title"`
	Priority int      `json:"priority"`
	Status   string   `json:"status"`
	Assignee string   `json:"assignee,omitempty"`
	Labels   []string `json:"labels,omitempty"`
}

// LeaseBrief is a reservation in coord_start's lists.
type LeaseBrief struct {
	ID        string `json:"id"`
	AgentID   string `json:"agentId"`
	Path      string `json:"path"`
	Exclusive bool   `json:"exclusive"`
	ExpiresAt string `json:"expiresAt"`
}

// ReservedBrief is what coord_start's reservePaths got.
type ReservedBrief struct {
	Granted   bool                         `json:"granted"`
	Leases    []LeaseBrief                 `json:"leases"`
	Conflicts []reservation.ConflictOutput `json:"conflicts"`
}

// StartOutput is the result of coord_start.
type StartOutput struct {
	AgentID      string         `json:"agentId"`
	AgentType    string         `json:"agentType"`
	SessionID    string         `json:"sessionId,omitempty"`
	Joined       bool           `json:"joined,omitempty"`
	Reserved     *ReservedBrief `json:"reserved,omitempty"`
	Inbox        InboxSummary   `json:"inbox"`
	MyTasks      []TaskBrief    `json:"myTasks" jsonschema:"Tasks you hold"`
	OpenTasks    []TaskBrief    `json:"openTasks" jsonschema:"The first 20 open tasks by priority"`
	OpenTotal    int            `json:"openTotal"`
	Reservations []LeaseBrief   `json:"reservations" jsonschema:"The first 20 active reservations"`
	ResTotal     int            `json:"reservationsTotal"`
}

func taskBrief(t task.TaskOutput) TaskBrief {
	return TaskBrief{TaskID: t.TaskID, Title: t.Title, Priority: t.Priority, Status: string(t.Status), Assignee: t.Assignee, Labels: t.Labels}
}

func leaseBriefs(ls []reservation.LeaseOutput) []LeaseBrief {
	out := make([]LeaseBrief, len(ls))
	for i, l := range ls {
		out[i] = LeaseBrief{ID: l.ID, AgentID: l.AgentID, Path: l.Path, Exclusive: l.Exclusive, ExpiresAt: l.ExpiresAt}
	}
	return out
}

func (d *Domain) macroBroker(ctx context.Context) (*broker.Broker, string, error) {
	m, ok := d.coord.msg.(brokerMessaging)
	if !ok {
		return nil, "", core.NewError(reservation.CodeNoIdentity, "this server has no agent messaging, so coord_start and coord_finish cannot work; run mcprt with agent messaging (aacp.dataDir)")
	}
	b, err := m.Broker(true)
	if err != nil {
		return nil, "", err
	}
	me, err := m.Caller(ctx)
	if err != nil {
		return nil, "", err
	}
	return b, me, nil
}

// coordStart is the coord_start handler.
func (d *Domain) coordStart(ctx context.Context, in StartArgs) (StartOutput, error) {
	switch envelope.AgentType(in.AgentType) {
	case envelope.Manager, envelope.Implementation, envelope.AdHoc:
	default:
		return StartOutput{}, core.NewError(core.CodeInvalidArgument, fmt.Sprintf("agentType: is %q; give Manager, Implementation or AdHoc", in.AgentType)).
			WithDetail("field", "agentType")
	}
	b, me, err := d.macroBroker(ctx)
	if err != nil {
		return StartOutput{}, err
	}
	// Registering again with the type resumes the identity (same id, its
	// inbox kept) and sets its type.
	if _, err := b.RegisterAgent(ctx, me, broker.RegisterInput{Type: envelope.AgentType(in.AgentType)}); err != nil {
		return StartOutput{}, fmt.Errorf("coord_start: registering %s: %w", me, err)
	}
	out := StartOutput{AgentID: me, AgentType: in.AgentType, SessionID: in.SessionID}
	if in.SessionID != "" {
		if _, out.Joined, err = d.sessions.Join(ctx, in.SessionID, me, ""); err != nil {
			return StartOutput{}, err
		}
	}
	if len(in.ReservePaths) > 0 {
		r, err := reservation.NewTools(d.coord.reservations).Reserve(ctx, reservation.ReserveInput{Paths: in.ReservePaths, TTLSeconds: in.TTLSeconds})
		if err != nil {
			return StartOutput{}, err
		}
		out.Reserved = &ReservedBrief{Granted: r.Granted, Leases: leaseBriefs(r.Leases), Conflicts: r.Conflicts}
	}
	inbox, err := b.Inbox(ctx, me)
	if err != nil {
		return StartOutput{}, fmt.Errorf("coord_start: reading the inbox of %s: %w", me, err)
	}
	out.Inbox = InboxSummary{Queued: inbox.Queued, HandedOut: inbox.HandedOut, Messages: []InboxItem{}}
	for _, m := range inbox.Messages[:min(len(inbox.Messages), maxSummaryItems)] {
		var p struct {
			Subject string `json:"subject"`
		}
		_ = json.Unmarshal(m.Payload, &p) // a payload without a subject has none
		out.Inbox.Messages = append(out.Inbox.Messages, InboxItem{MessageID: m.MessageID, From: m.Sender.AgentID,
			MessageType: m.MessageType, Priority: string(m.Priority), State: m.State, Subject: p.Subject})
	}
	tt := task.NewTools(d.coord.tasks)
	mine, err := tt.List(ctx, task.ListArgs{Assignee: me, Limit: task.MaxListLimit})
	if err != nil {
		return StartOutput{}, err
	}
	out.MyTasks = []TaskBrief{}
	for _, t := range mine.Tasks {
		if t.Status.Held() {
			out.MyTasks = append(out.MyTasks, taskBrief(t))
		}
	}
	open, err := tt.List(ctx, task.ListArgs{Status: task.StatusOpen, Limit: maxSummaryItems})
	if err != nil {
		return StartOutput{}, err
	}
	out.OpenTasks, out.OpenTotal = []TaskBrief{}, open.Total
	for _, t := range open.Tasks {
		out.OpenTasks = append(out.OpenTasks, taskBrief(t))
	}
	ls, total, err := d.coord.reservations.List(ctx, "", "")
	if err != nil {
		return StartOutput{}, err
	}
	out.Reservations, out.ResTotal = leaseBriefs(reservation.Outputs(ls[:min(len(ls), maxSummaryItems)])), total
	return out, nil
}

// FinishArgs is the input of coord_finish.
type FinishArgs struct {
	Summary       string   `json:"summary" jsonschema:"What you did, for the other participants"`
	SessionID     string   `json:"sessionId,omitempty" jsonschema:"Default: every active session you joined"`
	AckMessageIDs []string `json:"ackMessageIds,omitempty" jsonschema:"Default: every message you took with aacp_receive and have not answered"`
}

// FinishOutput is the result of coord_finish.
type FinishOutput struct {
	AgentID  string   `json:"agentId"`
	Released int      `json:"released" jsonschema:"Reservations released"`
	Sessions []string `json:"sessions" jsonschema:"Sessions whose other participants were sent the summary"`
	Notified []string `json:"notified"`
	Acked    []string `json:"acked" jsonschema:"Messages acknowledged as processed"`
}

// coordFinish is the coord_finish handler.
func (d *Domain) coordFinish(ctx context.Context, in FinishArgs) (FinishOutput, error) {
	if in.Summary == "" || len(in.Summary) > session.MaxTextBytes {
		return FinishOutput{}, core.NewError(core.CodeInvalidArgument, fmt.Sprintf("summary: give 1 to %d bytes saying what you did", session.MaxTextBytes)).
			WithDetail("field", "summary")
	}
	b, me, err := d.macroBroker(ctx)
	if err != nil {
		return FinishOutput{}, err
	}
	out := FinishOutput{AgentID: me, Sessions: []string{}, Notified: []string{}, Acked: []string{}}
	var sessions []session.Session
	if in.SessionID != "" {
		s, err := d.sessions.Get(ctx, in.SessionID)
		if err != nil {
			return FinishOutput{}, err
		}
		sessions = append(sessions, s)
	} else {
		page, _, err := d.sessions.List(ctx, session.Filter{Status: session.StatusActive, Limit: session.MaxListLimit})
		if err != nil {
			return FinishOutput{}, err
		}
		for _, sum := range page {
			s, err := d.sessions.Get(ctx, sum.ID)
			if err == nil && participates(s, me) {
				sessions = append(sessions, s)
			}
		}
	}
	ids := in.AckMessageIDs
	if ids == nil {
		inbox, err := b.Inbox(ctx, me)
		if err != nil {
			return FinishOutput{}, fmt.Errorf("coord_finish: reading the inbox of %s: %w", me, err)
		}
		for _, m := range inbox.Messages {
			if m.State == broker.InboxHandedOut {
				ids = append(ids, m.MessageID)
			}
		}
	}
	for _, id := range ids {
		if _, err := b.Ack(ctx, me, broker.AckInput{MessageID: id, Status: "processed", Notes: "coord_finish"}); err != nil {
			return out, fmt.Errorf("coord_finish: acknowledging %s (%d acknowledged before it): %w", id, len(out.Acked), err)
		}
		out.Acked = append(out.Acked, id)
	}
	for _, s := range sessions {
		out.Sessions = append(out.Sessions, s.ID)
		for _, p := range s.Participants {
			if p.AgentID == me {
				continue
			}
			if err := d.coord.msg.Tell(ctx, p.AgentID, "work finished", map[string]any{"sessionId": s.ID, "from": me,
				"summary": in.Summary, "at": d.clock.Now().UTC().Format(time.RFC3339)}); err == nil {
				out.Notified = append(out.Notified, p.AgentID)
			}
		}
	}
	rel, _, err := d.coord.reservations.Release(ctx, nil)
	if err != nil {
		return out, err
	}
	out.Released = len(rel)
	return out, nil
}

func participates(s session.Session, agentID string) bool {
	for _, p := range s.Participants {
		if p.AgentID == agentID {
			return true
		}
	}
	return false
}
