package messaging

import (
	"cmp"
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
	"github.com/mcprt/mcprt/internal/setting"
	"github.com/mcprt/mcprt/mcp"
)

// Options configures a Service.
type Options struct {
	// Config is the configuration's aacp section: the data directory, the
	// default agent, the journal's fsync policy, the message TTL and the
	// delivery timeouts.
	Config Config
	// Logger receives the broker's diagnostics; nil discards them.
	Logger *slog.Logger
	// Open opens the broker on first use; nil means broker.Open. Tests
	// use it to supply a clock or an in-memory journal.
	Open func(broker.Options) (*broker.Broker, error)
	// Clock is the broker's clock; nil means the system clock.
	Clock core.Clock
	// Presence keeps the agents' presence records; nil means the data
	// directory's presence files (shared only by the processes on it).
	Presence PresenceStore
}

// Service holds the broker behind the aacp_* tools: it opens it on first
// use, gives each MCP session its own agent identity, keeps the agents'
// presence, and closes it all with Close. All methods are safe for
// concurrent use.
type Service struct {
	agentID   string
	agentType envelope.AgentType
	listed    bool // agentID was configured: it is written to the registry
	bopts     broker.Options
	open      func(broker.Options) (*broker.Broker, error)
	// filesJournal: the journal is the data directory's files (Open was
	// nil), whose registry file says whether any agent registered; a
	// journal elsewhere (NATS) is opened by Broker(false) too.
	filesJournal bool
	clock        core.Clock
	idleAfter    time.Duration
	staleAfter   time.Duration
	presence     *presence
	index        *msgIndex
	log          *slog.Logger

	notify *notifier
	regs   registrations // serialises the registrations of each agent id

	mu      sync.Mutex
	b       *broker.Broker            // guarded by mu: nil until first use
	closed  bool                      // guarded by mu
	holders map[string]*mcp.Session   // guarded by mu: agent → the session holding it (nil: held outside any session)
	idents  map[*mcp.Session]string   // guarded by mu: session → its identity
	watched map[*mcp.Session]struct{} // guarded by mu: sessions whose end releases their agents
	servers []*mcp.Server             // guarded by mu: where the inbox resource is registered
}

// New returns a Service for opts. It opens nothing: the broker (and so the
// data directory) is opened by the first tool call that needs it. New
// fails when the configured agent id is not a usable agent id, when the
// agent type or fsync policy is unknown, or when the data directory is
// empty; the error is a *setting.Error naming the key (config.AsError
// turns it into the binary's *config.Error).
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
	clock := opts.Clock
	if clock == nil {
		clock = core.SystemClock{}
	}
	s := &Service{
		agentID: id, agentType: typ, open: opts.Open, listed: c.AgentID != "", clock: clock,
		idleAfter: positiveOr(c.IdleAfter, 2*time.Minute), staleAfter: positiveOr(c.StaleAfter, 15*time.Minute),
		presence: newPresence(c.DataDir, opts.Presence, clock), index: &msgIndex{dataDir: c.DataDir}, log: opts.Logger,
		holders: map[string]*mcp.Session{}, idents: map[*mcp.Session]string{}, watched: map[*mcp.Session]struct{}{},
		bopts: broker.Options{
			DataDir: c.DataDir, Fsync: fsync, DefaultTTL: c.DefaultTTL,
			Policies: Policies(c), Logger: opts.Logger, Clock: opts.Clock,
		},
	}
	if s.open == nil {
		s.filesJournal = true
		s.open = broker.Open
	}
	s.notify = newNotifier(func() []*mcp.Server {
		s.mu.Lock()
		defer s.mu.Unlock()
		return slices.Clone(s.servers)
	})
	s.bopts.OnInbox = s.notify.changed
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.index.log = func(err error) {
		s.log.Warn("aacp: indexing messages failed; the next catch-up adds them", "err", err)
	}
	s.bopts.OnAppend = s.index.add
	return s, nil
}

// positiveOr is d, or def when d is not positive.
func positiveOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (s *Service) now() time.Time { return s.clock.Now().UTC() }

func configError(key, value, allowed, reason string) *setting.Error {
	return &setting.Error{Key: key, Value: value, Allowed: allowed, Reason: reason}
}

// Policies returns the broker's retry policies for c: nil (the protocol's
// per-type table) unless c.AckTimeout is set, in which case every type
// but ACK and NACK waits AckTimeout for an answer and is retried
// MaxRetries times from RetryBase.
func Policies(c Config) map[string]broker.RetryPolicy {
	if c.AckTimeout <= 0 {
		return nil
	}
	p := broker.RetryPolicy{
		AckTimeout:  c.AckTimeout,
		MaxRetries:  c.MaxRetries,
		BaseBackoff: c.RetryBase,
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
// identity of the call's session when agentID is empty (what it
// registered, else the process's default agent, hosted on first use).
// An agent another live session of this process holds is refused
// (E_ROUTING_003, naming the holder); any other agent must have been
// registered in this session (E_ROUTING_001 otherwise).
func (s *Service) act(ctx context.Context, agentID string) (*broker.Broker, string, error) {
	b, err := s.broker()
	if err != nil {
		return nil, "", err
	}
	sess := mcp.SessionOf(ctx)
	s.mu.Lock()
	if agentID == "" {
		agentID = cmp.Or(s.idents[sess], s.agentID)
	}
	h, held := s.holders[agentID]
	s.mu.Unlock()
	switch {
	case held && (h == sess || h == nil):
		if h == nil && sess != nil {
			s.hold(sess, agentID, false)
		}
		s.seen(agentID)
		return b, agentID, nil
	case held:
		return nil, "", heldError(agentID, h)
	case agentID != s.agentID:
		if err := envelope.CheckAgentID(agentID); err != nil {
			return nil, "", err.WithDetail("path", "/agentId")
		}
		return nil, "", envelope.Errorf(envelope.CodeAgentNotFound,
			"agent %q is not registered in this session; call aacp_register_agent {\"agentId\":%q, \"type\":...} first, or leave agentId out to act as %q",
			agentID, agentID, cmp.Or(s.identity(sess), s.agentID)).WithDetail("path", "/agentId")
	}
	if _, err := s.register(ctx, b, sess, agentID, broker.RegisterInput{Type: s.agentType, Unlisted: !s.listed}, false); err != nil {
		return nil, "", err
	}
	return b, agentID, nil
}

// identity is the agent sess registered, or "".
func (s *Service) identity(sess *mcp.Session) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idents[sess]
}

// heldBySomeone reports whether a session (or the process) of this
// server holds agentID.
func (s *Service) heldBySomeone(agentID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.holders[agentID]
	return ok
}

// heldError refuses an agent another session holds.
func heldError(agentID string, h *mcp.Session) *core.Error {
	who := "session " + h.CorrelationID()
	if ci := h.ClientInfo(); ci.Name != "" {
		who += " (" + ci.Name + " " + ci.Version + ")"
	}
	return envelope.Errorf(envelope.CodeChannelUnavailable,
		"agent %q is held by another live %s of this server, over %s; register your own id with aacp_register_agent {\"agentId\":\"<a new id>\", \"type\":...}",
		agentID, who, h.Transport()).WithDetail("holder", h.CorrelationID())
}

// register registers agentID on b for sess: refused when another live
// session holds it; on success the session holds it, and it becomes the
// session's identity when ident is set (aacp_register_agent) or the
// session had none.
//
// The registrations of one agent id are serialised: of concurrent first
// calls of a session (a model calling several tools at once) the first
// hosts the agent, and the later ones find it hosted (the broker then
// only updates its record) instead of claiming it a second time.
func (s *Service) register(ctx context.Context, b *broker.Broker, sess *mcp.Session, agentID string, in broker.RegisterInput, ident bool) (broker.RegisterOutput, error) {
	defer s.regs.lock(agentID)()
	s.mu.Lock()
	h, held := s.holders[agentID]
	s.mu.Unlock()
	if held && h != sess && h != nil {
		return broker.RegisterOutput{}, heldError(agentID, h)
	}
	out, err := b.RegisterAgent(ctx, agentID, in)
	if err != nil {
		var ce *core.Error
		if errors.As(err, &ce) && ce.Code == envelope.CodeChannelUnavailable && strings.Contains(ce.Message, "another process") {
			return out, ce.WithDetail("hint", "another session holds the agent id "+agentID+"; give each session its own id (aacp_register_agent agentId, or aacp.agentId / MCPRT_AACP_AGENT_ID)")
		}
		return out, err
	}
	s.hold(sess, agentID, ident)
	s.seen(agentID)
	return out, nil
}

// hold records that sess holds agentID, watching sess so that its end
// releases what it holds. agentID becomes sess's identity when ident is
// set (a registration) or sess has none yet.
func (s *Service) hold(sess *mcp.Session, agentID string, ident bool) {
	s.mu.Lock()
	s.holders[agentID] = sess
	watch := false
	if sess != nil {
		if ident || s.idents[sess] == "" {
			s.idents[sess] = agentID
		}
		if _, ok := s.watched[sess]; !ok {
			s.watched[sess] = struct{}{}
			watch = true
		}
	}
	s.mu.Unlock()
	if watch {
		go func() {
			<-sess.Done()
			s.sessionEnded(sess)
		}()
	}
}

// sessionEnded releases the agents sess held: they stay registered and
// show offline; messages to them wait for their next session.
func (s *Service) sessionEnded(sess *mcp.Session) {
	s.mu.Lock()
	var ids []string
	for id, h := range s.holders {
		if h == sess {
			ids = append(ids, id)
			delete(s.holders, id)
		}
	}
	delete(s.idents, sess)
	delete(s.watched, sess)
	b, closed := s.b, s.closed
	s.mu.Unlock()
	for _, id := range ids {
		s.presence.forget(id)
		if b != nil && !closed {
			_ = b.Release(id) // not hosted (any more) is fine
		}
	}
}

// seen is a sign of life of agentID: a coalesced heartbeat.
func (s *Service) seen(agentID string) {
	_ = s.presence.beat(agentID, "", "", false)
}

// Heartbeat counts a tool call of the session of ctx as a heartbeat of
// its agent, when it has one; it touches no disk on the caller's path.
func (s *Service) Heartbeat(ctx context.Context) {
	sess := mcp.SessionOf(ctx)
	if sess == nil {
		return
	}
	s.mu.Lock()
	id := s.idents[sess]
	if id == "" && s.holders[s.agentID] == sess {
		id = s.agentID
	}
	s.mu.Unlock()
	if id != "" {
		s.seen(id)
	}
}

// Broker returns the broker behind the tools, opening it when create is
// true. With create false it returns nil and no error when the broker is
// not open, the journal is the data directory's files and no agent
// registry exists there (so no agent is registered), creating nothing; a
// journal opened by Options.Open (NATS) is opened. The agent tools use it to
// list and delegate to the agents registered for messaging.
func (s *Service) Broker(create bool) (*broker.Broker, error) {
	if !create {
		s.mu.Lock()
		b, closed := s.b, s.closed
		s.mu.Unlock()
		if b == nil && !closed && s.filesJournal && !journal.RegistryExists(s.bopts.DataDir) {
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
		s.presence.close()
		s.notify.close()
		return s.index.close()
	}
	s.presence.close()
	err := errors.Join(b.Close(), s.index.close())
	s.notify.close() // after the broker: nothing calls it any more
	if err != nil {
		return fmt.Errorf("close agent messaging: %w", err)
	}
	return nil
}

// registrations is a lock per agent id, held while the id is registered.
type registrations struct {
	mu    sync.Mutex
	locks map[string]*registration // guarded by mu
}

type registration struct {
	mu    sync.Mutex
	users int // guarded by registrations.mu: holders and waiters
}

// lock locks agentID's registrations and returns the unlock.
func (r *registrations) lock(agentID string) (unlock func()) {
	r.mu.Lock()
	if r.locks == nil {
		r.locks = map[string]*registration{}
	}
	l := r.locks[agentID]
	if l == nil {
		l = &registration{}
		r.locks[agentID] = l
	}
	l.users++
	r.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		r.mu.Lock()
		if l.users--; l.users == 0 {
			delete(r.locks, agentID)
		}
		r.mu.Unlock()
	}
}
