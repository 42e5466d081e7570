package journal

import (
	"context"
	"errors"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
)

// ErrClaimed is wrapped by the error of Claim when another holder (a
// process, or another Store in this one) has the agent.
var ErrClaimed = errors.New("the agent is claimed by another holder")

// ErrClosed is wrapped by the errors of a closed store.
var ErrClosed = errors.New("the journal is closed")

// Store is the persistence of agent-to-agent messaging: channels, ledgers,
// the agent registry and the dead-letter queue. All methods are safe for
// concurrent use; the file implementation is also safe for several
// processes sharing one directory.
type Store interface {
	// Append adds env to the channel env.Sender.AgentID →
	// env.Receiver.AgentID, setting env.Seq to the channel's next sequence
	// number (1, 2, 3, … without gaps). When it returns without error the
	// line is written and, under FsyncAlways, on stable storage.
	Append(ctx context.Context, env *envelope.Envelope) (seq uint64, err error)
	// LastSequence is the highest seq appended to the channel so far, 0
	// for a new channel.
	LastSequence(ctx context.Context, sender, receiver string) (uint64, error)
	// Inbox returns a reader of every channel into receiver. There should
	// be one Inbox per receiver at a time (its holder, see Claim).
	Inbox(receiver string) (Inbox, error)
	// CompactChannel removes stored transmissions of the channel whose
	// seq is below `below` where it can do so by whole segments, and
	// returns how many segments it removed. Only the channel's receiver
	// knows what it has fully processed, so only it calls this.
	CompactChannel(ctx context.Context, sender, receiver string, below uint64) (int, error)

	// Ledger returns the ledger of agentID, loading it on first use; later
	// calls return the same Ledger. Only the agent's claim holder uses it.
	Ledger(agentID string) (Ledger, error)

	// Claim makes this store the only holder of agentID until release is
	// called or the process ends (a crash releases it too). A claim held
	// elsewhere is an error wrapping ErrClaimed.
	Claim(agentID string) (release func() error, err error)
	// PutAgent adds or replaces a registry entry; a record with Removed
	// set deletes the agent.
	PutAgent(ctx context.Context, rec AgentRecord) error
	// Agents lists the registered agents, sorted by id, with Online set.
	Agents(ctx context.Context) ([]AgentRecord, error)

	// AddDeadLetter adds or updates (by messageId) a dead-letter entry.
	AddDeadLetter(ctx context.Context, d DeadLetter) error
	// DeadLetters lists the entries, oldest first, latest version of each.
	DeadLetters(ctx context.Context) ([]DeadLetter, error)
	// PurgeExpired deletes dead letters whose ExpiresAt is at or before
	// now and returns how many it deleted. (Ledgers purge their own.)
	PurgeExpired(ctx context.Context, now time.Time) (int, error)

	// Sync forces everything written so far to stable storage, whatever
	// the policy (a no-op in memory).
	Sync(ctx context.Context) error
	// Close releases every claim and file. Later calls fail with an error
	// wrapping ErrClosed.
	Close() error
}

// Appender is a Store that appends with options (FileStore and
// MemoryStore do).
type Appender interface {
	// AppendWith is Append with opts.
	AppendWith(ctx context.Context, env *envelope.Envelope, opts AppendOptions) (seq uint64, err error)
}

// AppendOptions are the options of Appender.AppendWith.
type AppendOptions struct {
	// Encoded, when set, is env's encoding with Seq 0, as
	// envelope.AppendJSON (or Validator.Encode) makes it: the store writes
	// it, with the seq spliced in, rather than encoding env again.
	Encoded []byte
	// Before, when set, is called with the seq the transmission gets,
	// while the channel is locked (no other writer, in any process, can
	// append meanwhile) and before the line is written; an error from it
	// cancels the append (nothing is written) and is returned. A sender
	// records the transmission, seq included, in its ledger here, in one
	// write, ahead of the channel line. It must not append to a channel
	// nor wait for an fsync (the channel's lock is held).
	Before func(seq uint64) error
}

// AppendWith appends env to s with opts: through s's own AppendWith when
// s is an Appender. A store that is not (one that numbers a transmission
// only as it stores it, like the NATS journal) gets opts.Before called
// first with seq 0, then Append: the caller records the seq afterwards.
func AppendWith(ctx context.Context, s Store, env *envelope.Envelope, opts AppendOptions) (uint64, error) {
	if ap, ok := s.(Appender); ok {
		return ap.AppendWith(ctx, env, opts)
	}
	if opts.Before != nil {
		if err := opts.Before(0); err != nil {
			return 0, err
		}
	}
	return s.Append(ctx, env)
}

// Inbox reads the channels into one receiver.
type Inbox interface {
	// Read calls fn for each complete transmission appended to any
	// channel into the receiver since the previous Read (on the first
	// call: every stored one), in seq order within each channel. A
	// transmission is passed once per Inbox, unless fn returns an error:
	// then Read stops and returns it, and the same transmission comes
	// again on the next Read. Read must not be called concurrently with
	// itself.
	Read(ctx context.Context, fn func(env *envelope.Envelope) error) error
	// Changed receives a value (coalesced) when a channel into the
	// receiver may have new data: a file notification, an append by this
	// process, or a poll tick.
	Changed() <-chan struct{}
	// Close stops the notifications. It must not be called while a Read
	// is running.
	Close() error
}

// BufferedLedgers is implemented by a Store whose Ledger.Put may return
// before the records have left the process (NATS: one publish per ledger
// is in flight and later records wait for the next). The file ledger
// writes before Put returns, so a killed process loses nothing Put; with
// a store that reports true here a sender waits for Ledger.Sync before a
// send returns, so that the same holds.
type BufferedLedgers interface {
	BufferedLedgers() bool
}

// Ledger is one agent's record of its requests (as a sender: requests,
// transmissions, state transitions, outcomes) and of its answers (as a
// receiver: inbound records). The seed's persistence adapter maps onto it:
// putRequestRecord/putMessageRecord are Put, markCompleted/markFailed are
// MarkCompleted/MarkFailed, getUnacknowledgedMessages is Unacknowledged,
// listPendingRequests is PendingRequests, listMessagesInState is
// MessagesInState, purgeExpired is PurgeExpired.
type Ledger interface {
	// Put appends records in one write; they are visible to the queries
	// at once and durable after the next Sync.
	Put(ctx context.Context, recs ...Record) error
	// Sync waits until everything Put so far is durable as the store's
	// policy promises: under FsyncAlways on stable storage (concurrent
	// callers share one fsync); otherwise it returns at once.
	Sync(ctx context.Context) error

	// Request returns a request by id.
	Request(requestID string) (RequestRecord, bool)
	// Message returns the latest version of a transmission by messageId.
	Message(messageID string) (MessageRecord, bool)
	// Delivery returns the latest transmission of a request to receiver.
	Delivery(requestID, receiver string) (MessageRecord, bool)
	// History returns every version of every transmission of a request,
	// in the order they were Put.
	History(requestID string) []MessageRecord
	// Inbound returns the receiver-side answer to sender's request.
	Inbound(sender, requestID string) (InboundRecord, bool)
	// Unacknowledged returns the current transmissions to receiver ("" for
	// all receivers) that are PENDING or IN_TRANSIT, oldest first.
	Unacknowledged(receiver string) []MessageRecord
	// PendingRequests returns the requests whose outcome is UNKNOWN and
	// that were created before olderThan (zero: all), oldest first.
	PendingRequests(olderThan time.Time) []RequestRecord
	// MessagesInState returns the current transmissions in state changed
	// before olderThan (zero: all), oldest first.
	MessagesInState(state State, olderThan time.Time) []MessageRecord

	// MarkCompleted records a request's outcome.
	MarkCompleted(ctx context.Context, requestID string, outcome Outcome, completionRef string) error
	// MarkFailed records that a request failed with err.
	MarkFailed(ctx context.Context, requestID string, err *core.Error) error
	// PurgeExpired deletes requests (with their transmissions) and
	// inbound records whose expiry is at or before now, rewriting the
	// ledger file without them, and returns how many records it deleted.
	PurgeExpired(ctx context.Context, now time.Time) (int, error)
}
