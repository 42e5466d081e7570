package mcp

import (
	"context"
	"strconv"
	"time"

	"github.com/mcprt/mcprt/core"
)

// The client log rate limit of each session: a token bucket that holds
// ClientLogBurst messages and refills at ClientLogRate messages per
// second. A chatty handler cannot flood the client: what passes the rate
// is dropped and counted, and the count is reported once a message may be
// sent again.
const (
	ClientLogRate  = 10
	ClientLogBurst = 50
)

// clientLogSource is the logger name of the messages the runtime itself
// sends to the client (the dropped-messages report).
const clientLogSource = "mcprt"

// logInterval is the refill time of one message.
const logInterval = time.Second / ClientLogRate

// logBucket is the token bucket, kept as credit time so that the
// arithmetic is exact: a message costs logInterval of credit, credit grows
// with the clock up to ClientLogBurst messages' worth. Its zero value is
// a full bucket not yet started. Guarded by clientLog.mu.
type logBucket struct {
	started bool
	credit  time.Duration
	last    time.Time
	dropped uint64     // messages dropped and not yet reported
	timer   core.Timer // armed while dropped > 0, for when one message may pass
}

// refill adds the credit earned since the last refill.
func (b *logBucket) refill(now time.Time) {
	const full = ClientLogBurst * logInterval
	if !b.started {
		b.started, b.credit, b.last = true, full, now
		return
	}
	if d := now.Sub(b.last); d > 0 {
		b.credit = min(full, b.credit+d)
	}
	b.last = now
}

// take spends one message's credit when there is enough.
func (b *logBucket) take() bool {
	if b.credit < logInterval {
		return false
	}
	b.credit -= logInterval
	return true
}

// admit decides about one message: report is a count of dropped messages
// to tell the client about first (it took a token of its own), pass says
// whether the message itself may be sent. The first drop arms a timer on
// clock that calls due once a message may pass again.
func (b *logBucket) admit(clock core.Clock, due func()) (report uint64, pass bool) {
	b.refill(clock.Now())
	if b.dropped > 0 && b.take() {
		report, b.dropped = b.dropped, 0
		if b.timer != nil {
			b.timer.Stop()
			b.timer = nil
		}
	}
	if b.take() {
		return report, true
	}
	b.dropped++
	if b.timer == nil {
		b.timer = clock.AfterFunc(logInterval-b.credit, due)
	}
	return report, false
}

// due is the timer's turn: when a message may pass, it returns the count
// of dropped messages to report (taking that message's token); otherwise
// it re-arms the timer and returns 0.
func (b *logBucket) due(clock core.Clock, again func()) uint64 {
	b.timer = nil
	if b.dropped == 0 {
		return 0
	}
	b.refill(clock.Now())
	if !b.take() {
		b.timer = clock.AfterFunc(logInterval-b.credit, again)
		return 0
	}
	n := b.dropped
	b.dropped = 0
	return n
}

// reportDroppedLogs runs on the bucket's timer: it tells the client how
// many messages were dropped, once the rate allows one more.
func (sess *Session) reportDroppedLogs() {
	cl := &sess.clientLog
	cl.mu.Lock()
	n := cl.lim.due(sess.srv.clock, sess.reportDroppedLogs)
	cl.mu.Unlock()
	if n > 0 {
		sess.sendDroppedLogs(n)
	}
}

// sendDroppedLogs sends the report of n dropped messages: at warning, or
// at the session's level when that is more severe, so that the client
// hears of it whatever level it asked for.
func (sess *Session) sendDroppedLogs(n uint64) {
	if sess.State() != StateRunning {
		return
	}
	level := logLevels[max(LogWarning.severity(), sess.clientLog.threshold())]
	msg := strconv.FormatUint(n, 10) + " log messages were dropped: a session sends at most " +
		strconv.Itoa(ClientLogRate) + " per second (bursts of " + strconv.Itoa(ClientLogBurst) + ")"
	if n == 1 {
		msg = "1 log message was dropped: a session sends at most " +
			strconv.Itoa(ClientLogRate) + " per second (bursts of " + strconv.Itoa(ClientLogBurst) + ")"
	}
	err := sess.Notify(context.Background(), NotifyMessage, logMessage{Level: level, Logger: clientLogSource,
		Data: map[string]any{"message": msg, "dropped": n}})
	if err != nil {
		sess.log.Debug("could not report dropped client log messages", "dropped", n, "error", err.Error())
	}
	sess.srv.engineLog.Warn("client log messages dropped by the rate limit",
		"connectionCorrelationId", sess.cid, "dropped", n)
}
