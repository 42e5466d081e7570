package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingHooks counts the fsyncs of each data file, by base name of its
// directory (a channel) or file (a ledger).
type countingHooks struct {
	mu     sync.Mutex
	fsyncs map[string]int
}

func (c *countingHooks) hooks() *ioHooks {
	return &ioHooks{sync: func(f *os.File) error {
		c.mu.Lock()
		c.fsyncs[fileKey(f.Name())]++
		c.mu.Unlock()
		return f.Sync()
	}}
}

func (c *countingHooks) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fsyncs[key]
}

func fileKey(path string) string {
	if filepath.Base(path) == activeName {
		return filepath.Base(filepath.Dir(path))
	}
	return filepath.Base(path)
}

// send does what the broker's Send does with one receiver: the request
// and its transmission go to the sender's ledger under the channel's
// lock, ahead of the line.
func send(t *testing.T, s *FileStore, id, payload string) *LineRef {
	t.Helper()
	ctx := context.Background()
	l, err := s.Ledger("x")
	if err != nil {
		t.Fatal(err)
	}
	e := env("x", "y", id)
	e.Payload = json.RawMessage(payload)
	req := RequestRecord{RequestID: e.RequestID, Sender: "x", Receivers: []string{"y"}, Envelope: *e, Outcome: Unknown, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	var at *LineRef
	_, err = s.AppendWith(ctx, e, AppendOptions{Before: func(seq uint64) error {
		m := MessageRecord{MessageID: id, RequestID: e.RequestID, Sender: "x", Receiver: "y", Seq: seq, State: InTransit, At: t0, SentAt: t0, ExpiresAt: req.ExpiresAt}
		at = &LineRef{Receiver: "y", Seq: seq, MessageID: id}
		return l.Put(ctx, RequestRec(req), MessageRec(m))
	}})
	if err != nil {
		t.Fatal(err)
	}
	return at
}

func countIn(t *testing.T, dir, needle string) map[string]int {
	t.Helper()
	out := map[string]int{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
		}
		if n := bytes.Count(data, []byte(needle)); n > 0 {
			rel, _ := filepath.Rel(dir, path)
			out[rel] = n
		}
		return nil
	})
	return out
}

// Under fsync=always a send writes its payload once (in the channel line;
// the ledger's request record names the line) and makes one fsync (the
// channel's); a restarted ledger reads the payload back from the channel,
// and a retry or a failure writes the payload into the ledger, so that
// it outlives the channel line.
func TestSendWritesPayloadOnceAndFsyncsOnce(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	c := &countingHooks{fsyncs: map[string]int{}}
	s := openFile(t, dir, FileOptions{Fsync: FsyncAlways})
	s.setHooks(c.hooks())
	const marker = "payload-marker-7f3a"
	payload := `{"note":"` + marker + `"}`
	send(t, s, "m1", payload)
	if got := countIn(t, dir, marker); len(got) != 1 || got[filepath.Join("channels", "x_to_y", activeName)] != 1 {
		t.Fatalf("payload written %v; want once, in the channel", got)
	}
	if n := c.count("x_to_y"); n != 1 {
		t.Errorf("%d fsyncs of the channel; want 1", n)
	}
	if n := c.count("x.ndjson"); n != 0 {
		t.Errorf("%d fsyncs of the ledger on the send path; want 0 (the line's fsync makes the send durable)", n)
	}
	// Still in memory in this process.
	l, _ := s.Ledger("x")
	if r, _ := l.Request("r-m1"); string(r.Envelope.Payload) != payload {
		t.Fatalf("payload in memory %s", r.Envelope.Payload)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// A restart reads it back from the channel.
	s = openFile(t, dir, FileOptions{Fsync: FsyncAlways})
	l, err := s.Ledger("x")
	if err != nil {
		t.Fatal(err)
	}
	r, ok := l.Request("r-m1")
	if !ok || string(r.Envelope.Payload) != payload {
		t.Fatalf("after a restart: %v %s; want the payload read back from the channel", ok, r.Envelope.Payload)
	}
	// A retry being scheduled writes the payload into the ledger.
	m, _ := l.Delivery("r-m1", "y")
	m.State, m.At = Pending, t0.Add(time.Second)
	if err := l.Put(ctx, MessageRec(m)); err != nil {
		t.Fatal(err)
	}
	if got := countIn(t, dir, marker); got[filepath.Join("ledger", "x.ndjson")] != 1 {
		t.Fatalf("payload written %v; want it in the ledger once a retry is scheduled", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Now the channel line may go: the ledger has the payload itself.
	if err := os.RemoveAll(filepath.Join(dir, "channels")); err != nil {
		t.Fatal(err)
	}
	s = openFile(t, dir, FileOptions{Fsync: FsyncAlways})
	defer s.Close()
	l, _ = s.Ledger("x")
	if r, _ := l.Request("r-m1"); string(r.Envelope.Payload) != payload {
		t.Fatalf("after the channel went: %s; want the payload from the ledger", r.Envelope.Payload)
	}
}

// A ledger read back after a restart finds each request's payload in its
// channel line, checked by messageId (a line of the same seq written by
// someone else, after a failed append, is not taken), with one pass over
// the channel; a request whose line is gone keeps no payload.
func TestLedgerReadsPayloadsBack(t *testing.T) {
	dir := t.TempDir()
	s := openFile(t, dir, FileOptions{Fsync: FsyncNever})
	for _, id := range []string{"a", "b", "c"} {
		send(t, s, id, `{"id":"`+id+`"}`)
	}
	s.Close()
	// Make c's line another transmission's (same seq, another id).
	path := filepath.Join(dir, "channels", "x_to_y", activeName)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(data, []byte(`"messageId":"c"`), []byte(`"messageId":"z"`), 1), 0o644)

	s = openFile(t, dir, FileOptions{Fsync: FsyncNever})
	defer s.Close()
	l, _ := s.Ledger("x")
	for _, tc := range []struct{ id, want string }{{"a", `{"id":"a"}`}, {"b", `{"id":"b"}`}, {"c", ""}} {
		r, ok := l.Request("r-" + tc.id)
		if !ok {
			t.Fatalf("request %s lost", tc.id)
		}
		if got := string(r.Envelope.Payload); got != tc.want && !(tc.want == "" && noPayload(r.Envelope.Payload)) {
			t.Errorf("request %s: payload %q, want %q", tc.id, got, tc.want)
		}
	}
	if fl := l.(*fileLedger); len(fl.filled) != 1 || !fl.filled["y"] {
		t.Errorf("channels read back: %v; want y once", fl.filled)
	}
}

// Concurrent appenders to one channel share fsyncs (group commit): one
// that arrives while an fsync is in flight joins the next one, and none
// returns before an fsync that started after its write finished.
func TestGroupCommit(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	const n = 8
	first := make(chan struct{})
	release := make(chan struct{})
	var mu sync.Mutex
	syncs := 0
	var once sync.Once
	s := openFile(t, dir, FileOptions{Fsync: FsyncAlways})
	defer s.Close()
	s.setHooks(&ioHooks{sync: func(f *os.File) error {
		if !strings.HasSuffix(f.Name(), activeName) {
			return f.Sync()
		}
		mu.Lock()
		syncs++
		mu.Unlock()
		once.Do(func() { close(first); <-release }) // hold the first fsync
		return f.Sync()
	}})
	done := make(chan error, n)
	go func() {
		_, err := s.Append(ctx, env("x", "y", "m0"))
		done <- err
	}()
	<-first // m0's fsync is in flight
	for i := 1; i < n; i++ {
		go func() {
			_, err := s.Append(ctx, env("x", "y", "m"+string(rune('0'+i))))
			done <- err
		}()
	}
	// The others have written their lines (they wait for the fsync):
	// watch the file grow to n lines, bounded.
	deadline := time.After(10 * time.Second)
	for {
		data, _ := os.ReadFile(filepath.Join(dir, "channels", "x_to_y", activeName))
		if bytes.Count(data, []byte("\n")) == n {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("an append returned while the fsync covering it was held: %v", err)
		case <-deadline:
			t.Fatal("the appends did not write their lines")
		case <-time.After(time.Millisecond):
		}
	}
	select {
	case err := <-done:
		t.Fatalf("an append returned before its line was durable: %v", err)
	default:
	}
	close(release)
	for range n {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if syncs != 2 {
		t.Errorf("%d fsyncs for %d appends (one held while the others wrote); want 2", syncs, n)
	}
}
