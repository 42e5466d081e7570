package console

import (
	"context"
	"time"
)

// The data other parts of mcprt provide through small interfaces: the
// console renders a page when its source is set and says honestly that
// the view is not available in this build when it is nil.

// Presence tells an agent's presence: its state (online, idle, stale,
// offline or unknown) and when it was last seen (zero when not known).
// The messaging service (tools/messaging.Service) implements it.
type Presence interface {
	Presence(ctx context.Context, agentID string) (state string, lastSeen time.Time, err error)
}

// Reservation is a held claim on a path (a file or a glob) by an agent.
type Reservation struct {
	ID        string
	AgentID   string
	Path      string
	Exclusive bool
	Reason    string
	CreatedAt time.Time
	// ExpiresAt is when the reservation lapses (zero: never).
	ExpiresAt time.Time
	// Conflicts are the ids of other active reservations that overlap it.
	Conflicts []string
}

// Reservations is the source of the reservations view.
type Reservations interface {
	// Active returns the reservations in force now, at most limit.
	Active(ctx context.Context, limit int) ([]Reservation, error)
	// ForceRelease ends the reservation id on the person's behalf; reason
	// is recorded with the release. An unknown id is an error.
	ForceRelease(ctx context.Context, id, reason string) error
}

// Task is one item of the work queue.
type Task struct {
	ID       string
	Title    string
	Status   string // the board's column, e.g. open, claimed, done, failed
	Assignee string // the agent that claimed it, "" when none
	// DependsOn are the ids of the tasks it waits for.
	DependsOn []string
	// Thread is the message thread about it, "" when none.
	Thread    string
	UpdatedAt time.Time
}

// Tasks is the source of the task board.
type Tasks interface {
	// List returns at most limit tasks, all statuses, most recently
	// updated first.
	List(ctx context.Context, limit int) ([]Task, error)
}

// MessageHit is one result of a message search.
type MessageHit struct {
	MessageID string
	Sender    string
	Receiver  string
	Subject   string
	Thread    string
	Snippet   string
	SentAt    time.Time
}

// MessageSearch is the full-text search over messages (subjects,
// threads, bodies).
type MessageSearch interface {
	// Search returns at most limit messages matching query, best first.
	Search(ctx context.Context, query string, limit int) ([]MessageHit, error)
}

// Health reports the serving process's runtime figures, shown on the
// traces page; nil in mcprt ui, which serves no tools.
type Health interface {
	// Figures returns name → value pairs in display order.
	Figures() [][2]string
}
