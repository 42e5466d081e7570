package messaging

import "time"

// Config is the "aacp" section of the mcprt binary's configuration: the
// data directory, the default agent, the journal's fsync policy, the
// message TTL and the delivery timeouts. Its tags are what package config
// loads and documents; DefaultConfig holds the defaults.
type Config struct {
	DefaultTTL time.Duration `json:"defaultTtlMs" help:"Default time-to-live of agent messages, in milliseconds."`
	DataDir    string        `json:"dataDir" config:"nonempty" help:"Directory of the agent messaging data (journals, ledgers); relative to the working directory. Sessions meet only when they share one directory: give them the same absolute path."`
	// AgentID is the agent the aacp_* tools act for when a call names
	// none; "" derives one from the host name and the process id.
	AgentID string `json:"agentId" help:"Agent id the aacp_* tools act for by default (letters, digits, '.', '_', '-'; at most 64 bytes); empty derives one from the host name and process id, which changes at every start."`
	// AgentType is the type that agent is registered with on first use.
	AgentType string `json:"agentType" config:"enum=Manager|Implementation|AdHoc" help:"Type the default agent is registered with on first use of an aacp_* tool."`
	// Fsync is the journal's durability policy.
	Fsync string `json:"fsync" config:"enum=always|batch|never" help:"When agent messages reach stable storage: always (before a send returns), batch (every maintenance tick) or never (left to the operating system)."`
	// AckTimeout, when not 0, replaces the per-type acknowledgement
	// timeouts (and then MaxRetries and RetryBase the retry budgets).
	AckTimeout time.Duration `json:"ackTimeoutMs" config:"min=0" help:"Acknowledgement timeout of every message type, in milliseconds, counted from when the receiver takes the message; 0 keeps the protocol's per-type table (TASK_ASSIGNMENT 30s, TASK_UPDATE 15s, ...)."`
	MaxRetries int           `json:"maxRetries" config:"min=0,max=100" help:"Retry budget of a NACK with canRetry or an unwritable channel when aacp.ackTimeoutMs is set; ack timeouts re-offer until the ttl."`
	RetryBase  time.Duration `json:"retryBaseMs" help:"Wait before the first retry when aacp.ackTimeoutMs is set, in milliseconds; each later retry waits twice as long, with jitter."`
	// IdleAfter and StaleAfter grade an agent's presence by the time
	// since its last tool call or heartbeat.
	IdleAfter  time.Duration `json:"idleAfterMs" config:"min=1" help:"An agent whose session is open but that made no tool call or heartbeat for this long shows idle, in milliseconds."`
	StaleAfter time.Duration `json:"staleAfterMs" config:"min=1" help:"An agent silent for this long shows stale (its session open) or is retired from the registry (its session gone), in milliseconds."`
}

// DefaultConfig returns the section's defaults: messages live a day
// under .mcprt, sent by an AdHoc agent, durable before a send returns.
func DefaultConfig() Config {
	return Config{DefaultTTL: 24 * time.Hour, DataDir: ".mcprt", AgentType: "AdHoc", Fsync: "always",
		MaxRetries: 3, RetryBase: time.Second, IdleAfter: 2 * time.Minute, StaleAfter: 15 * time.Minute}
}
