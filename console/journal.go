package console

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// message is one stored transmission as the console shows it.
type message struct {
	Seq           uint64
	MessageID     string
	RequestID     string
	CorrelationID string
	Sender        string
	Receiver      string
	Type          string
	Priority      string
	SentAt        time.Time
	ExpiresAt     time.Time
	Retry         int
	// State is the delivery's state in the sender's ledger ("" when the
	// sender keeps none); Answer the receiver's (received, queued,
	// processed, nacked, or "" when it has not answered).
	State   string
	Answer  string
	Payload string
	// Open: not ACK/NACK, not expired, neither processed nor rejected.
	Open bool
	// Overdue: open, and the sender had to retransmit it (its answer
	// did not come within the ack timeout).
	Overdue bool
}

// snapshot is what the journal held when it was read: the agents, every
// inbox and the dead letters. It is rebuilt only when the journal's files
// or the agents' presence change (fingerprint).
type snapshot struct {
	fingerprint uint64
	readAt      time.Time
	agents      []journal.AgentRecord
	inboxes     map[string][]message // by receiver, newest first
	all         []message            // every inbox's, newest first
	types       []string             // the message types seen, sorted
	dead        []journal.DeadLetter // newest first
}

// journalView reads the messaging journal in DataDir the way `mcprt aacp`
// does: without claiming any agent.
type journalView struct {
	dir   string
	src   JournalSource // nil: the files in dir
	now   func() time.Time
	limit int // messages kept per inbox

	mu     sync.Mutex
	snap   *snapshot     // guarded by mu
	reader journal.Store // guarded by mu: holds the inbox readers, opened on first use
	// registry is the JournalSource's store the agents are read from
	// (opened on first use, guarded by mu); its registry reads are live.
	registry journal.Store
	inboxes  map[string]journal.Inbox // guarded by mu: one reader per receiver, read incrementally
	raw      map[string][]message     // guarded by mu: what the readers returned, per receiver, in arrival order
	ledgers  map[string]cachedLedger  // guarded by mu: by agent, reloaded when the file changes
	stamps   map[string]string        // the ledger files' size and time at the last fingerprint (guarded by mu)
}

// cachedLedger is an agent's ledger as read when its file had stamp.
type cachedLedger struct {
	stamp  string
	ledger journal.Ledger
}

// close releases the inbox readers.
func (j *journalView) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, in := range j.inboxes {
		_ = in.Close()
	}
	if j.reader != nil {
		_ = j.reader.Close()
	}
	if j.registry != nil {
		_ = j.registry.Close()
	}
	j.inboxes, j.reader, j.registry = nil, nil, nil
}

// exists reports whether the journal holds an agent registry (one kept
// by a JournalSource always exists).
func (j *journalView) exists() bool { return j.src != nil || journal.RegistryExists(j.dir) }

// fingerprint hashes the sizes and times of the journal's files and the
// agents' online states: it changes whenever a message, an answer, an
// agent or a dead letter is written, and whenever an agent comes or goes.
func (j *journalView) fingerprint(ctx context.Context) (uint64, []journal.AgentRecord, error) {
	files, online, agents, err := j.fingerprints(ctx)
	return files ^ online*0x9e3779b97f4a7c15, agents, err
}

// fingerprints returns the hash of the journal's files and the hash of
// the agents' online states, separately: the live view tells messages
// from presence changes.
func (j *journalView) fingerprints(ctx context.Context) (files, online uint64, agents []journal.AgentRecord, err error) {
	if j.src != nil {
		return j.sourceFingerprints(ctx)
	}
	h := fnv.New64a()
	stamps := map[string]string{}
	defer func() {
		if err == nil {
			j.mu.Lock()
			j.stamps = stamps
			j.mu.Unlock()
		}
	}()
	for _, sub := range []string{"channels", "ledger", "registry", "deadletter"} {
		root := filepath.Join(j.dir, sub)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if d.IsDir() || strings.HasSuffix(path, ".lock") {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil // removed meanwhile (compaction)
			}
			stamp := fmt.Sprintf("%d\x00%d", info.Size(), info.ModTime().UnixNano())
			fmt.Fprintf(h, "%s\x00%s\n", path, stamp)
			if sub == "ledger" && strings.HasSuffix(path, ".ndjson") {
				stamps[strings.TrimSuffix(filepath.Base(path), ".ndjson")] = stamp
			}
			return nil
		})
		if err != nil {
			return 0, 0, nil, fmt.Errorf("look at the messaging journal in %s: %w", root, err)
		}
	}
	files = h.Sum64()
	if !j.exists() {
		return files, 0, nil, nil
	}
	st, err := j.open()
	if err != nil {
		return 0, 0, nil, err
	}
	defer st.Close()
	if agents, err = st.Agents(ctx); err != nil {
		return 0, 0, nil, fmt.Errorf("read the agent registry in %s: %w", j.dir, err)
	}
	return files, onlineHash(agents), agents, nil
}

// onlineHash hashes the agents' online states.
func onlineHash(agents []journal.AgentRecord) uint64 {
	ho := fnv.New64a()
	for _, a := range agents {
		fmt.Fprintf(ho, "%s\x00%t\n", a.AgentID, a.Online)
	}
	return ho.Sum64()
}

// sourceFingerprints is fingerprints for a JournalSource: its version,
// and the agents' online states read from it. Every ledger is read again
// with the next snapshot (stamped with the version).
func (j *journalView) sourceFingerprints(ctx context.Context) (files, online uint64, agents []journal.AgentRecord, err error) {
	if files, err = j.src.Version(ctx); err != nil {
		return 0, 0, nil, fmt.Errorf("look at the messaging journal: %w", err)
	}
	j.mu.Lock()
	st := j.registry
	if st == nil {
		if st, err = j.src.Open(ctx); err != nil {
			j.mu.Unlock()
			return 0, 0, nil, fmt.Errorf("open the messaging journal: %w", err)
		}
		j.registry = st
	}
	j.mu.Unlock()
	if agents, err = st.Agents(ctx); err != nil {
		return 0, 0, nil, fmt.Errorf("read the agent registry: %w", err)
	}
	stamps := map[string]string{}
	for _, a := range agents {
		stamps[a.AgentID] = fmt.Sprint(files)
	}
	j.mu.Lock()
	j.stamps = stamps
	j.mu.Unlock()
	if agents == nil {
		agents = []journal.AgentRecord{} // a registry that exists, empty
	}
	return files, onlineHash(agents), agents, nil
}

func (j *journalView) open() (journal.Store, error) {
	if j.src != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		st, err := j.src.Open(ctx)
		if err != nil {
			return nil, fmt.Errorf("open the messaging journal: %w", err)
		}
		return st, nil
	}
	st, err := journal.OpenFile(journal.FileOptions{Dir: j.dir, Fsync: journal.FsyncNever})
	if err != nil {
		return nil, fmt.Errorf("open the messaging journal in %s: %w", j.dir, err)
	}
	return st, nil
}

// current returns the snapshot, reading the journal again when it
// changed since the last read.
func (j *journalView) current(ctx context.Context) (*snapshot, error) {
	fp, agents, err := j.fingerprint(ctx)
	if err != nil {
		return nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.snap != nil && j.snap.fingerprint == fp {
		return j.snap, nil
	}
	s := &snapshot{fingerprint: fp, readAt: j.now(), agents: agents, inboxes: map[string][]message{}}
	if agents == nil {
		j.snap = s
		return s, nil
	}
	if err := j.readNew(ctx, agents); err != nil {
		return nil, err
	}
	st, err := j.open()
	if err != nil {
		return nil, err
	}
	defer st.Close()
	j.refreshLedgers()
	for r, raw := range j.raw {
		s.inboxes[r] = j.annotate(r, raw, s.readAt)
		s.all = append(s.all, s.inboxes[r]...)
	}
	slices.SortStableFunc(s.all, func(a, b message) int { return b.SentAt.Compare(a.SentAt) })
	types := map[string]bool{}
	for _, m := range s.all {
		types[m.Type] = true
	}
	for t := range types {
		s.types = append(s.types, t)
	}
	slices.Sort(s.types)
	dead, err := st.DeadLetters(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the dead letters in %s: %w", j.dir, err)
	}
	slices.Reverse(dead)
	s.dead = dead
	j.snap = s
	return s, nil
}

// readNew reads what was appended to each inbox since the last read,
// keeping the newest 2×limit transmissions per receiver.
func (j *journalView) readNew(ctx context.Context, agents []journal.AgentRecord) error {
	if j.reader == nil {
		st, err := j.open()
		if err != nil {
			return err
		}
		j.reader, j.inboxes, j.raw = st, map[string]journal.Inbox{}, map[string][]message{}
	}
	receivers := map[string]bool{}
	for _, a := range agents {
		receivers[a.AgentID] = true
	}
	if entries, err := os.ReadDir(filepath.Join(j.dir, "channels")); j.src == nil && err == nil {
		for _, e := range entries {
			if _, r, ok := strings.Cut(e.Name(), "_to_"); ok && envelope.CheckAgentID(r) == nil {
				receivers[r] = true
			}
		}
	}
	for r := range receivers {
		in, ok := j.inboxes[r]
		if !ok {
			var err error
			if in, err = j.reader.Inbox(r); err != nil {
				return fmt.Errorf("open the inbox of %s: %w", r, err)
			}
			j.inboxes[r] = in
		}
		got := j.raw[r]
		err := in.Read(ctx, func(e *envelope.Envelope) error {
			got = append(got, message{Seq: e.Seq, MessageID: e.MessageID, RequestID: e.RequestID, CorrelationID: e.CorrelationID,
				Sender: e.Sender.AgentID, Receiver: e.Receiver.AgentID, Type: e.MessageType, Priority: string(e.Priority),
				SentAt: e.Time(), ExpiresAt: e.ExpiresAt(), Retry: e.Metadata.RetryCount, Payload: displayJSON(string(e.Payload), false)})
			return nil
		})
		if err != nil {
			return fmt.Errorf("read the inbox of %s: %w", r, err)
		}
		if len(got) > 2*j.limit {
			got = slices.Clone(got[len(got)-j.limit:])
		}
		j.raw[r] = got
	}
	return nil
}

// refreshLedgers reloads the ledgers whose files changed since they were
// read, from a store opened for this refresh (a store caches the ledgers
// it loaded, and other processes write them).
func (j *journalView) refreshLedgers() {
	if j.ledgers == nil {
		j.ledgers = map[string]cachedLedger{}
	}
	var st journal.Store // one for this refresh, opened when a ledger changed
	for id, stamp := range j.stamps {
		if c, ok := j.ledgers[id]; ok && c.stamp == stamp || envelope.CheckAgentID(id) != nil {
			continue
		}
		if st == nil {
			var err error
			if st, err = j.open(); err != nil {
				return
			}
			defer st.Close()
		}
		if l, err := st.Ledger(id); err == nil {
			j.ledgers[id] = cachedLedger{stamp: stamp, ledger: l}
		}
	}
}

// annotate returns the newest limit transmissions into receiver, newest
// first, with their delivery state, the receiver's answer, and whether
// they are open or overdue.
func (j *journalView) annotate(receiver string, raw []message, now time.Time) []message {
	out := slices.Clone(raw)
	slices.SortStableFunc(out, func(a, b message) int { return b.SentAt.Compare(a.SentAt) })
	if len(out) > j.limit {
		out = out[:j.limit]
	}
	seen := map[string]bool{}
	for i := range out {
		m := &out[i]
		if l, ok := j.ledgers[m.Sender]; ok {
			if rec, ok := l.ledger.Message(m.MessageID); ok {
				m.State = string(rec.State)
			}
		}
		reply := m.Type == envelope.Ack || m.Type == envelope.Nack
		if l, ok := j.ledgers[receiver]; ok && !reply {
			if a, ok := l.ledger.Inbound(m.Sender, m.RequestID); ok {
				m.Answer = a.Status
			}
		}
		key := m.Sender + "\x00" + m.RequestID
		expired := !m.ExpiresAt.IsZero() && !m.ExpiresAt.After(now)
		m.Open = !reply && !expired && !seen[key] && m.Answer != journal.InboundProcessed && m.Answer != journal.InboundNacked
		m.Overdue = m.Open && m.Retry > 0
		seen[key] = true // a retry supersedes the earlier transmissions (newest come first)
	}
	return out
}

// replies returns the ACK and NACK messages that answer messageID, from
// the sender's inbox: the message's acknowledgement history.
func (s *snapshot) replies(sender, messageID string) []message {
	var out []message
	for _, m := range s.inboxes[sender] {
		if m.Type != envelope.Ack && m.Type != envelope.Nack {
			continue
		}
		var p struct {
			Acked    string `json:"acknowledgedMessageId"`
			Rejected string `json:"rejectedMessageId"`
		}
		if json.Unmarshal([]byte(m.Payload), &p) == nil && (p.Acked == messageID || p.Rejected == messageID) {
			out = append(out, m)
		}
	}
	slices.Reverse(out) // oldest first
	return out
}

// find returns the message with id in any inbox.
func (s *snapshot) find(id string) (message, bool) {
	for _, msgs := range s.inboxes {
		for _, m := range msgs {
			if m.MessageID == id {
				return m, true
			}
		}
	}
	return message{}, false
}

// activeDead returns the dead letters not yet requeued or resolved.
func (s *snapshot) activeDead() []journal.DeadLetter {
	var out []journal.DeadLetter
	for _, d := range s.dead {
		if d.Status == journal.DeadActive {
			out = append(out, d)
		}
	}
	return out
}
