package task

import (
	"context"
	"time"

	"github.com/mcprt/mcprt/core"
)

// Status is where a task stands.
type Status string

// The statuses. A task is open until claimed; claimed, in_progress and
// blocked tasks have a holder (Assignee); done and failed are final.
const (
	StatusOpen       Status = "open"
	StatusClaimed    Status = "claimed"
	StatusInProgress Status = "in_progress"
	StatusBlocked    Status = "blocked"
	StatusDone       Status = "done"
	StatusFailed     Status = "failed"
)

// Held reports whether a task in s has a holder.
func (s Status) Held() bool { return s == StatusClaimed || s == StatusInProgress || s == StatusBlocked }

// Final reports whether s is done or failed.
func (s Status) Final() bool { return s == StatusDone || s == StatusFailed }

// The domain error codes of the work queue.
const (
	// CodeNotFound: no task has the id.
	CodeNotFound core.Code = "TASK_NOT_FOUND"
	// CodeNotClaimable: the task is held, final, meant for another agent,
	// or waits for dependencies that are not done.
	CodeNotClaimable core.Code = "TASK_NOT_CLAIMABLE"
	// CodeNotHolder: only the task's holder may do this.
	CodeNotHolder core.Code = "TASK_NOT_HOLDER"
	// CodeInvalidTransition: the task's status does not allow it.
	CodeInvalidTransition core.Code = "TASK_INVALID_TRANSITION"
	// CodeHolderLive: task_steal of a task whose holder is online or idle.
	CodeHolderLive core.Code = "TASK_HOLDER_LIVE"
	// CodeNoIdentity: the server cannot tell which agent is calling.
	CodeNoIdentity core.Code = "AGENT_IDENTITY_UNAVAILABLE"
)

// Limits of the work queue; a request over one fails and changes nothing.
const (
	MaxTitleBytes       = 200
	MaxDescriptionBytes = 16 * 1024
	MaxNoteBytes        = 4096
	MaxResultBytes      = 16 * 1024
	MaxLabels           = 16
	MaxLabelBytes       = 64
	MaxDependsOn        = 32
	MaxAgentIDBytes     = 256
	MinPriority         = 1
	MaxPriority         = 5
	DefaultPriority     = 3
	// DefaultListLimit and MaxListLimit bound List.
	DefaultListLimit, MaxListLimit = 50, 500
	// MaxHistory bounds the events Get returns (the newest are kept).
	MaxHistory = 200
)

// Task is one unit of work in the queue.
type Task struct {
	ID          string
	Title       string
	Description string
	Priority    int // 1 (low) to 5 (urgent)
	Labels      []string
	DependsOn   []string
	Poster      string
	// Assignee is the holder of a held task; on an open task, the only
	// agent that may claim it ("" for anyone).
	Assignee  string
	Status    Status
	Note      string // the latest note
	Result    string // set when done or failed
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Event is one transition of a task: the durable history.
type Event struct {
	TaskID  string
	At      time.Time
	AgentID string // who did it
	Action  string // posted, claimed, updated, released, handed_off, stolen, auto_released
	From    Status
	To      Status
	// Assignee is the holder (or designated claimant) after the event.
	Assignee string
	Note     string
}

// Filter selects tasks for List.
type Filter struct {
	Status   Status // "" for any
	Assignee string
	Label    string
	Limit    int
}

// Store keeps tasks and their history. Implementations make every method
// atomic across processes (the SQLite store: one BEGIN IMMEDIATE
// transaction), so two agents never both claim one task.
type Store interface {
	// Create adds t with its first event; every id in t.DependsOn must
	// name an existing task (TASK_NOT_FOUND otherwise).
	Create(ctx context.Context, t Task, ev Event) error
	// Mutate loads the task, lets fn change it given the statuses of its
	// dependencies, and writes it with the event fn returns — or nothing
	// when fn fails.
	Mutate(ctx context.Context, id string, fn func(t *Task, deps map[string]Status) (Event, error)) (Task, error)
	// ClaimNext claims for agentID the open task with the highest
	// priority, then the oldest, that agentID may claim, whose
	// dependencies are done and which has every label of labels. ok is
	// false when there is none.
	ClaimNext(ctx context.Context, agentID string, labels []string, now time.Time) (t Task, ok bool, err error)
	// Get returns the task and its newest MaxHistory events, oldest first.
	Get(ctx context.Context, id string) (Task, []Event, error)
	// List returns the tasks of f by priority then age, and how many match.
	List(ctx context.Context, f Filter) ([]Task, int, error)
	// Holders returns the distinct holders of held tasks.
	Holders(ctx context.Context) ([]string, error)
	// ReleaseHolder reopens every task agentID holds, recording by and
	// note, and returns them as they were.
	ReleaseHolder(ctx context.Context, agentID, by, note string, now time.Time) ([]Task, error)
}
