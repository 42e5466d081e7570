package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
)

// Mailbox is the part of *broker.Broker that delegation uses.
type Mailbox interface {
	RegisterAgent(ctx context.Context, agentID string, in broker.RegisterInput) (broker.RegisterOutput, error)
	Agents(ctx context.Context, in broker.AgentsInput) (broker.AgentsOutput, error)
	Send(ctx context.Context, agentID string, in broker.SendInput) (broker.SendOutput, error)
	Receive(ctx context.Context, agentID string, in broker.ReceiveInput) (broker.ReceiveOutput, error)
	Ack(ctx context.Context, agentID string, in broker.AckInput) (broker.AnswerOutput, error)
}

var _ Mailbox = (*broker.Broker)(nil)

// MailboxOpener returns the mailbox. With create false it returns nil and
// no error when no messaging journal exists yet (so no agent is
// registered) rather than creating one; with create true it opens or
// creates it.
type MailboxOpener func(create bool) (Mailbox, error)

// MessagingOptions configure NewMessaging.
type MessagingOptions struct {
	// Open opens the shared journal (lazily: it is called at each use).
	Open MailboxOpener
	// AgentID is the agent that sends the TASK_ASSIGNMENTs and receives
	// the TASK_UPDATEs; this process registers (hosts) it on the first
	// delegation. It must be an agent id of its own: a receiver that
	// others use would take the updates. See DelegatorID.
	AgentID string
	// Logger reports updates that match no waiting run; nil discards them.
	Logger *slog.Logger
}

// Messaging delegates runs to agents registered for durable messaging: it
// sends a TASK_ASSIGNMENT and waits for the TASK_UPDATE that completes
// it. One receiving goroutine per Messaging hands the updates to the
// waiting runs by taskId; it runs from the first delegation until Close.
// All methods are safe for concurrent use.
type Messaging struct {
	open MailboxOpener
	id   string
	log  *slog.Logger

	mu         sync.Mutex
	registered bool               // guarded by mu: id is hosted
	waiters    map[string]*waiter // guarded by mu: by taskId
	loop       context.CancelFunc // guarded by mu: nil when no loop runs
	closed     bool               // guarded by mu
	done       chan struct{}      // guarded by mu: closed when the loop ends
}

// waiter is a run waiting for its task's outcome.
type waiter struct {
	target string
	done   chan taskOutcome // buffered 1: one outcome
}

// taskOutcome is how a task ended: an update, or a delivery failure.
type taskOutcome struct {
	update TaskUpdate
	err    error
}

// TaskUpdate is the part of a TASK_UPDATE payload a run reads. Output and
// Error are not part of the protocol's payload (which allows extra
// fields): a worker puts its result in output, and may explain a failure
// in error or notes.
type TaskUpdate struct {
	TaskID   string          `json:"taskId"`
	Status   string          `json:"status"`
	Progress float64         `json:"progress"`
	Notes    string          `json:"notes,omitempty"`
	Output   json.RawMessage `json:"output,omitempty"`
	Error    json.RawMessage `json:"error,omitempty"`
}

// Task is what Delegate sends.
type Task struct {
	// ID is the taskId, also the correlationId of the messages.
	ID          string
	Description string
	Input       map[string]any
	SessionID   string
	// Depth is the delegation depth the worker runs at; MaxDepth its
	// agent's limit (both passed on so the worker can delegate further).
	Depth, MaxDepth int
}

// NewMessaging returns a Messaging over opts.Open acting as opts.AgentID.
func NewMessaging(opts MessagingOptions) (*Messaging, error) {
	if opts.Open == nil {
		return nil, errors.New("agent: NewMessaging: Open is nil; pass the function that opens the messaging journal")
	}
	if err := envelope.CheckAgentID(opts.AgentID); err != nil {
		return nil, fmt.Errorf("agent: NewMessaging: the delegating agent id: %w", err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Messaging{open: opts.Open, id: opts.AgentID, log: opts.Logger, waiters: map[string]*waiter{}}, nil
}

// DelegatorCapability marks a delegating agent in the messaging registry:
// the catalogue leaves such agents out (they only carry agent_run's tasks).
const DelegatorCapability = "mcprt.agent_run.delegator"

// DelegatorID is the delegating agent's id for a process whose own agent
// is own: own with "-runs" appended (shortened to fit 64 bytes).
func DelegatorID(own string) string {
	const suffix = "-runs"
	if len(own) > envelope.MaxAgentIDBytes-len(suffix) {
		own = own[:envelope.MaxAgentIDBytes-len(suffix)]
	}
	return own + suffix
}

// AgentID is the delegating agent's id.
func (m *Messaging) AgentID() string { return m.id }

// Agents lists the agents registered for messaging, or none when no
// journal exists yet. It creates nothing.
func (m *Messaging) Agents(ctx context.Context) ([]broker.AgentInfo, error) {
	mb, err := m.open(false)
	if err != nil || mb == nil {
		return nil, err
	}
	out, err := mb.Agents(ctx, broker.AgentsInput{})
	if err != nil {
		return nil, fmt.Errorf("list the agents registered for messaging: %w", err)
	}
	return out.Agents, nil
}

// Delegate sends t to target as a TASK_ASSIGNMENT and waits for target's
// TASK_UPDATE with status completed or failed (in_progress, blocked and
// pending_review updates are acknowledged and waited past). It returns
// the completing update; a failed one is an AGENT_STAGE_FAILED error. A
// delivery the broker gives up on (the worker NACKed it, or it expired)
// is AGENT_STAGE_FAILED too. When ctx ends first: TIMEOUT (retryable)
// at its deadline, otherwise ctx's cause; a late update is acknowledged
// and dropped.
func (m *Messaging) Delegate(ctx context.Context, target string, t Task) (TaskUpdate, error) {
	mb, err := m.start()
	if err != nil {
		return TaskUpdate{}, err
	}
	w := &waiter{target: target, done: make(chan taskOutcome, 1)}
	m.mu.Lock()
	if _, dup := m.waiters[t.ID]; dup {
		m.mu.Unlock()
		return TaskUpdate{}, core.Errorf(core.CodeInternal, "task id %q is already waiting for its update; task ids must be unique", t.ID)
	}
	m.waiters[t.ID] = w
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.waiters, t.ID)
		m.mu.Unlock()
	}()
	in, err := assignment(ctx, m.id, target, t)
	if err != nil {
		return TaskUpdate{}, err
	}
	if _, err := mb.Send(ctx, m.id, in); err != nil {
		return TaskUpdate{}, fmt.Errorf("delegate task %s to agent %q: send the TASK_ASSIGNMENT: %w", t.ID, target, err)
	}
	select {
	case out := <-w.done:
		if out.err != nil {
			return TaskUpdate{}, out.err
		}
		if out.update.Status == "failed" {
			return out.update, stageFailed(target, t.ID, out.update)
		}
		return out.update, nil
	case <-ctx.Done():
		return TaskUpdate{}, waitEnded(ctx, fmt.Sprintf("agent %q did not complete task %s", target, t.ID))
	}
}

// assignment is the TASK_ASSIGNMENT of t: its context carries the input,
// the session and the delegation depth; its ttl is what remains of ctx's
// deadline (the broker's default without one).
func assignment(ctx context.Context, from, target string, t Task) (broker.SendInput, error) {
	desc := t.Description
	if desc == "" {
		desc = "Run agent " + target + " on the input in context.input"
	}
	input := t.Input
	if input == nil {
		input = map[string]any{}
	}
	tctx := map[string]any{"input": input,
		"delegation": map[string]any{"depth": t.Depth, "maxDepth": t.MaxDepth, "replyTo": from}}
	if t.SessionID != "" {
		tctx["sessionId"] = t.SessionID
	}
	payload, err := json.Marshal(map[string]any{"taskId": t.ID, "taskRef": "agent_run:" + target, "taskDescription": desc,
		"memoryLogPath": "none", "executionType": "single-step", "context": tctx})
	if err != nil {
		return broker.SendInput{}, core.Errorf(core.CodeInvalidArgument, "the input of the task for agent %q cannot be encoded as JSON: %v", target, err)
	}
	in := broker.SendInput{Receiver: broker.Receiver{AgentID: target}, MessageType: envelope.TaskAssignment,
		Payload: payload, CorrelationID: t.ID, Tags: []string{"agent_run"}}
	if dl, ok := ctx.Deadline(); ok {
		in.TTLSeconds = max(1, int64(math.Ceil(time.Until(dl).Seconds())))
	}
	return in, nil
}

// stageFailed is the error of a task its worker reported failed.
func stageFailed(target, taskID string, u TaskUpdate) error {
	why := u.Notes
	if why == "" && len(u.Error) > 0 {
		why = string(u.Error)
	}
	if why == "" {
		why = "it gave no reason"
	}
	e := core.Errorf(CodeStageFailed, "agent %q reported task %s failed: %s", target, taskID, why).
		WithDetail("taskId", taskID).WithDetail("agentId", target)
	if len(u.Error) > 0 {
		e = e.WithDetail("error", u.Error)
	}
	return e
}

// waitEnded is the error of a wait that ctx ended: TIMEOUT at the
// deadline, ctx's cause otherwise.
func waitEnded(ctx context.Context, what string) error {
	cause := context.Cause(ctx)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(cause, context.DeadlineExceeded) {
		return core.Errorf(core.CodeTimeout, "%s before the call's deadline; retry with a longer timeout (agent.runTimeoutMs) or check that the agent is running", what).
			WithRetryable(true)
	}
	return fmt.Errorf("%s: the call ended first: %w", what, cause)
}

// start opens the mailbox, registers the delegating agent and starts the
// receiving goroutine, each once.
func (m *Messaging) start() (Mailbox, error) {
	mb, err := m.open(true)
	if err != nil {
		return nil, fmt.Errorf("delegate over messaging: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, core.NewError(core.CodeInternal, "delegation over messaging is closed: the server is shutting down")
	}
	if !m.registered {
		_, err := mb.RegisterAgent(context.Background(), m.id, broker.RegisterInput{Type: envelope.Manager,
			Capabilities: []string{DelegatorCapability}})
		if err != nil {
			return nil, fmt.Errorf("delegate over messaging: register the delegating agent %q: %w", m.id, err)
		}
		m.registered = true
	}
	if m.loop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		m.loop, m.done = cancel, make(chan struct{})
		go m.receive(ctx, mb, m.done)
	}
	return mb, nil
}

// receive hands each message for the delegating agent to the run waiting
// for it and acknowledges it, until ctx ends or receiving fails (then the
// waiting runs fail and the next delegation starts a new loop).
func (m *Messaging) receive(ctx context.Context, mb Mailbox, done chan struct{}) {
	defer close(done)
	for {
		out, err := mb.Receive(ctx, m.id, broker.ReceiveInput{WaitMs: broker.MaxWait.Milliseconds(), Max: broker.MaxReceive})
		if err != nil {
			m.mu.Lock()
			m.loop = nil
			ws := make([]*waiter, 0, len(m.waiters))
			for _, w := range m.waiters {
				ws = append(ws, w)
			}
			m.mu.Unlock()
			if ctx.Err() == nil {
				m.log.Warn("agent: receiving task updates failed", "agent", m.id, "err", err)
				for _, w := range ws {
					w.deliver(taskOutcome{err: fmt.Errorf("receive task updates for %q: %w", m.id, err)})
				}
			}
			return
		}
		for _, msg := range out.Messages {
			m.dispatch(msg.Envelope)
			if _, err := mb.Ack(ctx, m.id, broker.AckInput{MessageID: msg.MessageID, Status: "processed"}); err != nil && ctx.Err() == nil {
				m.log.Warn("agent: acknowledging a task update failed", "agent", m.id, "messageId", msg.MessageID, "err", err)
			}
		}
	}
}

// deliver hands o to the run, unless it has one already.
func (w *waiter) deliver(o taskOutcome) {
	select {
	case w.done <- o:
	default:
	}
}

// dispatch hands one received message to the run it concerns: a
// completing TASK_UPDATE from the task's worker, or the broker's
// ERROR_REPORT about the task's assignment.
func (m *Messaging) dispatch(env envelope.Envelope) {
	switch env.MessageType {
	case envelope.TaskUpdate:
		var u TaskUpdate
		if err := json.Unmarshal(env.Payload, &u); err != nil {
			m.log.Warn("agent: a TASK_UPDATE payload cannot be read", "from", env.Sender.AgentID, "err", err)
			return
		}
		if u.Status != "completed" && u.Status != "failed" {
			return
		}
		m.mu.Lock()
		w := m.waiters[u.TaskID]
		m.mu.Unlock()
		if w == nil || w.target != env.Sender.AgentID {
			m.log.Info("agent: a TASK_UPDATE matches no waiting run (late, or not from the task's agent)",
				"from", env.Sender.AgentID, "taskId", u.TaskID)
			return
		}
		w.deliver(taskOutcome{update: u})
	case envelope.ErrorReport:
		if env.Sender.AgentID != envelope.SystemAgentID {
			return
		}
		m.mu.Lock()
		w := m.waiters[env.CorrelationID]
		m.mu.Unlock()
		if w == nil {
			return
		}
		var r struct {
			ErrorCode    string `json:"errorCode"`
			ErrorMessage string `json:"errorMessage"`
		}
		_ = json.Unmarshal(env.Payload, &r) // the broker wrote it
		w.deliver(taskOutcome{err: core.Errorf(CodeStageFailed, "agent %q did not take task %s: %s", w.target, env.CorrelationID, r.ErrorMessage).
			WithDetail("taskId", env.CorrelationID).WithDetail("deliveryError", r.ErrorCode)})
	}
}

// Close stops the receiving goroutine and waits for it; runs still
// waiting end with their contexts. Delegate fails afterwards.
func (m *Messaging) Close() {
	m.mu.Lock()
	m.closed = true
	stop, done := m.loop, m.done
	m.loop = nil
	m.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}
