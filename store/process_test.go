package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/domain/session"
)

// The helper-process pattern: the test binary re-executes itself with
// helperMode set, and TestMain runs the helper instead of the tests. Each
// helper is a separate process with its own DB handle on the shared
// directory, like two mcprt servers.
const (
	helperMode    = "MCPRT_STORE_HELPER_MODE"
	helperDir     = "MCPRT_STORE_HELPER_DIR"
	helperName    = "MCPRT_STORE_HELPER_NAME"
	helperCount   = "MCPRT_STORE_HELPER_COUNT"
	helperSession = "MCPRT_STORE_HELPER_SESSION"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperMode); mode != "" {
		if err := runHelper(mode); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperResult is what the "read" helper prints.
type helperResult struct {
	Found     bool            `json:"found"`
	Value     json.RawMessage `json:"value"`
	KeyHits   int             `json:"keyHits"`
	WordHits  int             `json:"wordHits"`
	Sessions  int             `json:"sessions"`
	Attendees int             `json:"attendees"`
}

func runHelper(mode string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := New(Options{Dir: os.Getenv(helperDir)})
	if err != nil {
		return err
	}
	defer db.Close()
	mem := memory.NewService(db.Memory(), nil)
	sess := session.NewService(db.Sessions(), nil, nil)
	name := os.Getenv(helperName)
	count, _ := strconv.Atoi(os.Getenv(helperCount))
	switch mode {
	case "work":
		// Several goroutines write at once, as concurrent tool calls do.
		const workers = 4
		errs := make(chan error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < count; i += workers {
					v := fmt.Sprintf(`{"who":%q,"i":%d,"text":"greetings from %s"}`, name, i, name)
					if _, _, err := mem.Put(ctx, "shared", fmt.Sprintf("from-%s-%d", name, i), json.RawMessage(v)); err != nil {
						errs <- fmt.Errorf("put %d: %w", i, err)
						return
					}
					if id := os.Getenv(helperSession); id != "" {
						if _, _, err := sess.Join(ctx, id, fmt.Sprintf("%s-%d", name, i), "worker"); err != nil {
							errs <- fmt.Errorf("join %d: %w", i, err)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		return <-errs // nil when the channel is empty
	case "read":
		var r helperResult
		e, found, err := mem.Get(ctx, "shared", "from-"+name+"-0")
		if err != nil {
			return err
		}
		r.Found, r.Value = found, e.Value
		hits, err := mem.Search(ctx, memory.SearchQuery{Query: "from-" + name, Limit: memory.MaxSearchLimit})
		if err != nil {
			return err
		}
		r.KeyHits = len(hits)
		if hits, err = mem.Search(ctx, memory.SearchQuery{Query: "greetings " + name, FullText: true, Limit: memory.MaxSearchLimit}); err != nil {
			return err
		}
		r.WordHits = len(hits)
		if id := os.Getenv(helperSession); id != "" {
			s, err := sess.Get(ctx, id)
			if err != nil {
				return err
			}
			r.Attendees = len(s.Participants)
		}
		return json.NewEncoder(os.Stdout).Encode(r)
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

// helper returns a command that runs the test binary as a helper.
func helper(ctx context.Context, t *testing.T, dir, mode, name string, count int, sessionID string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		helperMode+"="+mode, helperDir+"="+dir, helperName+"="+name,
		helperCount+"="+strconv.Itoa(count), helperSession+"="+sessionID)
	cmd.Stderr = &bytes.Buffer{}
	return cmd
}

func runBoth(t *testing.T, cmds ...*exec.Cmd) {
	t.Helper()
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("helper %d: %v\n%s", i, err, c.Stderr)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

func helperCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// A memory stored by one process is retrieved and searched by another.
func TestProcessesShareMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx, dir := helperCtx(t), t.TempDir()
	runBoth(t, helper(ctx, t, dir, "work", "alice", 3, ""))
	reader := helper(ctx, t, dir, "read", "alice", 0, "")
	out, err := reader.Output()
	if err != nil {
		t.Fatalf("reader: %v\n%s", err, reader.Stderr)
	}
	var r helperResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("reader printed %q: %v", out, err)
	}
	if !r.Found || string(r.Value) != `{"who":"alice","i":0,"text":"greetings from alice"}` || r.KeyHits != 3 || r.WordHits != 3 {
		t.Fatalf("reader saw %+v", r)
	}
}

// Two processes open a fresh directory at once (both migrate) and write
// concurrently, each with several goroutines: no SQLITE_BUSY reaches
// them, and nothing is lost.
func TestProcessesConcurrentWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx, dir := helperCtx(t), t.TempDir()
	const n = 150
	runBoth(t, helper(ctx, t, dir, "work", "a", n, ""), helper(ctx, t, dir, "work", "b", n, ""))
	db, err := New(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := memory.NewService(db.Memory(), nil).Stats(ctx, "shared")
	if err != nil || st.Entries != 2*n {
		t.Fatalf("stats = %+v, %v; want %d entries", st, err, 2*n)
	}
	if got := schemaRows(t, db); len(got) != len(migrations) || got[1] != 1 || got[2] != 1 {
		t.Fatalf("schema_version rows = %v: each step must be applied once", got)
	}
}

// A session created here is joined from two processes at once; every join
// lands and each sees the other's.
func TestProcessesJoinOneSession(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx, dir := helperCtx(t), t.TempDir()
	db, err := New(Options{Dir: dir, Clock: core.NewManualClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := session.NewService(db.Sessions(), nil, nil)
	s, err := svc.Create(ctx, session.CreateRequest{Initiator: "lead", Task: "pair"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 24
	runBoth(t, helper(ctx, t, dir, "work", "x", n, s.ID), helper(ctx, t, dir, "work", "y", n, s.ID))
	got, err := svc.Get(ctx, s.ID)
	if err != nil || len(got.Participants) != 1+2*n {
		t.Fatalf("participants = %d, %v; want %d", len(got.Participants), err, 1+2*n)
	}
	reader := helper(ctx, t, dir, "read", "y", 0, s.ID)
	out, err := reader.Output()
	if err != nil {
		t.Fatalf("reader: %v\n%s", err, reader.Stderr)
	}
	var r helperResult
	if err := json.Unmarshal(out, &r); err != nil || r.Attendees != 1+2*n {
		t.Fatalf("reader saw %+v (%v)", r, err)
	}
}
