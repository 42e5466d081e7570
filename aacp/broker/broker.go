package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
)

// ErrClosed is wrapped by the errors of a closed broker.
var ErrClosed = errors.New("the aacp broker is closed")

// Broker is the agent-to-agent messaging engine of one process: it hosts
// local agents (RegisterAgent), sends for them, receives for them, and
// keeps their deliveries moving (acknowledgements, timeouts, retries,
// dead letters), all through a journal shared with other processes. All
// methods are safe for concurrent use.
type Broker struct {
	store journal.Store
	// syncSends: the store's ledgers buffer Put (journal.BufferedLedgers),
	// so a send waits for its sender's Ledger.Sync before it returns.
	syncSends bool
	ownStore  bool
	v         *envelope.Validator
	clock     core.Clock
	ids       core.IDGenerator
	log       *slog.Logger
	after     func(time.Duration) <-chan time.Time
	rand      func() float64
	jitter    float64
	maxWait   time.Duration // MaxBackoff
	ttl       time.Duration
	policies  map[string]RetryPolicy
	manual    bool
	tick      time.Duration
	// syncing: the maintenance loop syncs the journal (a batch journal;
	// under always, the ledgers, whose lines a send does not fsync)
	syncing  bool
	onInbox  func(agentID string)
	onAppend func(envs []*envelope.Envelope)

	mu       sync.Mutex
	closed   bool                           // guarded by mu
	agents   map[string]*local              // guarded by mu: the local agents
	registry map[string]journal.AgentRecord // guarded by mu: routing cache

	stop chan struct{}
	wg   sync.WaitGroup
}

// Open starts a broker on opts.Store, or on a file journal in
// opts.DataDir. Close releases it.
func Open(opts Options) (*Broker, error) {
	v, err := envelope.NewValidator(opts.MaxMessageBytes)
	if err != nil {
		return nil, fmt.Errorf("open the aacp broker: %w", err)
	}
	b := &Broker{
		store: opts.Store, syncSends: bufferedLedgers(opts.Store), v: v, clock: opts.Clock, ids: opts.IDs, log: opts.Logger,
		after: opts.After, rand: opts.Rand, jitter: opts.Jitter, maxWait: opts.MaxBackoff,
		ttl: opts.DefaultTTL, policies: DefaultPolicies(), manual: opts.Manual, tick: opts.TickInterval,
		agents: make(map[string]*local), registry: make(map[string]journal.AgentRecord),
		stop: make(chan struct{}), onInbox: opts.OnInbox, onAppend: opts.OnAppend,
	}
	for k, p := range opts.Policies {
		b.policies[k] = p
	}
	if b.clock == nil {
		b.clock = core.SystemClock{}
	}
	if b.ids == nil {
		b.ids = &core.UUIDGenerator{}
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.after == nil {
		b.after = time.After
	}
	if b.rand == nil {
		b.rand = rand.Float64
	}
	switch {
	case b.jitter == 0:
		b.jitter = DefaultJitter
	case b.jitter < 0:
		b.jitter = 0
	}
	if b.maxWait <= 0 {
		b.maxWait = DefaultMaxBackoff
	}
	if b.ttl <= 0 {
		b.ttl = DefaultTTL
	}
	if b.tick <= 0 {
		b.tick = DefaultTickInterval
	}
	if b.store == nil {
		fs, err := journal.OpenFile(journal.FileOptions{
			Dir: opts.DataDir, Fsync: opts.Fsync, MaxSegmentBytes: opts.MaxSegmentBytes,
			MaxLineBytes: v.MaxBytes() + 64<<10, PollInterval: opts.PollInterval, Logger: b.log,
		})
		if err != nil {
			return nil, fmt.Errorf("open the aacp broker: %w", err)
		}
		b.store, b.ownStore = fs, true
		b.syncing = fs.Policy() != journal.FsyncNever
	}
	if !b.manual {
		b.wg.Go(b.maintain)
	}
	return b, nil
}

// Store returns the broker's journal.
func (b *Broker) Store() journal.Store { return b.store }

// Close stops the broker's goroutines, releases its agents (they stay
// registered: messages to them wait in the journal) and closes the journal
// it opened. Calls after the first return nil.
func (b *Broker) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	agents := make([]*local, 0, len(b.agents))
	for _, l := range b.agents {
		agents = append(agents, l)
	}
	b.agents = map[string]*local{}
	b.mu.Unlock()
	close(b.stop)
	b.wg.Wait()
	var errs []error
	for _, l := range agents {
		errs = append(errs, l.shutdown())
	}
	if b.ownStore {
		errs = append(errs, b.store.Close())
	}
	return errors.Join(errs...)
}

func (b *Broker) now() time.Time { return b.clock.Now().UTC() }

// appended reports envelopes just appended to Options.OnAppend.
func (b *Broker) appended(envs ...*envelope.Envelope) {
	if b.onAppend != nil && len(envs) > 0 {
		b.onAppend(envs)
	}
}

// local returns the local agent id, or an E_ROUTING_001 error.
func (b *Broker) local(id string) (*local, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, core.Errorf(core.CodeInternal, "agent %q: %w", id, ErrClosed)
	}
	l := b.agents[id]
	if l == nil {
		if err := envelope.CheckAgentID(id); err != nil {
			return nil, err
		}
		return nil, envelope.Errorf(envelope.CodeAgentNotFound, "agent %q is not registered with this broker; call RegisterAgent (aacp_register_agent) for it first", id)
	}
	return l, nil
}

// negotiate returns the highest version in supported that this broker
// speaks.
func negotiate(supported []string) (string, error) {
	if len(supported) == 0 {
		return envelope.Version, nil
	}
	if slices.Contains(supported, envelope.Version) {
		return envelope.Version, nil
	}
	return "", envelope.Errorf(envelope.CodeUnsupportedVersion, "no protocol version in common: the agent supports %q, this broker speaks %q; add %q to supportedVersions", supported, envelope.Version, envelope.Version)
}

// RegisterAgent makes this broker the host of agentID: it claims the agent
// (no other process may host it meanwhile), negotiates the protocol
// version, records the agent in the registry, resumes the agent's pending
// retries from its ledger and queues the messages waiting for it.
// Registering an agent this broker already hosts updates its
// registration. Errors: E_ROUTING_002 for an unusable id, E_VALIDATION_003
// for an unknown type, E_PROTOCOL_001 when no version is in common,
// E_ROUTING_003 when another process hosts the agent.
func (b *Broker) RegisterAgent(ctx context.Context, agentID string, in RegisterInput) (RegisterOutput, error) {
	if err := envelope.CheckAgentID(agentID); err != nil {
		return RegisterOutput{}, err
	}
	if !in.Type.Valid() {
		return RegisterOutput{}, envelope.Errorf(envelope.CodeInvalidEnum, "agent type %q is unknown; want Manager, Implementation or AdHoc", in.Type).WithDetail("path", "/type")
	}
	version, err := negotiate(in.SupportedVersions)
	if err != nil {
		return RegisterOutput{}, err
	}
	for i, c := range in.Capabilities {
		if c == "" || len(c) > 64 {
			return RegisterOutput{}, envelope.Errorf(envelope.CodeSchema, "capability %d is %d bytes; want 1 to 64", i, len(c)).WithDetail("path", fmt.Sprintf("/capabilities/%d", i))
		}
	}
	rec := journal.AgentRecord{
		AgentID: agentID, Type: in.Type, ProtocolVersion: version, SupportedVersions: in.SupportedVersions,
		Capabilities: in.Capabilities, RegisteredAt: b.now(), PID: os.Getpid(),
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return RegisterOutput{}, core.Errorf(core.CodeInternal, "register agent %q: %w", agentID, ErrClosed)
	}
	l := b.agents[agentID]
	b.mu.Unlock()
	if l == nil {
		if l, err = b.host(ctx, agentID, in.Type); err != nil {
			return RegisterOutput{}, err
		}
	} else {
		l.setType(in.Type)
	}
	if !in.Unlisted {
		if err := b.store.PutAgent(ctx, rec); err != nil {
			return RegisterOutput{}, envelope.Errorf(envelope.CodeChannelUnavailable, "register agent %q: %w", agentID, err)
		}
		b.mu.Lock()
		b.registry[agentID] = rec
		b.mu.Unlock()
	}
	return RegisterOutput{
		AgentID: agentID, Type: in.Type, ProtocolVersion: version,
		PendingOutbound: len(l.ledger.Unacknowledged("")), QueuedInbound: l.queued(),
	}, nil
}

// host claims agentID and starts hosting it.
func (b *Broker) host(ctx context.Context, agentID string, typ envelope.AgentType) (*local, error) {
	release, err := b.store.Claim(agentID)
	if err != nil {
		if errors.Is(err, journal.ErrClaimed) {
			return nil, envelope.Errorf(envelope.CodeChannelUnavailable, "agent %q is hosted by another process (%v); stop that process or use another agent id", agentID, err)
		}
		return nil, envelope.Errorf(envelope.CodeChannelUnavailable, "claim agent %q: %w", agentID, err)
	}
	l, err := b.newLocal(agentID, typ, release)
	if err != nil {
		release()
		return nil, err
	}
	// Catch up: ACKs and NACKs that arrived while the agent was away move
	// its deliveries on; messages waiting for it are queued.
	if err := b.ingest(ctx, l); err != nil {
		l.shutdown()
		return nil, fmt.Errorf("register agent %q: read its inbox: %w", agentID, err)
	}
	l.resume(b.now())
	b.mu.Lock()
	if b.closed || b.agents[agentID] != nil {
		closed := b.closed
		b.mu.Unlock()
		l.shutdown()
		if closed {
			return nil, core.Errorf(core.CodeInternal, "register agent %q: %w", agentID, ErrClosed)
		}
		return b.local(agentID) // registered concurrently: use that one
	}
	b.agents[agentID] = l
	if !b.manual {
		b.wg.Go(func() { b.follow(l) })
	}
	b.mu.Unlock()
	return l, nil
}

// UnregisterAgent stops hosting agentID and removes it from the
// registry: later sends to it fail with E_ROUTING_001. Its ledger and the
// messages already in its channels stay on disk until they expire.
func (b *Broker) UnregisterAgent(ctx context.Context, agentID string) error {
	l, err := b.local(agentID)
	if err != nil {
		return err
	}
	b.mu.Lock()
	delete(b.agents, agentID)
	delete(b.registry, agentID)
	b.mu.Unlock()
	err = b.store.PutAgent(ctx, journal.AgentRecord{AgentID: agentID, Removed: true, RegisteredAt: b.now()})
	return errors.Join(err, l.shutdown())
}

// Retire removes agentID, which no process hosts, from the registry:
// later sends to it fail with E_ROUTING_001 until it registers again.
// Its ledger and channels stay on disk until they expire. An agent some
// process hosts is refused (E_ROUTING_003).
func (b *Broker) Retire(ctx context.Context, agentID string) error {
	if err := envelope.CheckAgentID(agentID); err != nil {
		return err
	}
	recs, err := b.refreshRegistry(ctx)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if r.AgentID == agentID && r.Online {
			return envelope.Errorf(envelope.CodeChannelUnavailable, "agent %q is hosted by a process (pid %d); it cannot be retired while hosted", agentID, r.PID)
		}
	}
	if err := b.store.PutAgent(ctx, journal.AgentRecord{AgentID: agentID, Removed: true, RegisteredAt: b.now()}); err != nil {
		return envelope.Errorf(envelope.CodeChannelUnavailable, "retire agent %q: %w", agentID, err)
	}
	b.mu.Lock()
	delete(b.registry, agentID)
	b.mu.Unlock()
	return nil
}

// Release stops hosting agentID without unregistering it: messages to it
// keep arriving in its channels, and another process (or this one) may
// host it next and take them.
func (b *Broker) Release(agentID string) error {
	l, err := b.local(agentID)
	if err != nil {
		return err
	}
	b.mu.Lock()
	delete(b.agents, agentID)
	b.mu.Unlock()
	return l.shutdown()
}

// Agents lists the registered agents (of in.Type when set), sorted by id.
func (b *Broker) Agents(ctx context.Context, in AgentsInput) (AgentsOutput, error) {
	if in.Type != "" && in.Type != envelope.AnyType && !in.Type.Valid() {
		return AgentsOutput{}, envelope.Errorf(envelope.CodeInvalidEnum, "agent type %q is unknown; want Manager, Implementation or AdHoc", in.Type).WithDetail("path", "/type")
	}
	recs, err := b.refreshRegistry(ctx)
	if err != nil {
		return AgentsOutput{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := AgentsOutput{Agents: []AgentInfo{}}
	for _, r := range recs {
		if in.Type != "" && in.Type != envelope.AnyType && r.Type != in.Type {
			continue
		}
		out.Agents = append(out.Agents, AgentInfo{
			AgentID: r.AgentID, Type: r.Type, ProtocolVersion: r.ProtocolVersion, SupportedVersions: r.SupportedVersions,
			Capabilities: r.Capabilities, RegisteredAt: r.RegisteredAt, Online: r.Online, Local: b.agents[r.AgentID] != nil,
		})
	}
	return out, nil
}

// refreshRegistry reloads the routing cache from the journal.
func (b *Broker) refreshRegistry(ctx context.Context) ([]journal.AgentRecord, error) {
	recs, err := b.store.Agents(ctx)
	if err != nil {
		return nil, envelope.Errorf(envelope.CodeChannelUnavailable, "read the agent registry: %w", err)
	}
	m := make(map[string]journal.AgentRecord, len(recs))
	for _, r := range recs {
		m[r.AgentID] = r
	}
	b.mu.Lock()
	b.registry = m
	b.mu.Unlock()
	return recs, nil
}

// maintain is the maintenance goroutine: RetryDue every tick, a batch
// journal synced every tick, compaction every 50 ticks, expired data
// purged every 600 ticks.
func (b *Broker) maintain() {
	t := time.NewTicker(b.tick)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-b.stop; cancel() }()
	for n := 1; ; n++ {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		if _, err := b.RetryDue(ctx); err != nil && ctx.Err() == nil {
			b.log.Warn("aacp: retry pass failed", "err", err)
		}
		if b.syncing {
			if err := b.store.Sync(ctx); err != nil {
				b.log.Warn("aacp: journal sync failed", "err", err)
			}
		}
		if n%50 == 0 {
			if err := b.Compact(ctx); err != nil && ctx.Err() == nil {
				b.log.Warn("aacp: compaction failed", "err", err)
			}
		}
		if n%600 == 0 {
			if _, err := b.PurgeExpired(ctx); err != nil && ctx.Err() == nil {
				b.log.Warn("aacp: purge failed", "err", err)
			}
		}
	}
}

// followReadTimeout bounds each read of the inbox goroutine. A journal
// that cannot answer (a NATS cluster electing a new leader) must not keep
// the agent's receiving lock for longer: Receive reads for itself, and
// what a cut read left is read by the next one.
const followReadTimeout = 3 * time.Second

// follow is a local agent's inbox goroutine: it reads new data whenever
// the journal signals some.
func (b *Broker) follow(l *local) {
	for {
		select {
		case <-b.stop:
			return
		case <-l.gone:
			return
		case <-l.inbox.Changed():
		}
		ctx, cancel := context.WithTimeout(context.Background(), followReadTimeout)
		err := b.ingest(ctx, l)
		cancel()
		if err != nil {
			b.log.Warn("aacp: reading an inbox failed", "agent", l.id, "err", err)
		}
	}
}

// Pump reads new data into every local agent's inbox: queued messages,
// and ACKs and NACKs for its deliveries. The inbox goroutines do this
// unless Options.Manual is set.
func (b *Broker) Pump(ctx context.Context) error {
	var errs []error
	for _, l := range b.locals() {
		errs = append(errs, b.ingest(ctx, l))
	}
	return errors.Join(errs...)
}

func (b *Broker) locals() []*local {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*local, 0, len(b.agents))
	for _, l := range b.agents {
		out = append(out, l)
	}
	slices.SortFunc(out, func(x, y *local) int {
		switch {
		case x.id < y.id:
			return -1
		case x.id > y.id:
			return 1
		}
		return 0
	})
	return out
}

// bufferedLedgers reports whether st's Ledger.Put may return before the
// records have left the process.
func bufferedLedgers(st journal.Store) bool {
	bl, ok := st.(journal.BufferedLedgers)
	return ok && bl.BufferedLedgers()
}
