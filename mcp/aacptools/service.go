package aacptools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// Options configures a Service.
type Options struct {
	// Config is the configuration's aacp section: the data directory, the
	// default agent, the journal's fsync policy, the message TTL and the
	// delivery timeouts.
	Config core.AACPConfig
	// Logger receives the broker's diagnostics; nil discards them.
	Logger *slog.Logger
	// Open opens the broker on first use; nil means broker.Open. Tests
	// use it to supply a clock or an in-memory journal.
	Open func(broker.Options) (*broker.Broker, error)
	// Clock is the broker's clock; nil means the system clock.
	Clock core.Clock
}

// Service holds the broker behind the aacp_* tools: it opens it on first
// use, registers the process's own agent the first time a tool acts for
// it, and closes it with Close. All methods are safe for concurrent use.
type Service struct {
	agentID   string
	agentType envelope.AgentType
	bopts     broker.Options
	open      func(broker.Options) (*broker.Broker, error)

	notify *notifier

	mu      sync.Mutex
	b       *broker.Broker // guarded by mu: nil until first use
	closed  bool           // guarded by mu
	own     bool           // guarded by mu: the own agent is registered
	servers []*mcp.Server  // guarded by mu: where the inbox resource is registered
}

// New returns a Service for opts. It opens nothing: the broker (and so the
// data directory) is opened by the first tool call that needs it. New
// fails when the configured agent id is not a usable agent id, when the
// agent type or fsync policy is unknown, or when the data directory is
// empty; the error is a *core.ConfigError naming the key.
func New(opts Options) (*Service, error) {
	c := opts.Config
	id := c.AgentID
	if id == "" {
		id = DefaultAgentID()
	} else if err := envelope.CheckAgentID(id); err != nil {
		return nil, configError("aacp.agentId", id, "an agent id: 1 to 64 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit, without \"_to_\"", err.Message)
	}
	typ := envelope.AgentType(c.AgentType)
	if typ == "" {
		typ = envelope.AdHoc
	}
	if !typ.Valid() {
		return nil, configError("aacp.agentType", c.AgentType, "one of Manager, Implementation, AdHoc", "unknown agent type")
	}
	fsync, err := journal.ParseFsyncPolicy(c.Fsync)
	if err != nil {
		return nil, configError("aacp.fsync", c.Fsync, "one of always, batch, never", "unknown fsync policy")
	}
	if c.DataDir == "" {
		return nil, configError("aacp.dataDir", "", "a non-empty directory path", "must not be empty")
	}
	s := &Service{
		agentID: id, agentType: typ, open: opts.Open,
		bopts: broker.Options{
			DataDir: c.DataDir, Fsync: fsync, DefaultTTL: time.Duration(c.DefaultTTLMs) * time.Millisecond,
			Policies: Policies(c), Logger: opts.Logger, Clock: opts.Clock,
		},
	}
	if s.open == nil {
		s.open = broker.Open
	}
	s.notify = newNotifier(func() []*mcp.Server {
		s.mu.Lock()
		defer s.mu.Unlock()
		return slices.Clone(s.servers)
	})
	s.bopts.OnInbox = s.notify.changed
	return s, nil
}

func configError(key, value, allowed, reason string) *core.ConfigError {
	return &core.ConfigError{Key: key, Env: core.EnvName(key), Value: value, Allowed: allowed, Reason: reason}
}

// Policies returns the broker's retry policies for c: nil (the protocol's
// per-type table) unless c.AckTimeoutMs is set, in which case every type
// but ACK and NACK waits AckTimeoutMs for an answer and is retried
// MaxRetries times from RetryBaseMs.
func Policies(c core.AACPConfig) map[string]broker.RetryPolicy {
	if c.AckTimeoutMs <= 0 {
		return nil
	}
	p := broker.RetryPolicy{
		AckTimeout:  time.Duration(c.AckTimeoutMs) * time.Millisecond,
		MaxRetries:  c.MaxRetries,
		BaseBackoff: time.Duration(c.RetryBaseMs) * time.Millisecond,
	}
	out := map[string]broker.RetryPolicy{}
	for k := range broker.DefaultPolicies() {
		if k != envelope.Ack && k != envelope.Nack {
			out[k] = p
		}
	}
	return out
}

// DefaultAgentID is the agent id of a process configured without
// aacp.agentId: "mcprt-{host}-{pid}", the host name reduced to the
// characters an agent id may hold. It changes whenever the process
// restarts, so a session that must find its messages again after a
// restart needs a configured id.
func DefaultAgentID() string {
	pid := strconv.Itoa(os.Getpid())
	host, _ := os.Hostname()
	var b strings.Builder
	for _, r := range host {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	h := strings.Trim(b.String(), "-.")
	if room := 64 - len("mcprt--") - len(pid); len(h) > room {
		h = strings.Trim(h[:room], "-.")
	}
	id := "mcprt-" + h + "-" + pid
	if h == "" || envelope.CheckAgentID(id) != nil {
		id = "mcprt-" + pid
	}
	return id
}

// AgentID is the agent the tools act for when a call names none.
func (s *Service) AgentID() string { return s.agentID }

// AgentType is the type the own agent is registered with on first use.
func (s *Service) AgentType() envelope.AgentType { return s.agentType }

// broker returns the broker, opening it on first use.
func (s *Service) broker() (*broker.Broker, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, core.Errorf(core.CodeInternal, "agent messaging is closed: the server is shutting down")
	}
	if s.b != nil {
		return s.b, nil
	}
	b, err := s.open(s.bopts)
	if err != nil {
		return nil, envelope.Errorf(envelope.CodeChannelUnavailable,
			"cannot open the agent messaging journal in %q (aacp.dataDir): %v; make the directory writable or point aacp.dataDir (MCPRT_AACP_DATA_DIR) elsewhere",
			s.bopts.DataDir, err)
	}
	s.b = b
	return b, nil
}

// act returns the broker and the agent a call acts for: agentID, or the
// own agent when agentID is empty. The own agent is registered (claimed)
// with the configured type the first time a call acts for it; another
// agent must have been registered through aacp_register_agent by this
// process.
func (s *Service) act(ctx context.Context, agentID string) (*broker.Broker, string, error) {
	b, err := s.broker()
	if err != nil {
		return nil, "", err
	}
	if agentID == "" {
		agentID = s.agentID
	}
	if agentID != s.agentID {
		return b, agentID, nil
	}
	s.mu.Lock()
	own := s.own
	s.mu.Unlock()
	if !own {
		if _, err := s.register(ctx, b, agentID, broker.RegisterInput{Type: s.agentType}); err != nil {
			return nil, "", err
		}
	}
	return b, agentID, nil
}

// register registers agentID on b, remembering when it is the own agent.
func (s *Service) register(ctx context.Context, b *broker.Broker, agentID string, in broker.RegisterInput) (broker.RegisterOutput, error) {
	out, err := b.RegisterAgent(ctx, agentID, in)
	if err != nil {
		var ce *core.Error
		if agentID == s.agentID && errors.As(err, &ce) && ce.Code == envelope.CodeChannelUnavailable && strings.Contains(ce.Message, "another process") {
			return out, ce.WithDetail("hint", "two sessions share the agent id "+agentID+"; give each its own aacp.agentId (MCPRT_AACP_AGENT_ID)")
		}
		return out, err
	}
	if agentID == s.agentID {
		s.mu.Lock()
		s.own = true
		s.mu.Unlock()
	}
	return out, nil
}

// Broker returns the broker behind the tools, opening it when create is
// true. With create false it returns nil and no error when the broker is
// not open and no agent registry exists in the data directory (so no
// agent is registered there), creating nothing. The agent tools use it to
// list and delegate to the agents registered for messaging.
func (s *Service) Broker(create bool) (*broker.Broker, error) {
	if !create {
		s.mu.Lock()
		b, closed := s.b, s.closed
		s.mu.Unlock()
		if b == nil && !closed && !journal.RegistryExists(s.bopts.DataDir) {
			return nil, nil
		}
	}
	return s.broker()
}

// Opened reports whether the broker has been opened (by a tool call).
func (s *Service) Opened() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b != nil
}

// Close closes the broker if it was opened: its goroutines stop, its
// agents are released (they stay registered; messages to them wait in the
// journal) and the journal is closed. Tool calls after Close fail.
func (s *Service) Close() error {
	s.mu.Lock()
	b := s.b
	s.closed = true
	s.mu.Unlock()
	if b == nil {
		s.notify.close()
		return nil
	}
	err := b.Close()
	s.notify.close() // after the broker: nothing calls it any more
	if err != nil {
		return fmt.Errorf("close agent messaging: %w", err)
	}
	return nil
}
