package broker

import (
	"log/slog"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
)

// Defaults and bounds.
const (
	// MaxTTLSeconds bounds a message's ttlSeconds (10 years): a larger
	// value is refused, never wrapped into a time in the past.
	MaxTTLSeconds       = 10 * 365 * 24 * 3600
	DefaultTTL          = 24 * time.Hour
	DefaultMaxBackoff   = time.Minute
	DefaultJitter       = 0.2
	DefaultTickInterval = 100 * time.Millisecond
	// MaxWait bounds ReceiveInput.WaitMs.
	MaxWait = time.Minute
	// DefaultReceive and MaxReceive bound ReceiveInput.Max.
	DefaultReceive = 10
	MaxReceive     = 100
	// DefaultDeadLetters and MaxDeadLetters bound DeadLettersInput.Limit.
	DefaultDeadLetters = 50
	MaxDeadLetters     = 500
	// maxBroadcast bounds how many receivers one send may reach.
	maxBroadcast = 1024
)

// Options configures a Broker. The zero value (with DataDir or Store set)
// is ready to use: every zero field takes its default. Open copies it.
type Options struct {
	// DataDir is the journal directory (the configuration's aacp.dataDir).
	// Ignored when Store is set.
	DataDir string
	// Store, when set, is used instead of a file journal in DataDir (for
	// instance journal.NewMemory()); the broker does not close it.
	Store journal.Store
	// Fsync is the file journal's durability policy (aacp.fsync):
	// always (default), batch or never.
	Fsync journal.FsyncPolicy
	// MaxSegmentBytes is the channel segment size before rotation; zero
	// means journal.DefaultMaxSegmentBytes.
	MaxSegmentBytes int64
	// DefaultTTL is the time to live of a message sent without
	// ttlSeconds (aacp.defaultTtlMs); zero means DefaultTTL (24h).
	DefaultTTL time.Duration
	// Policies overrides the acknowledgement timeouts and retry budgets
	// of DefaultPolicies, by message type (CustomKey for custom types).
	Policies map[string]RetryPolicy
	// MaxBackoff caps a retry's wait; zero means DefaultMaxBackoff.
	MaxBackoff time.Duration
	// Jitter is the relative spread of retry waits, in [0, 1]; zero means
	// DefaultJitter, negative means none.
	Jitter float64
	// Rand returns numbers in [0, 1) for the jitter; nil means
	// math/rand/v2.
	Rand func() float64
	// MaxMessageBytes bounds one encoded envelope; zero means 1 MiB.
	MaxMessageBytes int
	// Clock tells the time of timestamps, deadlines, retries and
	// expiries; nil means the system clock.
	Clock core.Clock
	// IDs makes message and request ids; nil means random UUIDs.
	IDs core.IDGenerator
	// After returns a channel that receives after d; it bounds Receive's
	// wait. Nil means time.After.
	After func(d time.Duration) <-chan time.Time
	// Manual, when true, starts no goroutine: nothing reads inboxes,
	// retries, syncs or compacts unless the caller calls Pump, RetryDue,
	// PurgeExpired and Compact (Receive still reads its own inbox). Tests
	// use it with a manual clock. Otherwise one goroutine per local agent
	// follows its inbox and one maintenance goroutine calls RetryDue every
	// TickInterval (real time), syncs the journal (batch; under always,
	// the ledgers), compacts and purges.
	Manual bool
	// TickInterval is the maintenance period; zero means 100ms.
	TickInterval time.Duration
	// PollInterval is passed to the file journal (see
	// journal.FileOptions).
	PollInterval time.Duration
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// OnInbox, when set, is called with a hosted agent's id after new
	// messages were queued for it (a first transmission, or a retry of
	// one handed out and not answered), once per read of its inbox that
	// queued any. It runs on the goroutine that read the inbox (the
	// agent's inbox goroutine, or a Receive, Pump or RegisterAgent call)
	// with no broker lock held; it must return quickly and must not call
	// the broker for the same agent synchronously in a way that waits for
	// the inbox (Inbox is fine).
	OnInbox func(agentID string)
	// OnAppend, when set, is called with the envelopes this broker has
	// just appended to the journal (seq set): transmissions, ACKs, NACKs,
	// taken notices, reports and notices. It runs synchronously on the
	// appending path, possibly with broker locks held, so it must be quick
	// and must not call the broker. tools/messaging keeps the message index
	// with it.
	OnAppend func(envs []*envelope.Envelope)
}
