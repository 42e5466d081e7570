package main

// The NATS backend through the binary: two mcprt processes with separate
// data directories, connected only through an `mcprt nats` hub, send,
// receive and acknowledge; startup fails fast when the engine cannot be
// used; a hub killed and restarted from its store loses nothing
// acknowledged.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

func TestNATSHubTwoProcesses(t *testing.T) {
	t.Parallel()
	h := newHub(t)
	dirA, dirB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	mgr := startAgent(t, dirA, "mgr", "Manager", h.clientEnv()...)
	impl := startAgent(t, dirB, "impl", "Implementation", h.clientEnv()...)
	impl.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)
	mgr.ok(t, "aacp_register_agent", `{"type":"Manager"}`)

	sent := mgr.ok(t, "aacp_send", sendArgsTo("impl", "TASK_ASSIGNMENT", assignment("t1")))
	m := impl.receiveOne(t, "TASK_ASSIGNMENT")
	if astr(m, "requestId") != astr(sent, "requestId") || anum(m, "seq") != 1 {
		t.Fatalf("received %v, want request %s with seq 1", m, astr(sent, "requestId"))
	}
	impl.ok(t, "aacp_ack", `{"messageId":`+jsonString(astr(m, "messageId"))+`,"status":"processed"}`)
	mgr.waitStatus(t, astr(sent, "requestId"), func(st map[string]any) bool { return st["outcome"] == "COMPLETED" })

	// Each sees the other in the shared registry, online.
	agents := mgr.ok(t, "aacp_agents", `{}`)
	if b, _ := json.Marshal(agents); !strings.Contains(string(b), `"impl"`) {
		t.Errorf("the manager does not see impl: %v", agents)
	}
	// health reports the backend.
	hl := mgr.ok(t, "health", `{}`)
	if astr(hl, "messaging", "backend") != "nats" || hl["messaging"].(map[string]any)["connected"] != true {
		t.Errorf("health messaging = %v, want backend nats, connected", hl["messaging"])
	}
	// The operator commands read the same journal through the hub.
	out, errOut, code := runOperator(t, h.clientEnv(), "--json", "channel", "mgr", "impl")
	var ch struct {
		Messages []struct {
			Seq    uint64
			State  string
			Answer string
		}
	}
	if err := json.Unmarshal([]byte(out), &ch); err != nil || code != 0 || len(ch.Messages) != 1 || ch.Messages[0].Seq != 1 || ch.Messages[0].Answer != "processed" {
		t.Errorf("mcprt aacp channel mgr impl on nats: exit %d, %v, %s %s", code, err, out, errOut)
	}
	// Nothing went through the data directories.
	for _, d := range []string{dirA, dirB} {
		if _, err := os.Stat(filepath.Join(d, "channels")); err == nil {
			t.Errorf("%s holds a file journal; the nats backend must not write one", d)
		}
	}
}

func TestNATSStartupFailsFast(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  []string
		code int
		want string
	}{
		{"unreachable", []string{"MCPRT_AACP_BACKEND=nats", "MCPRT_NATS_URL=nats://" + freeAddr(t), "MCPRT_NATS_CONNECT_TIMEOUT_MS=300"}, exitFatal, "unreachable"},
		{"nowhere to connect", []string{"MCPRT_AACP_BACKEND=nats"}, exitConfig, "nats.url is empty"},
		{"unknown backend", []string{"MCPRT_AACP_BACKEND=kafka"}, exitConfig, "aacp.backend"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Env: append([]string{"MCPRT_AACP_DATA_DIR=" + t.TempDir()}, tc.env...)})
			if code := p.Wait(t); code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", code, tc.code, p.Stderr())
			}
			if !strings.Contains(p.Stderr(), tc.want) {
				t.Errorf("stderr does not say %q:\n%s", tc.want, p.Stderr())
			}
		})
	}
}

func TestNATSHubKilledAndRestartedLosesNothing(t *testing.T) {
	t.Parallel()
	h := newHub(t)
	mgr := startAgent(t, filepath.Join(t.TempDir(), "a"), "mgr", "Manager", h.clientEnv()...)
	impl := startAgent(t, filepath.Join(t.TempDir(), "b"), "impl", "Implementation", h.clientEnv()...)
	impl.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)
	mgr.ok(t, "aacp_register_agent", `{"type":"Manager"}`)
	const n = 20
	want := map[string]bool{}
	for i := range n {
		out := mgr.ok(t, "aacp_send", sendArgsTo("impl", "CUSTOM_SEQ", `{"n":`+strconv.Itoa(i)+`}`))
		want[astr(out, "requestId")] = true
	}
	h.p.Signal(syscall.SIGKILL)
	h.p.Wait(t)
	startHub(t, h.addr, h.dir) // the same store: everything acknowledged is there

	got := map[string]bool{}
	for len(got) < n {
		m := impl.receiveOne(t, "CUSTOM_SEQ")
		if got[astr(m, "requestId")] && m["redelivered"] != true {
			t.Fatalf("request %s handed out twice", astr(m, "requestId"))
		}
		got[astr(m, "requestId")] = true
		impl.ok(t, "aacp_ack", `{"messageId":`+jsonString(astr(m, "messageId"))+`,"status":"processed"}`)
	}
	for rid := range want {
		if !got[rid] {
			t.Errorf("acknowledged send %s was lost with the hub", rid)
		}
	}
	// The ACKs reach mgr through an inbox consumer made after the
	// restart (the hub lost the one it had).
	for rid := range want {
		mgr.waitStatus(t, rid, func(st map[string]any) bool { return st["outcome"] == "COMPLETED" })
	}
	hl := mgr.ok(t, "health", `{}`)
	if anum(hl, "messaging", "reconnects") < 1 {
		t.Errorf("health shows no reconnection after the hub restart: %v", hl["messaging"])
	}
	if anum(hl, "messaging", "inboxConsumersReplaced") < 1 {
		t.Errorf("health shows no inbox consumer replaced after the hub restart: %v", hl["messaging"])
	}
}
