package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
)

// Defaults of FileOptions.
const (
	DefaultMaxSegmentBytes = 16 << 20
	DefaultMaxLineBytes    = envelope.DefaultMaxBytes + 64<<10
)

// FileOptions configures a FileStore.
type FileOptions struct {
	// Dir is the data directory; it is created when missing.
	Dir string
	// Fsync is the durability policy; "" means FsyncAlways.
	Fsync FsyncPolicy
	// MaxSegmentBytes is the size at which a channel's active segment is
	// sealed and a new one started. Zero means DefaultMaxSegmentBytes.
	MaxSegmentBytes int64
	// MaxLineBytes bounds one stored line; a longer line is skipped as
	// damaged. Zero means DefaultMaxLineBytes.
	MaxLineBytes int
	// PollInterval is how often inboxes look for new data without being
	// told: the only mechanism where file notifications are unavailable
	// (then zero means 100ms), a safety net where they are (zero: 1s).
	PollInterval time.Duration
	// Logger receives warnings (torn tails cut off, damaged lines
	// skipped). Nil discards them.
	Logger *slog.Logger
}

// FileStore is the Store on disk. Layout under Dir, every data file
// NDJSON:
//
//	channels/{sender}_to_{receiver}/messages.ndjson      active segment
//	channels/{sender}_to_{receiver}/messages.{seq}.ndjson sealed segments
//	channels/{sender}_to_{receiver}/seq.json             numbering after compaction
//	ledger/{agentId}.ndjson                              one agent's ledger
//	registry/agents.ndjson                               the agent registry
//	deadletter/messages.ndjson                           the dead-letter queue
//	locks/{agentId}.lock                                 agent claims (flock)
//	locks/channels.gen                                   grows when a process first writes to a channel
//
// and a *.lock file beside each data file for the append lock.
type FileStore struct {
	dir     string
	policy  FsyncPolicy
	maxSeg  int64
	maxLine int
	poll    time.Duration
	log     *slog.Logger

	registry *appendFile
	dead     *appendFile
	quar     *quarantine
	hooks    *ioHooks // nil outside tests

	mu       sync.Mutex
	closed   bool                    // guarded by mu
	channels map[string]*channelFile // guarded by mu: by channel name
	ledgers  map[string]*fileLedger  // guarded by mu
	claims   map[string]*os.File     // guarded by mu
	inboxes  map[string][]*fileInbox // guarded by mu: by receiver
}

var _ Store = (*FileStore)(nil)

// OpenFile opens (creating as needed) a file journal in opts.Dir.
func OpenFile(opts FileOptions) (*FileStore, error) {
	if opts.Dir == "" {
		return nil, errors.New("open the aacp journal: no directory given")
	}
	policy, err := ParseFsyncPolicy(string(opts.Fsync))
	if err != nil {
		return nil, fmt.Errorf("open the aacp journal: %w", err)
	}
	s := &FileStore{
		dir: opts.Dir, policy: policy, maxSeg: opts.MaxSegmentBytes, maxLine: opts.MaxLineBytes,
		poll: opts.PollInterval, log: opts.Logger,
		channels: make(map[string]*channelFile), ledgers: make(map[string]*fileLedger),
		claims: make(map[string]*os.File), inboxes: make(map[string][]*fileInbox),
	}
	if s.maxSeg <= 0 {
		s.maxSeg = DefaultMaxSegmentBytes
	}
	if s.maxLine <= 0 {
		s.maxLine = DefaultMaxLineBytes
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, sub := range []string{"channels", "ledger", "registry", "deadletter", "locks"} {
		if err := os.MkdirAll(filepath.Join(s.dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("open the aacp journal: %w", err)
		}
	}
	s.registry = newAppendFile(filepath.Join(s.dir, "registry", "agents.ndjson"), policy, s.log)
	s.dead = newAppendFile(filepath.Join(s.dir, "deadletter", "messages.ndjson"), policy, s.log)
	s.quar = newQuarantine(s.dir, policy, s)
	return s, nil
}

// setHooks makes every file of s use h (tests only; before any use).
func (s *FileStore) setHooks(h *ioHooks) {
	s.hooks = h
	s.registry.hooks, s.dead.hooks, s.quar.af.hooks = h, h, h
}

// RegistryExists reports whether dir holds a file journal's agent
// registry: whether any agent was ever registered there. It creates
// nothing.
func RegistryExists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "registry", "agents.ndjson"))
	return err == nil
}

// Policy is the store's fsync policy.
func (s *FileStore) Policy() FsyncPolicy { return s.policy }

// Dir is the store's data directory.
func (s *FileStore) Dir() string { return s.dir }

func (s *FileStore) closedErr() error { return fmt.Errorf("aacp journal %s: %w", s.dir, ErrClosed) }

// channel returns the channelFile of sender→receiver.
func (s *FileStore) channel(sender, receiver string) (*channelFile, error) {
	name := envelope.Channel(sender, receiver)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, s.closedErr()
	}
	c := s.channels[name]
	if c == nil {
		dir := filepath.Join(s.dir, "channels", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create channel %s: %w", name, err)
		}
		if err := s.bumpChannels(); err != nil {
			s.log.Warn("aacp journal: cannot mark a new channel for other processes' inboxes, they find it by notification or poll", "channel", name, "err", err)
		}
		c = newChannelFile(dir, s.policy, s.maxSeg, s)
		s.channels[name] = c
	}
	return c, nil
}

// channelsGen is the file a process grows by one byte when it first
// writes to a channel (bumpChannels), before the channel's first line:
// an inbox that finds the file's size changed lists the channels again,
// so a message acknowledged on a channel new to it is visible to the
// next Read without waiting for a file notification or a poll.
const channelsGen = "channels.gen"

// bumpChannels grows the channels generation file by one byte.
func (s *FileStore) bumpChannels() error {
	f, err := os.OpenFile(filepath.Join(s.dir, "locks", channelsGen), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte{'\n'})
	return errors.Join(err, f.Close())
}

// channelsGeneration is the channels generation file's size (-1 when it
// cannot be read: then the inbox relies on notifications and polls).
func (s *FileStore) channelsGeneration() int64 {
	fi, err := os.Stat(filepath.Join(s.dir, "locks", channelsGen))
	if err != nil {
		return -1
	}
	return fi.Size()
}

// Append implements Store.
func (s *FileStore) Append(ctx context.Context, env *envelope.Envelope) (uint64, error) {
	return s.AppendWith(ctx, env, AppendOptions{})
}

// AppendWith implements Appender.
func (s *FileStore) AppendWith(ctx context.Context, env *envelope.Envelope, opts AppendOptions) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := checkChannelIDs(env.Sender.AgentID, env.Receiver.AgentID); err != nil {
		return 0, err
	}
	c, err := s.channel(env.Sender.AgentID, env.Receiver.AgentID)
	if err != nil {
		return 0, err
	}
	seq, w, err := c.append(env, opts.Encoded, opts.Before)
	if err != nil {
		return 0, err
	}
	if s.policy == FsyncAlways {
		// Durable first, then visible: this process's receivers are woken
		// only now, and a reader (here or in another process) fsyncs the
		// lines it found before it passes them on.
		if err := c.af.waitSync(w); err != nil {
			return 0, err
		}
	}
	// The first append of this process to a channel may have created
	// it: its local inboxes look for new channels before reading, or a
	// receive right after this append could miss it until the watcher or
	// the poll tick tells them.
	s.notifyLocal(env.Receiver.AgentID, !c.appended.Swap(true))
	return seq, nil
}

func checkChannelIDs(sender, receiver string) error {
	if err := envelope.CheckAgentID(sender); err != nil && sender != envelope.SystemAgentID {
		return err
	}
	if err := envelope.CheckAgentID(receiver); err != nil {
		return err
	}
	return nil
}

// notifyLocal wakes this process's inboxes of receiver; newChannel makes
// them look for new channels first.
func (s *FileStore) notifyLocal(receiver string, newChannel bool) {
	s.mu.Lock()
	ins := s.inboxes[receiver]
	s.mu.Unlock()
	for _, in := range ins {
		in.event(newChannel)
	}
}

// LastSequence implements Store.
func (s *FileStore) LastSequence(_ context.Context, sender, receiver string) (uint64, error) {
	if err := checkChannelIDs(sender, receiver); err != nil {
		return 0, err
	}
	c, err := s.channel(sender, receiver)
	if err != nil {
		return 0, err
	}
	return c.lastSequence()
}

// CompactChannel implements Store: it removes the sealed segments whose
// every seq is below `below`.
func (s *FileStore) CompactChannel(_ context.Context, sender, receiver string, below uint64) (int, error) {
	if err := checkChannelIDs(sender, receiver); err != nil {
		return 0, err
	}
	c, err := s.channel(sender, receiver)
	if err != nil {
		return 0, err
	}
	return c.compact(below)
}

// Ledger implements Store.
func (s *FileStore) Ledger(agentID string) (Ledger, error) {
	if err := envelope.CheckAgentID(agentID); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, s.closedErr()
	}
	if l := s.ledgers[agentID]; l != nil {
		return l, nil
	}
	l, err := openLedger(s.dir, agentID, s.policy, s.log)
	if err != nil {
		return nil, err
	}
	l.af.hooks = s.hooks
	s.ledgers[agentID] = l
	return l, nil
}

// Claim implements Store with an exclusive flock on locks/{agentId}.lock,
// which the kernel releases when the process dies.
func (s *FileStore) Claim(agentID string) (func() error, error) {
	if err := envelope.CheckAgentID(agentID); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, s.closedErr()
	}
	if s.claims[agentID] != nil {
		return nil, fmt.Errorf("claim agent %q: %w (this store already holds it)", agentID, ErrClaimed)
	}
	path := filepath.Join(s.dir, "locks", agentID+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("claim agent %q: %w", agentID, err)
	}
	// An Online probe holds a shared lock for an instant: try a few times.
	for attempt := 0; ; attempt++ {
		ok, err := tryLock(f, true)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("claim agent %q: %w", agentID, err)
		}
		if ok {
			break
		}
		if attempt == 20 {
			f.Close()
			return nil, fmt.Errorf("claim agent %q: %w (another process holds %s)", agentID, ErrClaimed, path)
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt(fmt.Appendf(nil, "%d\n", os.Getpid()), 0)
	s.claims[agentID] = f
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			s.mu.Lock()
			if s.claims[agentID] == f {
				delete(s.claims, agentID)
			}
			s.mu.Unlock()
			err = f.Close() // closing the last descriptor drops the flock
		})
		return err
	}, nil
}

// online reports whether some holder claims agentID.
func (s *FileStore) online(agentID string) bool {
	s.mu.Lock()
	mine := s.claims[agentID] != nil
	s.mu.Unlock()
	if mine {
		return true
	}
	f, err := os.Open(filepath.Join(s.dir, "locks", agentID+".lock"))
	if err != nil {
		return false
	}
	defer f.Close()
	free, err := tryLock(f, false)
	return err == nil && !free
}

// PutAgent implements Store.
func (s *FileStore) PutAgent(_ context.Context, rec AgentRecord) error {
	if err := envelope.CheckAgentID(rec.AgentID); err != nil {
		return err
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode agent record: %w", err)
	}
	return s.registry.append(append(line, '\n'))
}

// Agents implements Store.
func (s *FileStore) Agents(context.Context) ([]AgentRecord, error) {
	data, err := os.ReadFile(s.registry.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read the agent registry: %w", err)
	}
	byID := make(map[string]AgentRecord)
	eachLine(data, func(line []byte) {
		var r AgentRecord
		if err := json.Unmarshal(line, &r); err != nil || r.AgentID == "" {
			s.log.Warn("aacp journal: skipping a damaged registry line", "err", err)
			return
		}
		if r.Removed {
			delete(byID, r.AgentID)
		} else {
			byID[r.AgentID] = r
		}
	})
	out := make([]AgentRecord, 0, len(byID))
	for _, r := range byID {
		r.Online = s.online(r.AgentID)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b AgentRecord) int { return compareStrings(a.AgentID, b.AgentID) })
	return out, nil
}

// AddDeadLetter implements Store.
func (s *FileStore) AddDeadLetter(_ context.Context, d DeadLetter) error {
	line, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode dead letter: %w", err)
	}
	return s.dead.append(append(line, '\n'))
}

// DeadLetters implements Store.
func (s *FileStore) DeadLetters(context.Context) ([]DeadLetter, error) {
	all, err := s.readDead()
	if err != nil {
		return nil, err
	}
	return foldDeadLetters(all), nil
}

func (s *FileStore) readDead() ([]DeadLetter, error) {
	data, err := os.ReadFile(s.dead.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read the dead-letter queue: %w", err)
	}
	var all []DeadLetter
	eachLine(data, func(line []byte) {
		var d DeadLetter
		if err := json.Unmarshal(line, &d); err != nil || d.MessageID == "" {
			s.log.Warn("aacp journal: skipping a damaged dead-letter line", "err", err)
			return
		}
		all = append(all, d)
	})
	return all, nil
}

// PurgeExpired implements Store: it rewrites the dead-letter queue without
// its expired entries.
func (s *FileStore) PurgeExpired(_ context.Context, now time.Time) (int, error) {
	n := 0
	err := s.dead.locked(func() error {
		all, err := s.readDead()
		if err != nil {
			return err
		}
		live := foldDeadLetters(all)
		keep := slices.DeleteFunc(slices.Clone(live), func(d DeadLetter) bool { return expired(d.ExpiresAt, now) })
		n = len(live) - len(keep)
		if n == 0 {
			return nil
		}
		var buf bytes.Buffer
		for _, d := range keep {
			line, err := json.Marshal(d)
			if err != nil {
				return fmt.Errorf("encode dead letter: %w", err)
			}
			buf.Write(line)
			buf.WriteByte('\n')
		}
		return s.dead.rewriteLocked(buf.Bytes())
	})
	return n, err
}

// Sync implements Store.
func (s *FileStore) Sync(context.Context) error {
	s.mu.Lock()
	var files []*appendFile
	for _, c := range s.channels {
		files = append(files, c.af)
	}
	for _, l := range s.ledgers {
		files = append(files, l.af)
	}
	s.mu.Unlock()
	files = append(files, s.registry, s.dead)
	var errs []error
	for _, f := range files {
		errs = append(errs, f.sync())
	}
	return errors.Join(errs...)
}

// Close implements Store: it syncs (unless the policy is never) and
// closes every file and releases every claim.
func (s *FileStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var files []*appendFile
	for _, c := range s.channels {
		files = append(files, c.af)
	}
	for _, l := range s.ledgers {
		files = append(files, l.af)
	}
	claims := s.claims
	s.claims = map[string]*os.File{}
	var inboxes []*fileInbox
	for _, ins := range s.inboxes {
		inboxes = append(inboxes, ins...)
	}
	s.mu.Unlock()
	files = append(files, s.registry, s.dead, s.quar.af)
	var errs []error
	for _, in := range inboxes {
		errs = append(errs, in.Close())
	}
	for _, f := range files {
		errs = append(errs, f.close())
	}
	for _, f := range claims {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
