package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
)

// memBroker is a broker on an in-memory journal with a manual clock and no
// goroutines of its own; Receive wakes on new messages, never on a timer.
func memBroker(t *testing.T) *broker.Broker {
	t.Helper()
	b, err := broker.Open(broker.Options{Store: journal.NewMemory(), Manual: true, Clock: core.NewManualClock(t0),
		IDs: &core.SequenceGenerator{}, After: func(time.Duration) <-chan time.Time { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// assigned is a TASK_ASSIGNMENT a fake worker received.
type assigned struct {
	msg  broker.Message
	task struct {
		TaskID          string `json:"taskId"`
		TaskDescription string `json:"taskDescription"`
		Context         struct {
			Input      map[string]any `json:"input"`
			SessionID  string         `json:"sessionId"`
			Delegation struct {
				Depth, MaxDepth int
				ReplyTo         string
			} `json:"delegation"`
		} `json:"context"`
	}
}

// worker registers id on b and answers each TASK_ASSIGNMENT with the
// payloads reply returns (TASK_UPDATE payloads; none to stay silent), after
// reporting it on got. A NACK is sent instead when reply returns "NACK".
func worker(t *testing.T, b *broker.Broker, id string, reply func(a assigned) []string) <-chan assigned {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := b.RegisterAgent(ctx, id, broker.RegisterInput{Type: envelope.Implementation, Capabilities: []string{"build"}}); err != nil {
		t.Fatal(err)
	}
	got := make(chan assigned, 8)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for {
			out, err := b.Receive(ctx, id, broker.ReceiveInput{WaitMs: 60000, MessageTypes: []string{envelope.TaskAssignment}})
			if err != nil {
				return
			}
			for _, m := range out.Messages {
				a := assigned{msg: m}
				_ = json.Unmarshal(m.Payload, &a.task)
				answers := reply(a)
				if len(answers) == 1 && answers[0] == "NACK" {
					b.Nack(ctx, id, broker.NackInput{MessageID: m.MessageID, Reason: "cannot build today", ErrorCode: "E_TASK_003"})
				} else {
					b.Ack(ctx, id, broker.AckInput{MessageID: m.MessageID, Status: "processed"})
					for _, p := range answers {
						_, err := b.Send(ctx, id, broker.SendInput{Receiver: broker.Receiver{AgentID: m.Sender.AgentID},
							MessageType: envelope.TaskUpdate, Payload: json.RawMessage(p), CorrelationID: m.CorrelationID})
						if err != nil {
							t.Errorf("worker: send TASK_UPDATE: %v", err)
						}
					}
				}
				got <- a
			}
		}
	}()
	return got
}

// delegating is a service whose only agents are registered on b.
func delegating(t *testing.T, b *broker.Broker, profiles ...Profile) *Service {
	t.Helper()
	svc, err := NewService(Options{Profiles: profiles, IDs: &core.SequenceGenerator{}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMessaging(MessagingOptions{AgentID: DelegatorID("me"), Open: func(bool) (Mailbox, error) { return b, nil }})
	if err != nil {
		t.Fatal(err)
	}
	svc.SetMessaging(m)
	t.Cleanup(svc.Close)
	return svc
}

func update(taskID, status, extra string) string {
	return `{"taskId":"` + taskID + `","status":"` + status + `","progress":1` + extra + `}`
}

func TestDelegateCompleted(t *testing.T) {
	b := memBroker(t)
	got := worker(t, b, "builder", func(a assigned) []string {
		id := a.task.TaskID
		return []string{
			update(id, "in_progress", ``), // not the end
			update("another-task", "completed", `,"output":{"wrong":true}`),
			update(id, "completed", `,"output":{"built":`+jsonOf(a.task.Context.Input["target"])+`}`),
		}
	})
	svc := delegating(t, b)
	out, err := NewTools(svc).Run(context.Background(), RunInput{AgentID: "builder", Input: map[string]any{"target": "app"},
		Task: "build the app", SessionID: "s-1", DelegationDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Runner != RunnerMessaging || jsonOf(out.Output) != `{"built":"app"}` || out.TaskID == "" || out.Depth != 1 {
		t.Errorf("agent_run = %+v", out)
	}
	a := <-got
	tc := a.task.Context
	if a.task.TaskID != out.TaskID || a.task.TaskDescription != "build the app" || tc.SessionID != "s-1" ||
		tc.Delegation.Depth != 2 || tc.Delegation.MaxDepth != DefaultMaxDelegationDepth || tc.Delegation.ReplyTo != "me-runs" ||
		a.msg.CorrelationID != out.TaskID || a.msg.Metadata.TTL != 0 && a.msg.Metadata.TTL < 1 {
		t.Errorf("the worker got %+v (envelope %+v)", a.task, a.msg.Envelope)
	}
	// The catalogue lists the worker from messaging, not the delegator.
	list, err := NewTools(svc).List(context.Background(), ListInput{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(list.AgentIDs, " ") != "builder" || list.Agents[0].Online == nil || !*list.Agents[0].Online ||
		list.Agents[0].Capabilities[0] != "build" {
		t.Errorf("agent_list = %+v", list)
	}
}

func TestDelegateFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply func(a assigned) []string
		code  core.Code
		want  string
	}{
		{"failed update", func(a assigned) []string {
			return []string{update(a.task.TaskID, "failed", `,"notes":"the compiler crashed"`)}
		}, CodeStageFailed, "the compiler crashed"},
		{"failed with an error object", func(a assigned) []string {
			return []string{update(a.task.TaskID, "failed", `,"error":{"code":"X"}`)}
		}, CodeStageFailed, `{"code":"X"}`},
		{"nacked", func(assigned) []string { return []string{"NACK"} }, CodeStageFailed, "did not take task"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := memBroker(t)
			worker(t, b, "builder", tc.reply)
			svc := delegating(t, b)
			_, err := svc.RunAgent(context.Background(), "builder", nil)
			if e := core.AsError(err); err == nil || e.Code != tc.code || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("RunAgent: %v; want %s mentioning %q", err, tc.code, tc.want)
			}
		})
	}
}

func TestDelegateSilentWorker(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause error
		code  core.Code
	}{
		{"deadline", context.DeadlineExceeded, core.CodeTimeout},
		{"cancelled", context.Canceled, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := memBroker(t)
			got := worker(t, b, "builder", func(assigned) []string { return nil })
			svc := delegating(t, b)
			ctx, cancel := context.WithCancelCause(context.Background())
			go func() { <-got; cancel(tc.cause) }() // the task arrived and will never be answered
			_, err := svc.RunAgent(ctx, "builder", nil)
			e := core.AsError(err)
			switch {
			case tc.code != "" && (e.Code != tc.code || !e.Retryable):
				t.Fatalf("RunAgent: %v; want retryable %s", err, tc.code)
			case tc.code == "" && !strings.Contains(err.Error(), "context canceled"):
				t.Fatalf("RunAgent: %v; want the cancellation", err)
			}
		})
	}
}

func TestDelegateDepthExceeded(t *testing.T) {
	b := memBroker(t)
	got := worker(t, b, "builder", func(a assigned) []string { return []string{update(a.task.TaskID, "completed", "")} })
	svc := delegating(t, b, Profile{AgentID: "builder", Description: "Builds", Orchestration: &Orchestration{MaxDelegationDepth: new(1)}})
	if _, err := svc.Run(context.Background(), RunRequest{AgentID: "builder", Depth: 1}); err != nil {
		t.Fatalf("depth 1 with limit 1: %v", err)
	}
	<-got
	_, err := svc.Run(context.Background(), RunRequest{AgentID: "builder", Depth: 2})
	if e := core.AsError(err); e.Code != CodeDepthExceeded || e.Details["limit"] != 1 {
		t.Fatalf("depth 2 with limit 1: %v; want AGENT_DELEGATION_DEPTH_EXCEEDED with limit 1", err)
	}
	select {
	case a := <-got:
		t.Errorf("the refused run reached the worker: %+v", a.task)
	default:
	}
}

func TestMessagingNoJournal(t *testing.T) {
	m, err := NewMessaging(MessagingOptions{AgentID: "me-runs", Open: func(create bool) (Mailbox, error) {
		if create {
			t.Error("listing asked to create the journal")
		}
		return nil, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if ags, err := m.Agents(context.Background()); err != nil || ags != nil {
		t.Errorf("Agents without a journal: %v, %v", ags, err)
	}
	for _, id := range []string{"", "../x", strings.Repeat("a", 70)} {
		if _, err := NewMessaging(MessagingOptions{AgentID: id, Open: m.open}); err == nil {
			t.Errorf("NewMessaging accepted agent id %q", id)
		}
	}
	if got := DelegatorID(strings.Repeat("a", 64)); len(got) != 64 || envelope.CheckAgentID(got) != nil {
		t.Errorf("DelegatorID of a long id = %q", got)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
