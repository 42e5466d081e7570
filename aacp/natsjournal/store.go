package natsjournal

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
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/natsengine/lease"
)

// Names of the streams and buckets, and their subjects.
const (
	ChannelStream = "AACP_CHANNELS"
	LedgerStream  = "AACP_LEDGERS"
	DeadStream    = "AACP_DEAD"
	AgentBucket   = "AACP_AGENTS"
	ClaimBucket   = "AACP_CLAIMS"

	chanPrefix   = "aacp.ch."
	ledgerPrefix = "aacp.lg."
	deadPrefix   = "aacp.dl."

	// seqHeader carries a transmission's channel seq.
	seqHeader = "Mcprt-Seq"
)

// Options configures Open.
type Options struct {
	// JS is the JetStream context to use (natsengine.Conn.JS).
	JS jetstream.JetStream
	// Replicas of every stream and bucket; 0 means 1.
	Replicas int
	// DedupWindow is the channel stream's duplicate window; 0 means 2
	// minutes.
	DedupWindow time.Duration
	// ClaimTTL is how long an agent claim lasts without renewal (a dead
	// holder's agents are free this long after it died); 0 means 10 s.
	ClaimTTL time.Duration
	// Owner names this process in claims; "" means host:pid.
	Owner string
	// OnClose, when set, is called by Close after the store is closed
	// (to close the connection the store was opened on).
	OnClose func()
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Store is a journal.Store on NATS JetStream. Make it with Open.
type Store struct {
	js       jetstream.JetStream
	chans    jetstream.Stream
	ledgers  jetstream.Stream
	dead     jetstream.Stream
	agents   jetstream.KeyValue
	claims   *lease.Leases
	owner    string
	log      *slog.Logger
	onClose  func()
	maxBytes int
	// replaced counts the inbox consumers replaced (InboxConsumersReplaced).
	replaced atomic.Int64
	// ctx ends when the store closes (after Close waited for the
	// ledgers): it bounds background publishes.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	closed   bool                          // guarded by mu
	channels map[[2]string]*channel        // guarded by mu
	held     map[string]func()             // guarded by mu: agent → stop keepalive and release
	ledgerOf map[string]*ledger            // guarded by mu
	inboxes  map[*inbox]struct{}           // guarded by mu
	readPos  map[[2]string][]streamSeqPair // guarded by mu: what inboxes read, for CompactChannel
}

type streamSeqPair struct{ seq, stream uint64 }

var _ journal.Store = (*Store)(nil)

// Open creates (or binds) the streams and buckets and returns the store.
// A stream or bucket that exists with a configuration mcprt cannot adopt
// (another storage type, subjects taken by another stream) is an error
// naming it.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.JS == nil {
		return nil, errors.New("natsjournal: Options.JS is nil")
	}
	r := max(opts.Replicas, 1)
	if opts.DedupWindow <= 0 {
		opts.DedupWindow = 2 * time.Minute
	}
	if opts.ClaimTTL <= 0 {
		opts.ClaimTTL = 10 * time.Second
	}
	s := &Store{
		js: opts.JS, owner: opts.Owner, log: opts.Logger, onClose: opts.OnClose,
		channels: map[[2]string]*channel{}, held: map[string]func(){}, ledgerOf: map[string]*ledger{},
		inboxes: map[*inbox]struct{}{}, readPos: map[[2]string][]streamSeqPair{},
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.owner == "" {
		host, _ := os.Hostname()
		s.owner = host + ":" + strconv.Itoa(os.Getpid())
	}
	var err error
	if s.chans, err = ensureStream(ctx, opts.JS, s.log, jetstream.StreamConfig{
		Name: ChannelStream, Subjects: []string{chanPrefix + ">"}, Storage: jetstream.FileStorage,
		Replicas: r, Duplicates: opts.DedupWindow, Discard: jetstream.DiscardOld, AllowAtomicPublish: true,
		Description: "mcprt agent channels: aacp.ch.{receiver}.{sender}",
	}); err != nil {
		return nil, err
	}
	if s.ledgers, err = ensureStream(ctx, opts.JS, s.log, jetstream.StreamConfig{
		Name: LedgerStream, Subjects: []string{ledgerPrefix + ">"}, Storage: jetstream.FileStorage,
		Replicas: r, Description: "mcprt agent ledgers: aacp.lg.{agent}",
	}); err != nil {
		return nil, err
	}
	if s.dead, err = ensureStream(ctx, opts.JS, s.log, jetstream.StreamConfig{
		Name: DeadStream, Subjects: []string{deadPrefix + ">"}, Storage: jetstream.FileStorage,
		Replicas: r, Description: "mcprt dead letters: aacp.dl.{messageId}",
	}); err != nil {
		return nil, err
	}
	if s.agents, err = lease.EnsureKeyValue(ctx, opts.JS, jetstream.KeyValueConfig{
		Bucket: AgentBucket, History: 1, Storage: jetstream.FileStorage, Replicas: r,
	}); err != nil {
		return nil, fmt.Errorf("natsjournal: key-value bucket %s: %w", AgentBucket, err)
	}
	if s.claims, err = lease.Open(ctx, opts.JS, lease.Options{Bucket: ClaimBucket, TTL: opts.ClaimTTL, Replicas: r}); err != nil {
		return nil, fmt.Errorf("natsjournal: %w", err)
	}
	s.maxBytes = 512 << 10
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// ensureStream creates the stream, or updates one that exists to cfg; a
// conflict (for instance another storage type) is an error naming it.
func ensureStream(ctx context.Context, js jetstream.JetStream, log *slog.Logger, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	// Each attempt is bounded: concurrent creations of one replicated
	// stream (several nodes starting at once) can leave a request
	// unanswered; a cluster still forming is retried too, until ctx ends.
	// An attempt's bound doubles from 3 s to 15 s: on a loaded machine a
	// cluster's first stream creations can take longer than 3 s, and an
	// attempt cut short only adds a request to the queue.
	each := 3 * time.Second
	attempt := func() (jetstream.Stream, error) {
		actx, cancel := context.WithTimeout(ctx, each)
		defer func() { each = min(2*each, 15*time.Second) }()
		defer cancel()
		if st, err := js.Stream(actx, cfg.Name); err == nil && sameStream(st.CachedInfo().Config, cfg) {
			return st, nil
		}
		return js.CreateOrUpdateStream(actx, cfg)
	}
	st, err := attempt()
	for err != nil && (transient(err) || errors.Is(err, context.DeadlineExceeded)) && ctx.Err() == nil {
		log.Warn("aacp nats journal: a stream is not created yet; trying again", "stream", cfg.Name, "error", err.Error())
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
		st, err = attempt()
	}
	if err != nil {
		return nil, fmt.Errorf("natsjournal: stream %s (subjects %s, %s storage, %d replicas) cannot be created or adopted — delete or fix the existing stream, or change nats.replicas: %w",
			cfg.Name, strings.Join(cfg.Subjects, " "), cfg.Storage, cfg.Replicas, err)
	}
	return st, nil
}

// sameStream reports whether an existing stream already has what cfg
// asks for.
func sameStream(have, want jetstream.StreamConfig) bool {
	return slices.Equal(have.Subjects, want.Subjects) && have.Storage == want.Storage &&
		have.Replicas == want.Replicas && (want.Duplicates == 0 || have.Duplicates == want.Duplicates) &&
		have.AllowAtomicPublish == want.AllowAtomicPublish
}

func (s *Store) check() error {
	if s.closed {
		return fmt.Errorf("nats journal: %w", journal.ErrClosed)
	}
	return nil
}

func (s *Store) checkOpen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.check()
}

// token turns an agent id into a subject token ('.' separates tokens).
func token(id string) string { return strings.ReplaceAll(id, ".", "~") }

func checkPair(sender, receiver string) error {
	if err := envelope.CheckAgentID(sender); err != nil && sender != envelope.SystemAgentID {
		return err
	}
	if err := envelope.CheckAgentID(receiver); err != nil {
		return err
	}
	return nil
}

func chanSubject(sender, receiver string) string {
	return chanPrefix + token(receiver) + "." + token(sender)
}

func (s *Store) channel(sender, receiver string) (*channel, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	key := [2]string{sender, receiver}
	c := s.channels[key]
	if c == nil {
		c = &channel{subject: chanSubject(sender, receiver)}
		s.channels[key] = c
	}
	return c, nil
}

// load reads where the channel ends from the stream; c.mu is held.
func (s *Store) load(ctx context.Context, c *channel) error {
	subject := c.subject
	var m *jetstream.RawStreamMsg
	err := retry(ctx, attemptTimeout, func(actx context.Context) error {
		var err error
		m, err = s.chans.GetLastMsgForSubject(actx, subject)
		return err
	})
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		c.lastStream, c.lastSeq = 0, 0
	case err != nil:
		return fmt.Errorf("nats journal: read the end of channel %s: %w", subject, err)
	default:
		seq, perr := strconv.ParseUint(m.Header.Get(seqHeader), 10, 64)
		if perr != nil {
			return fmt.Errorf("nats journal: channel %s: last message (stream seq %d) has no %s header", subject, m.Sequence, seqHeader)
		}
		c.lastStream, c.lastSeq = m.Sequence, seq
	}
	c.known = true
	return nil
}

// attemptTimeout bounds one publish: a request caught by a leader change
// or a reconnection may never be answered, and is sent again (the
// message id makes the repeat a duplicate if the first one was stored).
const attemptTimeout = 3 * time.Second

// publish publishes msg, retrying unanswered attempts until ctx ends.
// msg must carry a message id (or be harmless to store twice).
func (s *Store) publish(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	var ack *jetstream.PubAck
	err := retry(ctx, attemptTimeout, func(actx context.Context) error {
		var err error
		ack, err = s.js.PublishMsg(actx, msg, opts...)
		return err
	})
	return ack, err
}

// retry calls op in attempts bounded by each until it succeeds, fails for
// good, or ctx ends: an attempt that went unanswered (a request caught by
// a leader change or a reconnection) or met a cluster without a leader
// yet is made again, after a pause that grows from 50 ms to 500 ms. op
// must be safe to repeat (reads; writes with a message id or a
// compare-and-swap).
func retry(ctx context.Context, each time.Duration, op func(context.Context) error) error {
	pause := 50 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, each)
		err := op(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !(transient(err) || errors.Is(err, context.DeadlineExceeded)) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// errCodeDuplicateInProcess is JetStream's answer to a publish whose
// message id is on a write still being decided (a repeat sent while the
// first attempt waits for its quorum, for instance right after a
// partition heals): the repeat is sent again once that is settled.
const errCodeDuplicateInProcess = 10158

// transient reports whether err is a cluster that is not ready yet (no
// peers for placement, no meta leader, no answer) or a repeat of a write
// still in process: worth sending again.
func transient(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == 10005 || apiErr.ErrorCode == 10008 || apiErr.Code == 503 ||
			apiErr.ErrorCode == errCodeDuplicateInProcess
	}
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrTimeout)
}

func isWrongLast(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
	}
	return false
}

// LastSequence implements journal.Store.
func (s *Store) LastSequence(ctx context.Context, sender, receiver string) (uint64, error) {
	if err := checkPair(sender, receiver); err != nil {
		return 0, err
	}
	c, err := s.channel(sender, receiver)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := s.load(ctx, c); err != nil {
		return 0, err
	}
	return c.lastSeq, nil
}

// InboxConsumersReplaced is how many times an inbox of this store
// replaced its consumer (a node or the hub lost, a route broken), for the
// health report.
func (s *Store) InboxConsumersReplaced() int64 { return s.replaced.Load() }

// noteRead records the stream seq of a channel seq an inbox passed.
func (s *Store) noteRead(key [2]string, seq, stream uint64) {
	s.mu.Lock()
	s.readPos[key] = append(s.readPos[key], streamSeqPair{seq, stream})
	s.mu.Unlock()
}

// CompactChannel implements journal.Store: it purges the channel's
// messages below `below` that an inbox of this store has read, always
// keeping the channel's last message (it carries the channel's seq).
// It returns 1 when it purged anything, else 0.
func (s *Store) CompactChannel(ctx context.Context, sender, receiver string, below uint64) (int, error) {
	if err := checkPair(sender, receiver); err != nil {
		return 0, err
	}
	key := [2]string{sender, receiver}
	s.mu.Lock()
	if err := s.check(); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	pos := s.readPos[key]
	// The highest read message with seq < below-1 … keep below-1 itself:
	// purge up to (not including) the stream seq of seq below-1.
	cut, n := uint64(0), 0
	for i, p := range pos {
		if p.seq+1 >= below {
			break
		}
		cut, n = p.stream, i+1
	}
	// A pack is purged whole or not at all: one that holds a seq kept
	// is kept, and so are the seqs of it passed over above.
	if n > 0 && n < len(pos) && pos[n].stream == cut {
		for n > 0 && pos[n-1].stream == cut {
			n--
		}
		cut = 0
		if n > 0 {
			cut = pos[n-1].stream
		}
	}
	if n > 0 {
		s.readPos[key] = append([]streamSeqPair(nil), pos[n:]...)
	}
	s.mu.Unlock()
	if cut == 0 {
		return 0, nil
	}
	// Purge up to and including cut (sequence is exclusive), never the
	// channel's last message, which the loop above keeps.
	if err := s.chans.Purge(ctx, jetstream.WithPurgeSubject(chanSubject(sender, receiver)), jetstream.WithPurgeSequence(cut+1)); err != nil {
		return 0, fmt.Errorf("nats journal: compact %s→%s below %d: %w", sender, receiver, below, err)
	}
	return 1, nil
}

// Sync implements journal.Store: it waits until JetStream acknowledged
// every ledger record Put so far (appends are acknowledged before they
// return).
func (s *Store) Sync(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	return s.syncLedgers(ctx)
}

func (s *Store) syncLedgers(ctx context.Context) error {
	s.mu.Lock()
	ls := make([]*ledger, 0, len(s.ledgerOf))
	for _, l := range s.ledgerOf {
		ls = append(ls, l)
	}
	s.mu.Unlock()
	var first error
	for _, l := range ls {
		if err := l.wait(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Close implements journal.Store: it stops the inboxes, releases every
// claim, and calls Options.OnClose.
func (s *Store) Close() error {
	// Ledger records still on their way are waited for (briefly).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.syncLedgers(ctx); err != nil {
		s.log.Warn("aacp nats journal: ledger records unconfirmed at close", "error", err.Error())
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	held := s.held
	s.held = map[string]func(){}
	ins := s.inboxes
	s.inboxes = map[*inbox]struct{}{}
	s.mu.Unlock()
	for in := range ins {
		in.stop()
	}
	s.cancel()
	for _, release := range held {
		release()
	}
	if s.onClose != nil {
		s.onClose()
	}
	return nil
}

// BufferedLedgers implements journal.BufferedLedgers: a ledger's Put
// queues its records for the ledger's next publish (one in flight at a
// time), so a sender waits for Ledger.Sync before a send returns.
func (s *Store) BufferedLedgers() bool { return true }
