package mcp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
)

// Client logging: the MCP logging utility. Handlers send messages to the
// client (notifications/message) through Session.Log or
// CallToolRequest.Log; the client chooses the least severe level it wants
// with logging/setLevel. The server's own logs (stderr) are never
// forwarded: the client sees only what handlers send.

// Method and notification names of client logging.
const (
	MethodLoggingSetLevel = "logging/setLevel"
	NotifyMessage         = "notifications/message"
)

// LogLevel is the severity of a message to the client, named as syslog
// (RFC 5424) names them, from the least severe (LogDebug) to the most
// (LogEmergency).
type LogLevel string

// The logging levels, least severe first.
const (
	LogDebug     LogLevel = "debug"
	LogInfo      LogLevel = "info"
	LogNotice    LogLevel = "notice"
	LogWarning   LogLevel = "warning"
	LogError     LogLevel = "error"
	LogCritical  LogLevel = "critical"
	LogAlert     LogLevel = "alert"
	LogEmergency LogLevel = "emergency"
)

// logLevels are the levels by severity: index 0 is the least severe.
var logLevels = [...]LogLevel{LogDebug, LogInfo, LogNotice, LogWarning, LogError, LogCritical, LogAlert, LogEmergency}

// DefaultClientLogLevel is the level a session sends at before the client
// sends logging/setLevel: info and above. A client that wants debug
// messages asks for them; one that wants fewer raises the level.
const DefaultClientLogLevel = LogInfo

// severity returns the level's rank (0 for debug) or -1 for a string that
// is no level.
func (l LogLevel) severity() int {
	for i, x := range logLevels {
		if x == l {
			return i
		}
	}
	return -1
}

// Valid reports whether l is one of the eight levels.
func (l LogLevel) Valid() bool { return l.severity() >= 0 }

// levelNames lists the levels for error messages.
func levelNames() string {
	names := make([]string, len(logLevels))
	for i, l := range logLevels {
		names[i] = string(l)
	}
	return strings.Join(names, ", ")
}

// ErrLogDropped is returned by Session.Log when the session's rate limit
// dropped the message (see ClientLogRate). The client is told how many
// were dropped once the rate allows; handlers may ignore this error.
var ErrLogDropped = errors.New("mcp: log message dropped: the session's client log rate limit was exceeded")

// errNotRunning is returned by what must not reach the client before the
// session runs (after notifications/initialized).
var errNotRunning = core.NewError(core.CodeNotInitialized,
	"the session is not running yet: nothing is sent to the client before it sends notifications/initialized")

// logMessage is the params of notifications/message.
type logMessage struct {
	Level  LogLevel `json:"level"`
	Logger string   `json:"logger,omitempty"`
	Data   any      `json:"data"`
}

// clientLog is a session's client logging state. Its zero value is ready:
// no level set yet (DefaultClientLogLevel applies) and a full bucket.
type clientLog struct {
	level atomic.Int32 // 1 + the severity set by logging/setLevel; 0: not set

	mu  sync.Mutex     // guards the fields below
	red *core.Redactor // built on first use from logging.redactKeys
	lim logBucket
}

// threshold is the severity below which messages are not sent.
func (cl *clientLog) threshold() int {
	if v := cl.level.Load(); v > 0 {
		return int(v) - 1
	}
	return DefaultClientLogLevel.severity()
}

// ClientLogLevel returns the least severe level the session sends to the
// client: the one the client set with logging/setLevel, else
// DefaultClientLogLevel.
func (sess *Session) ClientLogLevel() LogLevel { return logLevels[sess.clientLog.threshold()] }

// setLogLevel handles logging/setLevel: it sets the session's level and
// answers {}. A level that is not one of the eight is -32602.
func (sess *Session) setLogLevel(_ context.Context, req *jsonrpc.Request) (any, error) {
	if len(req.Params) > 0 && !isObject(req.Params) {
		return nil, invalidParams("logging/setLevel params must be an object {level}")
	}
	raw := jsontext.Member(req.Params, "level")
	s, ok := jsontext.String(raw)
	if !ok {
		return nil, invalidParams("logging/setLevel needs params.level, one of " + levelNames())
	}
	sev := LogLevel(s).severity()
	if sev < 0 {
		return nil, invalidParams("unknown logging level " + jsontext.Quote(jsontext.Clip(s, jsontext.MaxEcho)) +
			"; allowed: " + levelNames())
	}
	sess.clientLog.level.Store(int32(sev) + 1)
	sess.log.Debug("client log level set", "level", s)
	return emptyResult, nil
}

// Log sends a message to the client (notifications/message) when level is
// at or above the session's level (ClientLogLevel). logger names the
// source ("" for none); data is any JSON-encodable value, typically a
// string or an object.
//
// The message goes through the same redaction and sanitization as the
// server's stderr logs: values under keys listed in logging.redactKeys
// become "[REDACTED]" at any depth, and control characters in strings
// (data and logger) become \u00xx escapes. data itself is not modified.
//
// Messages are rate limited per session (ClientLogRate per second,
// bursts of ClientLogBurst): a message over the rate is dropped and Log
// returns ErrLogDropped; once the rate allows, the client gets one
// message at level warning (or the session's level, when higher) saying
// how many were dropped.
//
// Log returns nil for a message below the session's level, an *core.Error
// for a level that is not one of the eight or a session that is not
// running yet (nothing is sent before notifications/initialized), and
// ErrSessionClosed once the session is closed. When ctx is a request
// handler's context the message belongs to that request (see Notify).
func (sess *Session) Log(ctx context.Context, level LogLevel, logger string, data any) error {
	sev := level.severity()
	if sev < 0 {
		return core.NewError(core.CodeInvalidArgument, "unknown logging level "+
			jsontext.Quote(jsontext.Clip(string(level), jsontext.MaxEcho))+"; allowed: "+levelNames())
	}
	threshold := sess.clientLog.threshold()
	if r := statelessOf(ctx); r != nil {
		if r.logLevel < 0 { // the client asked for no log messages
			return nil
		}
		threshold = r.logLevel
	} else {
		switch sess.State() {
		case StateRunning:
		case StateClosed:
			return ErrSessionClosed
		default:
			return errNotRunning
		}
	}
	if sev < threshold {
		return nil
	}
	cl := &sess.clientLog
	cl.mu.Lock()
	if cl.red == nil {
		cl.red = core.NewRedactor(sess.srv.opts.RedactKeys)
	}
	red := cl.red
	report, pass := cl.lim.admit(sess.srv.clock, sess.reportDroppedLogs)
	cl.mu.Unlock()
	if report > 0 {
		sess.sendDroppedLogs(report)
	}
	if !pass {
		return ErrLogDropped
	}
	return sess.Notify(ctx, NotifyMessage, logMessage{Level: level, Logger: core.Sanitize(logger), Data: red.Redact(data)})
}

// Log sends a message to the client from a tool handler: Session.Log with
// the tool's name as the logger, belonging to this call's request.
func (r *CallToolRequest) Log(ctx context.Context, level LogLevel, data any) error {
	return r.Session.Log(ctx, level, r.Name, data)
}
