package broker

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// The multi-process tests re-execute the test binary as helper processes
// (TestHelperProcess, selected by the AACP_HELPER environment variable)
// that share one data directory.

var mpCount = flag.Int("aacp.count", 300, "messages each process sends in the multi-process test")

// helperEnv returns the environment of a helper process.
func helperEnv(role string, kv ...string) []string {
	env := append(os.Environ(), "AACP_HELPER="+role)
	for i := 0; i+1 < len(kv); i += 2 {
		env = append(env, kv[i]+"="+kv[i+1])
	}
	return env
}

func helperCmd(ctx context.Context, role string, kv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = helperEnv(role, kv...)
	cmd.Stderr = os.Stderr
	return cmd
}

// preregister records agents in the directory's registry, offline.
func preregister(t *testing.T, dir string, ids ...string) {
	t.Helper()
	b, err := Open(Options{DataDir: dir, Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := b.RegisterAgent(context.Background(), id, RegisterInput{Type: envelope.Implementation}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// peerReport is what a peer helper prints.
type peerReport struct {
	Agent    string         `json:"agent"`
	Sent     []string       `json:"sent"` // request ids, in send order
	Received []receivedNote `json:"received"`
}

type receivedNote struct {
	From        string `json:"from"`
	N           int    `json:"n"`
	Seq         uint64 `json:"seq"`
	RequestID   string `json:"requestId"`
	Redelivered bool   `json:"redelivered"`
}

func TestMultiProcessExactlyOnceAndOrdered(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	agents := []string{"p0", "p1", "p2", "p3"}
	preregister(t, dir, agents...)
	n := *mpCount / 3 * 3
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	reports := make([]peerReport, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		var peers []string
		for _, p := range agents {
			if p != a {
				peers = append(peers, p)
			}
		}
		cmd := helperCmd(ctx, "peer", "AACP_DIR", dir, "AACP_AGENT", a, "AACP_PEERS", strings.Join(peers, ","), "AACP_N", strconv.Itoa(n))
		wg.Go(func() {
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("helper %s: %v", a, err)
				return
			}
			if err := json.Unmarshal(out, &reports[i]); err != nil {
				t.Errorf("helper %s printed %q: %v", a, out, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	sent := map[string]bool{}
	for _, r := range reports {
		if len(r.Sent) != n {
			t.Errorf("%s sent %d of %d", r.Agent, len(r.Sent), n)
		}
		for _, id := range r.Sent {
			sent[id] = true
		}
	}
	for _, r := range reports {
		if len(r.Received) != n {
			t.Errorf("%s received %d messages, want %d", r.Agent, len(r.Received), n)
		}
		seen := map[string]bool{}
		lastSeq := map[string]uint64{}
		lastN := map[string]int{}
		for _, m := range r.Received {
			key := fmt.Sprintf("%s/%d", m.From, m.N)
			if seen[key] {
				t.Errorf("%s received %s twice", r.Agent, key)
			}
			seen[key] = true
			if !sent[m.RequestID] {
				t.Errorf("%s received request %s nobody sent", r.Agent, m.RequestID)
			}
			if m.Seq <= lastSeq[m.From] || (lastN[m.From] != 0 && m.N <= lastN[m.From]) {
				t.Errorf("%s: channel from %s out of order: seq %d after %d, n %d after %d", r.Agent, m.From, m.Seq, lastSeq[m.From], m.N, lastN[m.From])
			}
			lastSeq[m.From], lastN[m.From] = m.Seq, m.N
		}
	}
	// The journal reopens cleanly and every file is valid NDJSON.
	checkNDJSON(t, dir)
}

// checkNDJSON checks that every complete line of every .ndjson file under
// dir is a JSON object.
func checkNDJSON(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".ndjson") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
			return nil
		}
		lines := strings.Split(string(data), "\n")
		for i, line := range lines[:len(lines)-1] {
			if !json.Valid([]byte(line)) || !strings.HasPrefix(line, "{") {
				t.Errorf("%s line %d is not a JSON object: %.80q", path, i+1, line)
			}
		}
		return nil
	})
}

// TestHelperProcess is the body of the helper processes; it does nothing
// in a normal test run.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv("AACP_HELPER")
	if role == "" {
		t.Skip("a helper for the multi-process tests")
	}
	var err error
	switch role {
	case "peer":
		err = runPeer()
	case "sender":
		err = runSender()
	case "echo":
		err = runEcho()
	case "acker":
		err = runAcker()
	default:
		err = fmt.Errorf("unknown helper role %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func helperLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// runPeer registers AACP_AGENT, sends AACP_N messages round-robin to
// AACP_PEERS while receiving and answering everything sent to it, waits
// until its own messages are processed, and prints a peerReport.
func runPeer() error {
	dir, me, n := os.Getenv("AACP_DIR"), os.Getenv("AACP_AGENT"), atoi(os.Getenv("AACP_N"))
	peers := strings.Split(os.Getenv("AACP_PEERS"), ",")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	b, err := Open(Options{DataDir: dir, Logger: helperLogger()})
	if err != nil {
		return err
	}
	defer b.Close()
	if _, err := b.RegisterAgent(ctx, me, RegisterInput{Type: envelope.Implementation}); err != nil {
		return err
	}
	rep := peerReport{Agent: me, Received: []receivedNote{}}
	var wg sync.WaitGroup
	var recvErr error
	wg.Go(func() {
		for len(rep.Received) < n {
			out, err := b.Receive(ctx, me, ReceiveInput{WaitMs: 1000, Max: 100})
			if err != nil {
				recvErr = err
				return
			}
			for _, m := range out.Messages {
				var p struct{ N int }
				json.Unmarshal(m.Payload, &p)
				rep.Received = append(rep.Received, receivedNote{m.Sender.AgentID, p.N, m.Seq, m.RequestID, m.Redelivered})
				if _, err := b.Ack(ctx, me, AckInput{MessageID: m.MessageID, Status: "processed"}); err != nil {
					recvErr = err
					return
				}
			}
		}
	})
	for i := 1; i <= n; i++ {
		out, err := b.Send(ctx, me, SendInput{Receiver: Receiver{AgentID: peers[(i-1)%len(peers)]}, MessageType: "CUSTOM_SEQ", Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
		if err != nil {
			return err
		}
		rep.Sent = append(rep.Sent, out.RequestID)
	}
	wg.Wait()
	if recvErr != nil {
		return recvErr
	}
	// Wait (bounded) for the peers' ACKs, which the broker's inbox
	// goroutine applies as they arrive.
	for _, id := range rep.Sent {
		for {
			st, err := b.Status(ctx, me, StatusInput{RequestID: id})
			if err != nil {
				return err
			}
			if st.Outcome == journal.Completed {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("request %s still %s/%s", id, st.State, st.Outcome)
			}
			b.Receive(ctx, me, ReceiveInput{WaitMs: 50}) // waits for inbox activity
		}
	}
	return json.NewEncoder(os.Stdout).Encode(rep)
}

// runSender registers AACP_AGENT and sends to AACP_TO until killed,
// printing the payload number of each send that returned.
func runSender() error {
	dir, me, to := os.Getenv("AACP_DIR"), os.Getenv("AACP_AGENT"), os.Getenv("AACP_TO")
	ctx := context.Background()
	b, err := Open(Options{DataDir: dir, Logger: helperLogger(), Manual: true})
	if err != nil {
		return err
	}
	if _, err := b.RegisterAgent(ctx, me, RegisterInput{Type: envelope.Manager}); err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 1; ; i++ {
		if _, err := b.Send(ctx, me, SendInput{Receiver: Receiver{AgentID: to}, MessageType: "CUSTOM_SEQ", Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}); err != nil {
			return err
		}
		fmt.Fprintln(w, i)
		w.Flush()
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func TestCrashDuringSendsLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	preregister(t, dir, "rcv")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := helperCmd(ctx, "sender", "AACP_DIR", dir, "AACP_AGENT", "snd", "AACP_TO", "rcv")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill -9 once 150 sends have returned, while more are under way.
	sc := bufio.NewScanner(stdout)
	var returned []int
	for sc.Scan() {
		returned = append(returned, atoi(sc.Text()))
		if len(returned) == 150 {
			cmd.Process.Signal(syscall.SIGKILL)
			break
		}
	}
	rest, _ := io.ReadAll(stdout) // lines written before the kill landed
	for _, f := range strings.Fields(string(rest)) {
		returned = append(returned, atoi(f))
	}
	cmd.Wait()
	if len(returned) < 150 {
		t.Fatalf("the sender returned only %d sends before it stopped", len(returned))
	}
	checkNDJSON(t, dir)

	// A new process (this one) hosts both agents: the journal reopens,
	// the receiver gets every returned send exactly once, and the
	// sender's deliveries complete.
	r := newRig(t, Options{DataDir: dir})
	r.clock.Set(time.Now()) // the helper stamped its records with real time
	snd, err := r.b.RegisterAgent(r.ctx, "snd", RegisterInput{Type: envelope.Manager})
	if err != nil {
		t.Fatal(err)
	}
	if snd.PendingOutbound < len(returned) {
		t.Errorf("the restarted sender resumed %d pending deliveries, want at least %d", snd.PendingOutbound, len(returned))
	}
	r.register("rcv", envelope.Implementation)
	got := map[int]int{}
	drain := func() {
		for {
			msgs := r.receive("rcv", MaxReceive)
			if len(msgs) == 0 {
				return
			}
			for _, m := range msgs {
				var p struct{ N int }
				json.Unmarshal(m.Payload, &p)
				got[p.N]++
				r.ack("rcv", m.MessageID, "processed")
			}
		}
	}
	drain()
	// A send cut short by the kill may be in the ledger but not in the
	// channel: its acknowledgement times out and the resumed sender
	// retries it.
	r.advance(31 * time.Second)
	r.advance(2 * time.Second)
	drain()
	for _, n := range returned {
		if got[n] != 1 {
			t.Errorf("send %d returned but was received %d times", n, got[n])
		}
	}
	for n, c := range got {
		if c != 1 {
			t.Errorf("message %d received %d times", n, c)
		}
	}
	r.b.Pump(r.ctx)
	if left := r.b.agents["snd"].ledger.Unacknowledged(""); len(left) != 0 {
		t.Errorf("%d deliveries still unacknowledged after every message was processed", len(left))
	}
	ns := slices.Sorted(func(yield func(int) bool) {
		for n := range got {
			if !yield(n) {
				return
			}
		}
	})
	if len(ns) > 0 && ns[len(ns)-1] != len(ns) {
		t.Errorf("received numbers are not 1..%d: top %d", len(ns), ns[len(ns)-1])
	}
}
