package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func env(sender, receiver, id string) *envelope.Envelope {
	return &envelope.Envelope{
		Version: envelope.Version, MessageID: id, RequestID: "r-" + id, Timestamp: envelope.FormatTime(t0),
		Sender:      envelope.Agent{AgentID: sender, Type: envelope.Manager},
		Receiver:    envelope.Agent{AgentID: receiver, Type: envelope.Implementation},
		MessageType: "CUSTOM_TEST", Priority: envelope.Normal, Payload: json.RawMessage(`{"n":1}`),
	}
}

// StoreBackend is a Store implementation the shared store tests run
// against.
type StoreBackend struct {
	Name string
	Open func(t testing.TB) Store
}

// StoreBackends is the table of backends of the shared store tests:
// memory and files here; test files of package journal_test add the
// backends that live in other packages (nats).
var StoreBackends = []StoreBackend{
	{"memory", func(testing.TB) Store { return NewMemory() }},
	{"file", func(t testing.TB) Store {
		s, err := OpenFile(FileOptions{Dir: t.TempDir(), Fsync: FsyncNever})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

// stores runs f against every backend of StoreBackends.
func stores(t *testing.T, f func(t *testing.T, s Store)) {
	for _, b := range StoreBackends {
		t.Run(b.Name, func(t *testing.T) { s := b.Open(t); defer s.Close(); f(t, s) })
	}
}

func readAll(t *testing.T, in Inbox) []*envelope.Envelope {
	t.Helper()
	var out []*envelope.Envelope
	if err := in.Read(context.Background(), func(e *envelope.Envelope) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStoreAppendAndRead(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		in, err := s.Inbox("b")
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		for i := 1; i <= 5; i++ {
			seq, err := s.Append(ctx, env("a", "b", fmt.Sprint("m", i)))
			if err != nil || seq != uint64(i) {
				t.Fatalf("Append %d = %d, %v", i, seq, err)
			}
		}
		if _, err := s.Append(ctx, env("c", "b", "x1")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, env("b", "a", "y1")); err != nil {
			t.Fatal(err)
		}
		got := readAll(t, in)
		if len(got) != 6 {
			t.Fatalf("read %d envelopes, want 6", len(got))
		}
		var seqA []uint64
		for _, e := range got {
			if e.Sender.AgentID == "a" {
				seqA = append(seqA, e.Seq)
			}
		}
		if fmt.Sprint(seqA) != "[1 2 3 4 5]" {
			t.Errorf("channel a→b read as %v", seqA)
		}
		if more := readAll(t, in); len(more) != 0 {
			t.Errorf("second read gave %d envelopes", len(more))
		}
		if n, _ := s.LastSequence(ctx, "a", "b"); n != 5 {
			t.Errorf("LastSequence = %d", n)
		}
		// An error from fn makes the same envelope come again.
		s.Append(ctx, env("a", "b", "m6"))
		boom := errors.New("boom")
		if err := in.Read(ctx, func(*envelope.Envelope) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("Read = %v", err)
		}
		if again := readAll(t, in); len(again) != 1 || again[0].MessageID != "m6" {
			t.Errorf("after an error, read %v", again)
		}
	})
}

func TestStoreConcurrentAppendsKeepSeqDense(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Go(func() {
				for i := 0; i < 50; i++ {
					if _, err := s.Append(ctx, env("a", "b", fmt.Sprintf("g%d-%d", g, i))); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		in, _ := s.Inbox("b")
		defer in.Close()
		got := readAll(t, in)
		if len(got) != 200 {
			t.Fatalf("read %d", len(got))
		}
		for i, e := range got {
			if e.Seq != uint64(i+1) {
				t.Fatalf("envelope %d has seq %d", i, e.Seq)
			}
		}
	})
}

func TestStoreRegistryClaimsDeadLetters(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		release, err := s.Claim("a")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Claim("a"); !errors.Is(err, ErrClaimed) {
			t.Errorf("second Claim = %v, want ErrClaimed", err)
		}
		s.PutAgent(ctx, AgentRecord{AgentID: "b", Type: envelope.AdHoc, ProtocolVersion: "1.0.0"})
		s.PutAgent(ctx, AgentRecord{AgentID: "a", Type: envelope.Manager, ProtocolVersion: "1.0.0"})
		s.PutAgent(ctx, AgentRecord{AgentID: "c", Type: envelope.Manager})
		s.PutAgent(ctx, AgentRecord{AgentID: "c", Removed: true})
		agents, err := s.Agents(ctx)
		if err != nil || len(agents) != 2 || agents[0].AgentID != "a" || !agents[0].Online || agents[1].Online {
			t.Fatalf("Agents = %+v, %v", agents, err)
		}
		release()
		if _, err := s.Claim("a"); err != nil {
			t.Errorf("Claim after release: %v", err)
		}

		s.AddDeadLetter(ctx, DeadLetter{MessageID: "m1", Status: DeadActive, ExpiresAt: t0.Add(time.Hour)})
		s.AddDeadLetter(ctx, DeadLetter{MessageID: "m2", Status: DeadActive, ExpiresAt: t0.Add(2 * time.Hour)})
		s.AddDeadLetter(ctx, DeadLetter{MessageID: "m1", Status: DeadRequeued, ExpiresAt: t0.Add(time.Hour)})
		dl, _ := s.DeadLetters(ctx)
		if len(dl) != 2 || dl[0].Status != DeadRequeued || dl[1].MessageID != "m2" {
			t.Errorf("DeadLetters = %+v", dl)
		}
		n, err := s.PurgeExpired(ctx, t0.Add(time.Hour))
		if err != nil || n != 1 {
			t.Errorf("PurgeExpired = %d, %v", n, err)
		}
		if dl, _ := s.DeadLetters(ctx); len(dl) != 1 || dl[0].MessageID != "m2" {
			t.Errorf("after purge: %+v", dl)
		}
	})
}

func TestLedgerQueriesAndPurge(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		l, err := s.Ledger("a")
		if err != nil {
			t.Fatal(err)
		}
		req := RequestRecord{RequestID: "r1", Sender: "a", Receivers: []string{"b", "c"}, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour), Envelope: *env("a", "*", "")}
		l.Put(ctx, RequestRec(req),
			MessageRec(MessageRecord{MessageID: "m1", RequestID: "r1", Receiver: "b", State: InTransit, At: t0}),
			MessageRec(MessageRecord{MessageID: "m2", RequestID: "r1", Receiver: "c", State: InTransit, At: t0}))
		l.Put(ctx, MessageRec(MessageRecord{MessageID: "m1", RequestID: "r1", Receiver: "b", State: Delivered, At: t0.Add(time.Second)}))
		l.Put(ctx, InboundRec(InboundRecord{Sender: "x", RequestID: "q1", MessageID: "z", Status: InboundReceived, ExpiresAt: t0.Add(2 * time.Hour)}))
		if err := l.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if m, ok := l.Message("m1"); !ok || m.State != Delivered {
			t.Errorf("Message(m1) = %+v", m)
		}
		if d, ok := l.Delivery("r1", "c"); !ok || d.MessageID != "m2" {
			t.Errorf("Delivery = %+v", d)
		}
		if u := l.Unacknowledged(""); len(u) != 1 || u[0].MessageID != "m2" {
			t.Errorf("Unacknowledged = %+v", u)
		}
		if h := l.History("r1"); len(h) != 3 {
			t.Errorf("History = %+v", h)
		}
		if p := l.PendingRequests(time.Time{}); len(p) != 1 {
			t.Errorf("PendingRequests = %+v", p)
		}
		if m := l.MessagesInState(Delivered, time.Time{}); len(m) != 1 {
			t.Errorf("MessagesInState = %+v", m)
		}
		l.MarkCompleted(ctx, "r1", Completed, "ref")
		if r, _ := l.Request("r1"); r.Outcome != Completed || r.CompletionRef != "ref" {
			t.Errorf("after MarkCompleted: %+v", r)
		}
		l.MarkFailed(ctx, "r1", envelope.Errorf(envelope.CodeTimeout, "late"))
		if r, _ := l.Request("r1"); r.Outcome != OutcomeFailed || r.Error == nil || r.Error.Code != envelope.CodeTimeout {
			t.Errorf("after MarkFailed: %+v", r)
		}
		n, err := l.PurgeExpired(ctx, t0.Add(time.Hour))
		if err != nil || n != 1 {
			t.Errorf("PurgeExpired = %d, %v", n, err)
		}
		if _, ok := l.Request("r1"); ok {
			t.Error("r1 survived its expiry")
		}
		if _, ok := l.Inbound("x", "q1"); !ok {
			t.Error("q1 purged before its expiry")
		}
		n, _ = l.PurgeExpired(ctx, t0.Add(3*time.Hour))
		if _, ok := l.Inbound("x", "q1"); ok || n != 1 {
			t.Error("q1 survived its expiry")
		}
	})
}

func openFile(t *testing.T, dir string, opts FileOptions) *FileStore {
	t.Helper()
	opts.Dir = dir
	s, err := OpenFile(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFileLedgerSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openFile(t, dir, FileOptions{})
	l, _ := s.Ledger("a")
	l.Put(ctx, RequestRec(RequestRecord{RequestID: "r1", Sender: "a", CreatedAt: t0}),
		MessageRec(MessageRecord{MessageID: "m1", RequestID: "r1", Receiver: "b", State: InTransit, At: t0}))
	l.Sync(ctx)
	s.Close()
	// A torn last line, as a crash mid-write would leave.
	path := filepath.Join(dir, "ledger", "a.ndjson")
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"kind":"message","message":{"messageId":"m1","requ`)
	f.Close()

	s = openFile(t, dir, FileOptions{})
	defer s.Close()
	l, _ = s.Ledger("a")
	if m, ok := l.Message("m1"); !ok || m.State != InTransit {
		t.Fatalf("after reopen Message(m1) = %+v, %v", m, ok)
	}
	l.Put(ctx, MessageRec(MessageRecord{MessageID: "m1", RequestID: "r1", Receiver: "b", State: Delivered, At: t0}))
	data, _ := os.ReadFile(path)
	var lines int
	eachLine(data, func(line []byte) {
		lines++
		if !json.Valid(line) {
			t.Errorf("invalid line after repair: %s", line)
		}
	})
	if lines != 3 {
		t.Errorf("%d lines, want 3:\n%s", lines, data)
	}
}

func TestFileTornChannelTail(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openFile(t, dir, FileOptions{})
	in, _ := s.Inbox("b")
	for i := 1; i <= 3; i++ {
		s.Append(ctx, env("a", "b", fmt.Sprint("m", i)))
	}
	if got := readAll(t, in); len(got) != 3 {
		t.Fatalf("read %d", len(got))
	}
	path := filepath.Join(dir, "channels", "a_to_b", activeName)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"seq":4,"version":"1.0.0","messageId":"torn`)
	f.Close()
	if got := readAll(t, in); len(got) != 0 {
		t.Fatalf("a torn line was passed: %+v", got[0])
	}
	// Another process (a fresh store) appends: it cuts the torn tail and
	// continues the numbering.
	s2 := openFile(t, dir, FileOptions{})
	defer s2.Close()
	seq, err := s2.Append(ctx, env("a", "b", "m4"))
	if err != nil || seq != 4 {
		t.Fatalf("Append after a torn tail = %d, %v", seq, err)
	}
	got := readAll(t, in)
	if len(got) != 1 || got[0].MessageID != "m4" || got[0].Seq != 4 {
		t.Fatalf("after repair read %+v", got)
	}
	in.Close()
	s.Close()
}

func TestFileRotationAndCompaction(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openFile(t, dir, FileOptions{MaxSegmentBytes: 2048})
	defer s.Close()
	in, _ := s.Inbox("b")
	defer in.Close()
	var got []*envelope.Envelope
	for i := 1; i <= 60; i++ {
		if _, err := s.Append(ctx, env("a", "b", fmt.Sprint("m", i))); err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 { // read now and then, across rotations
			got = append(got, readAll(t, in)...)
		}
	}
	got = append(got, readAll(t, in)...)
	if len(got) != 60 {
		t.Fatalf("read %d, want 60", len(got))
	}
	for i, e := range got {
		if e.Seq != uint64(i+1) {
			t.Fatalf("envelope %d has seq %d", i, e.Seq)
		}
	}
	chdir := filepath.Join(dir, "channels", "a_to_b")
	segs, _ := listSealed(chdir)
	if len(segs) < 3 {
		t.Fatalf("%d sealed segments, want several", len(segs))
	}
	// A fresh reader (a restarted receiver) sees everything, once.
	in2, _ := s.Inbox("b")
	if all := readAll(t, in2); len(all) != 60 {
		t.Fatalf("fresh reader read %d", len(all))
	}
	in2.Close()
	n, err := s.CompactChannel(ctx, "a", "b", 61)
	if err != nil || n != len(segs) {
		t.Fatalf("CompactChannel = %d, %v; want %d", n, err, len(segs))
	}
	// Numbering continues after compaction, even from a fresh store.
	s2 := openFile(t, dir, FileOptions{MaxSegmentBytes: 2048})
	defer s2.Close()
	last, _ := s2.LastSequence(ctx, "a", "b")
	if last != 60 {
		t.Fatalf("LastSequence after compaction = %d", last)
	}
	in3, _ := s2.Inbox("b")
	defer in3.Close()
	rest := readAll(t, in3)
	for _, e := range rest {
		if e.Seq <= segs[len(segs)-1].last {
			t.Errorf("compacted seq %d still read", e.Seq)
		}
	}
	if len(rest) != int(60-segs[len(segs)-1].last) {
		t.Errorf("read %d after compaction", len(rest))
	}
	// Everything compacted, then a rotation-free append: numbering goes on.
	for i := 0; i < 40; i++ {
		s2.Append(ctx, env("a", "b", fmt.Sprint("n", i)))
	}
	s2.CompactChannel(ctx, "a", "b", 1000)
	s3 := openFile(t, dir, FileOptions{MaxSegmentBytes: 2048})
	defer s3.Close()
	if seq, _ := s3.Append(ctx, env("a", "b", "last")); seq != 101 {
		t.Errorf("seq after full compaction = %d, want 101", seq)
	}
}

func TestFileInboxNotification(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	recv := openFile(t, dir, FileOptions{PollInterval: time.Hour})
	defer recv.Close()
	in, _ := recv.Inbox("b")
	defer in.Close()
	<-in.Changed() // the initial signal
	readAll(t, in)
	// Another store (as another process would) creates a new channel and
	// appends; the inbox hears of it without polling.
	send := openFile(t, dir, FileOptions{})
	defer send.Close()
	for i := 0; i < 3; i++ {
		send.Append(ctx, env(fmt.Sprint("s", i), "b", "m"))
		deadline := time.After(10 * time.Second)
		var got []*envelope.Envelope
		for len(got) == 0 {
			select {
			case <-in.Changed():
			case <-deadline:
				t.Fatalf("no notification for append %d", i)
			}
			got = readAll(t, in)
		}
	}
}

func TestFsyncPolicies(t *testing.T) {
	for _, p := range []FsyncPolicy{FsyncAlways, FsyncBatch, FsyncNever} {
		s := openFile(t, t.TempDir(), FileOptions{Fsync: p})
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Go(func() {
				for i := 0; i < 20; i++ {
					if _, err := s.Append(context.Background(), env("a", "b", "m")); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		if err := s.Sync(context.Background()); err != nil {
			t.Errorf("%s: Sync: %v", p, err)
		}
		s.Close()
	}
	if _, err := ParseFsyncPolicy("sometimes"); err == nil {
		t.Error("ParseFsyncPolicy accepted nonsense")
	}
}

func TestClosedStore(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		s.Close()
		if _, err := s.Append(context.Background(), env("a", "b", "m")); !errors.Is(err, ErrClosed) {
			t.Errorf("Append after Close = %v", err)
		}
	})
}

func TestUnsafeIDsRefused(t *testing.T) {
	s := openFile(t, t.TempDir(), FileOptions{})
	defer s.Close()
	for _, id := range []string{"../x", "a/b", ""} {
		_, err := s.Append(context.Background(), env(id, "b", "m"))
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Code != envelope.CodeInvalidReceiver {
			t.Errorf("Append from %q = %v", id, err)
		}
		if _, err := s.Ledger(id); err == nil {
			t.Errorf("Ledger(%q) accepted", id)
		}
	}
}
