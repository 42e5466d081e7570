package broker

import (
	"math"
	"strings"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
)

// RetryPolicy is the acknowledgement timeout and retry budget of one
// message type.
type RetryPolicy struct {
	// AckTimeout is how long a transmission waits for an ACK or NACK
	// once its receiver took it (a message waiting in an inbox has no
	// deadline but its ttl); then it is offered again. Zero: the type is
	// fire-and-forget (never retried, DELIVERED once written).
	AckTimeout time.Duration
	// MaxRetries is how many retransmissions a NACK with canRetry, or a
	// channel that cannot be written, may cause before the delivery
	// fails. Ack timeouts do not count: they re-offer until the ttl.
	MaxRetries int
	// BaseBackoff is the wait before the first retry; each later retry
	// waits twice as long as the one before (up to Options.MaxBackoff),
	// give or take the jitter.
	BaseBackoff time.Duration
}

// CustomKey is the Options.Policies key of every CUSTOM_* type without a
// policy of its own.
const CustomKey = "CUSTOM_*"

// DefaultPolicies returns the protocol's table: TASK_ASSIGNMENT 30s, 3
// retries from 1s; TASK_UPDATE 15s, 2 from 1s; STATE_SYNC 10s, 2 from 1s;
// ERROR_REPORT 30s, 3 from 1s; HANDOFF_REQUEST 60s, 2 from 2s; ACK and
// NACK fire-and-forget; custom types as TASK_ASSIGNMENT.
func DefaultPolicies() map[string]RetryPolicy {
	return map[string]RetryPolicy{
		envelope.TaskAssignment: {30 * time.Second, 3, time.Second},
		envelope.TaskUpdate:     {15 * time.Second, 2, time.Second},
		envelope.StateSync:      {10 * time.Second, 2, time.Second},
		envelope.ErrorReport:    {30 * time.Second, 3, time.Second},
		envelope.HandoffRequest: {60 * time.Second, 2, 2 * time.Second},
		envelope.Ack:            {},
		envelope.Nack:           {},
		CustomKey:               {30 * time.Second, 3, time.Second},
	}
}

// policyFor looks a type up in the broker's table.
func (b *Broker) policyFor(messageType string) RetryPolicy {
	if p, ok := b.policies[messageType]; ok {
		return p
	}
	if strings.HasPrefix(messageType, envelope.CustomPrefix) {
		return b.policies[CustomKey]
	}
	return RetryPolicy{AckTimeout: 30 * time.Second, MaxRetries: 3, BaseBackoff: time.Second}
}

// Backoff returns the wait before retry number attempt (0 for the first
// retry): base·2^attempt capped at maxWait, then scaled by a factor drawn
// uniformly from [1−jitter, 1+jitter) using r, a number in [0, 1).
func Backoff(base, maxWait time.Duration, attempt int, jitter, r float64) time.Duration {
	if base <= 0 {
		return 0
	}
	d := float64(base) * math.Pow(2, float64(max(attempt, 0)))
	if maxWait > 0 && d > float64(maxWait) {
		d = float64(maxWait)
	}
	jitter = min(max(jitter, 0), 1)
	d *= 1 + jitter*(2*r-1)
	return time.Duration(d)
}
