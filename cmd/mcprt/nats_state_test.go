package main

// The shared state through the binary (aacp.stateBackend=nats): two mcprt
// processes with separate data directories, connected only through an
// `mcprt nats` hub, share memory, reservations and the work queue.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// stateEnv is the environment of an mcprt process whose messaging and
// shared state are on the hub.
func (h *hub) stateEnv(extra ...string) []string {
	return h.clientEnv(append([]string{"MCPRT_AACP_STATE_BACKEND=nats"}, extra...)...)
}

func TestNATSSharedMemory(t *testing.T) {
	t.Parallel()
	h := newHub(t)
	a := startAgent(t, filepath.Join(t.TempDir(), "a"), "alice", "Manager", h.stateEnv()...)
	b := startAgent(t, filepath.Join(t.TempDir(), "b"), "bob", "Implementation", h.stateEnv()...)

	st := a.ok(t, "memory_store", `{"namespace":"proj","key":"decision/db","value":{"text":"we chose sqlite for the local index"}}`)
	if st["replaced"] != false {
		t.Fatalf("memory_store = %v, want a new entry", st)
	}
	// Read-your-writes on the writer.
	if got := a.ok(t, "memory_retrieve", `{"namespace":"proj","key":"decision/db"}`); got["found"] != true {
		t.Fatalf("the writer does not read its own write: %v", got)
	}
	// b writes after a: once b's own write is applied on b, so is a's
	// (the stream orders them), and b's local full-text index finds it.
	b.ok(t, "memory_store", `{"namespace":"proj","key":"note/b","value":"bob was here"}`)
	res := b.ok(t, "memory_search", `{"query":"sqlite index","fullText":true}`)
	if rs, _ := res["results"].([]any); anum(res, "count") != 1 || len(rs) != 1 || astr(rs[0], "key") != "decision/db" {
		t.Fatalf("memory_search on the other process = %v, want decision/db", res)
	}
	// An overwrite and a delete on b reach a.
	if got := b.ok(t, "memory_store", `{"namespace":"proj","key":"decision/db","value":"changed"}`); got["replaced"] != true {
		t.Fatalf("overwrite on b = %v, want replaced", got)
	}
	b.ok(t, "memory_delete", `{"namespace":"proj","key":"note/b"}`)
	a.ok(t, "memory_store", `{"namespace":"sync","key":"k","value":1}`)
	if got := a.ok(t, "memory_retrieve", `{"namespace":"proj","key":"decision/db"}`); string(mustJSON(t, got["value"])) != `"changed"` {
		t.Fatalf("a reads %v, want b's overwrite", got)
	}
	if got := a.ok(t, "memory_retrieve", `{"namespace":"proj","key":"note/b"}`); got["found"] != false {
		t.Fatalf("a still finds b's deleted entry: %v", got)
	}
	// health reports the applier, caught up.
	hl := a.ok(t, "health", `{}`)
	ss, _ := hl["messaging"].(map[string]any)["sharedState"].(map[string]any)
	if ss == nil || ss["applied"] != ss["last"] || anum(hl, "messaging", "sharedState", "applied") < 5 {
		t.Fatalf("health sharedState = %v, want applied = last ≥ 5", ss)
	}
}

func TestNATSSharedCoordination(t *testing.T) {
	t.Parallel()
	h := newHub(t)
	ps := make([]*aproc, 2)
	for i, name := range []string{"alice", "bob"} {
		ps[i] = startAgent(t, filepath.Join(t.TempDir(), name), name, "Implementation", h.stateEnv("MCPRT_SERVER_MODE=TEST")...)
		ps[i].ok(t, "check_reservations", `{"paths":["warm-up"]}`) // registers the agent
	}
	a, b := ps[0], ps[1]

	// A reservation on one process is a conflict on the other.
	if r := a.ok(t, "reserve_paths", `{"paths":["src/**"],"reason":"refactor"}`); r["granted"] != true {
		t.Fatalf("reserve on alice: %v", r)
	}
	r := b.ok(t, "reserve_paths", `{"paths":["src/main.go"]}`)
	cs, _ := r["conflicts"].([]any)
	if r["granted"] != false || len(cs) != 1 || astr(cs[0], "heldBy") != "alice" || astr(cs[0], "holding") != "src/**" {
		t.Fatalf("reserve on bob = %v, want a conflict with alice's src/**", r)
	}

	// A session created on one process is joined on the other.
	s := a.ok(t, "session_create", `{"initiator":"alice","task":"ship","workspace":"/repo"}`)
	sid := astr(s, "sessionId")
	b.ok(t, "memory_store", `{"key":"sync","value":1}`) // b has applied everything before its own write
	if j := b.ok(t, "session_join", `{"sessionId":"`+sid+`","agentId":"bob","role":"review"}`); j["joined"] != true {
		t.Fatalf("session_join on bob: %v", j)
	}
	a.ok(t, "memory_store", `{"key":"sync","value":2}`) // and a has applied bob's join
	if st := a.ok(t, "session_status", `{"sessionId":"`+sid+`"}`); len(st["participants"].([]any)) != 2 {
		t.Fatalf("alice's session_status after bob joined: %v", st)
	}

	// Claim races: each round a task posted on one process, claimed by
	// both at once: exactly one gets it.
	rounds := envInt("MCPRT_NATS_CLAIM_ROUNDS", 10)
	wins := [2]int{}
	for i := range rounds {
		ps[i%2].ok(t, "task_post", fmt.Sprintf(`{"title":"t%d","description":"race","labels":["round%d"]}`, i, i))
		var ids [2]string
		for k := range 2 {
			w := (i + k) % 2
			ids[w] = ps[w].send("task_claim", fmt.Sprintf(`{"labels":["round%d"]}`, i))
		}
		n := 0
		for k := range 2 {
			v, e := ps[k].await(t, ids[k])
			if e != nil {
				t.Fatalf("round %d, %s: %s %s", i, ps[k].agent, e.Code, e.Message)
			}
			if v["claimed"] == true {
				n++
				wins[k]++
			}
		}
		if n != 1 {
			t.Fatalf("round %d: %d claims of one task, want exactly 1", i, n)
		}
	}
	t.Logf("%d rounds: alice won %d, bob won %d", rounds, wins[0], wins[1])
}

// TestNATSSharedStateStartupFailsFast: with the shared state on NATS and
// NATS unreachable, the process exits 1 and says why, even when messaging
// stays on files.
func TestNATSSharedStateStartupFailsFast(t *testing.T) {
	t.Parallel()
	p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Env: []string{"MCPRT_AACP_DATA_DIR=" + t.TempDir(),
		"MCPRT_AACP_STATE_BACKEND=nats", "MCPRT_NATS_URL=nats://" + freeAddr(t), "MCPRT_NATS_CONNECT_TIMEOUT_MS=300"}})
	if code := p.Wait(t); code != exitFatal {
		t.Fatalf("exit %d, want %d\nstderr:\n%s", code, exitFatal, p.Stderr())
	}
	if !strings.Contains(p.Stderr(), "unreachable") {
		t.Errorf("stderr does not say the engine is unreachable:\n%s", p.Stderr())
	}
}
