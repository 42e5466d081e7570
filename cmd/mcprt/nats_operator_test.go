package main

// The operator's entry points on the NATS backends: `mcprt aacp` and the
// standalone `mcprt ui`, run against a data directory of their own on a
// third "machine", read the agents, presence, reservations and tasks the
// sessions on the hub keep, as the console of `mcprt --http` does; and
// health reports the backends.

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

func TestNATSOperatorsSeeTheHub(t *testing.T) {
	t.Parallel()
	h := newHub(t)
	env := h.stateEnv()
	alice := startAgent(t, filepath.Join(t.TempDir(), "a"), "alice", "Implementation", env...)
	bob := startAgent(t, filepath.Join(t.TempDir(), "b"), "bob", "Implementation", env...)
	carol := startAgent(t, filepath.Join(t.TempDir(), "c"), "carol", "Implementation", env...)
	for _, a := range []*aproc{alice, bob, carol} {
		a.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)
	}
	// carol's session ends: offline everywhere at once.
	carol.p.Signal(syscall.SIGTERM)
	carol.p.Wait(t)
	lease := str(list(t, alice.ok(t, "reserve_paths", `{"paths":["lib/**"],"exclusive":true,"reason":"porting"}`), "leases")[0]["id"])
	taskID := str(bob.ok(t, "task_post", `{"title":"port the lib","description":"to v2"}`)["taskId"])
	alice.ok(t, "aacp_send", sendArgsTo("bob", "CUSTOM_NOTE", `{"note":"hello from alice"}`))
	if hb := alice.ok(t, "aacp_heartbeat", `{"status":"porting"}`); hb["presence"] != "online" {
		t.Fatalf("aacp_heartbeat: %v", hb)
	}

	// mcprt aacp agents on a third machine: a data directory that holds
	// nothing, the journal and presence read through the hub.
	third := filepath.Join(t.TempDir(), "operator")
	out, errOut, code := runOperator(t, env, "--data-dir", third, "--json", "agents")
	var got struct {
		Agents []struct {
			AgentID      string    `json:"agentId"`
			Online       bool      `json:"online"`
			Presence     string    `json:"presence"`
			LastSeen     time.Time `json:"lastSeen"`
			RegisteredAt time.Time `json:"registeredAt"`
		} `json:"agents"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("mcprt aacp agents: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	want := map[string]struct {
		online   bool
		presence string
	}{"alice": {true, "online"}, "bob": {true, "online"}, "carol": {false, "offline"}}
	for _, a := range got.Agents {
		w, ok := want[a.AgentID]
		if !ok {
			continue
		}
		delete(want, a.AgentID)
		if a.Online != w.online || a.Presence != w.presence {
			t.Errorf("aacp agents shows %s online=%v presence %q, want %v %q\n%s", a.AgentID, a.Online, a.Presence, w.online, w.presence, out)
		}
		// The heartbeat made on alice's machine, not the registration
		// (what a data directory without presence records would show).
		if a.AgentID == "alice" && !a.LastSeen.After(a.RegisteredAt) {
			t.Errorf("aacp agents shows alice last seen %v, not after her registration %v: not her heartbeat on the hub", a.LastSeen, a.RegisteredAt)
		}
	}
	if len(want) > 0 {
		t.Errorf("aacp agents lacks %v:\n%s", want, out)
	}
	if out, _, code := runOperator(t, env, "--data-dir", third, "agents"); code != 0 || !strings.Contains(out, "PRESENCE") ||
		!regexp.MustCompile(`(?m)^alice\s+Implementation\s+yes\s+online\s`).MatchString(out) {
		t.Errorf("mcprt aacp agents (table): exit %d\n%s", code, out)
	}

	// A new session on a fourth machine lists the hub's agents before it
	// made any aacp_* call (its data directory holds no journal).
	dave := startAgent(t, filepath.Join(t.TempDir(), "d"), "dave", "Implementation", env...)
	if l := dave.ok(t, "agent_list", `{"source":"messaging"}`); !strings.Contains(string(mustJSON(t, l)), `"alice"`) {
		t.Errorf("agent_list on a fresh session on the hub lacks alice: %v", l)
	}

	// The standalone console on the third machine and the console of an
	// mcprt --http session on the hub show the same agents, messages,
	// reservations and tasks.
	bin := wiretest.Build(t)
	const token = "operator-console-token"
	_, mcpURL := startHTTPServer(t, bin, token, append(env, "MCPRT_AACP_DATA_DIR="+filepath.Join(t.TempDir(), "http"),
		"MCPRT_AACP_AGENT_ID=lead", "MCPRT_TRANSPORT_HTTP_AUTH_TOKEN_ENV_VAR=MCPRT_OPERATOR_TEST_TOKEN", "MCPRT_OPERATOR_TEST_TOKEN="+token)...)
	server := newUIClient(t, strings.TrimSuffix(mcpURL, "/mcp")+"/ui/")
	server.signIn(token)
	ui := wiretest.Start(t, bin, wiretest.Options{Args: []string{"ui", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(t.TempDir(), "ui")}, Env: env})
	t.Cleanup(func() {
		ui.Signal(syscall.SIGTERM)
		if code := ui.Wait(t); code != 0 {
			t.Errorf("mcprt ui exited %d on SIGTERM:\n%s", code, ui.Stderr())
		}
	})
	ready := ui.ExpectLog(t, `"mcprt ui ready"`, func(m map[string]any) bool { return m["msg"] == "mcprt ui ready" })
	m := regexp.MustCompile(`sign in with the token ([0-9a-f]{32})`).FindStringSubmatch(ui.Stderr())
	if m == nil {
		t.Fatalf("mcprt ui printed no token:\n%s", ui.Stderr())
	}
	standalone := newUIClient(t, ready["url"].(string))
	standalone.signIn(m[1])

	agentRe := regexp.MustCompile(`data-agent="([^"]+)"[\s\S]*?presence (\w+)`)
	shown := func(u *uiClient) []string {
		body := u.waitPage("", 20*time.Second, `data-agent="alice"`, `data-agent="bob"`, `data-agent="carol"`)
		var rows []string
		for _, m := range agentRe.FindAllStringSubmatch(body, -1) {
			if m[1] != "human" && m[1] != "lead" { // the consoles' own agents
				rows = append(rows, m[1]+" "+m[2])
			}
		}
		slices.Sort(rows)
		return rows
	}
	fromServer, fromUI := shown(server), shown(standalone)
	if want := []string{"alice online", "bob online", "carol offline"}; !slices.Equal(fromServer, want) || !slices.Equal(fromUI, want) {
		t.Errorf("agents: the server's console shows %v, mcprt ui %v; want both %v", fromServer, fromUI, want)
	}
	for _, u := range []*uiClient{server, standalone} {
		u.waitPage("reservations", 20*time.Second, `data-reservation="`+lease+`" data-agent="alice"`, "lib/**")
		u.waitPage("tasks", 20*time.Second, `data-task="`+taskID+`"`, "port the lib")
		u.waitPage("messages?agent=bob", 20*time.Second, "hello from alice")
		u.waitPage("traces", 20*time.Second, "messaging backend", "nats", "shared state applied / last / lag", "NATS server")
	}
	// An action taken on the standalone console goes through the shared
	// state: refused for a live holder, as on the hub.
	if code, body := standalone.post("reservations/release", map[string][]string{"csrf": {standalone.csrf()}, "id": {lease}, "reason": {"mine now"}}); code != http.StatusBadRequest ||
		!strings.Contains(body, "RESERVATION_HOLDER_LIVE") {
		t.Errorf("force-release of online alice's lease on mcprt ui: %d, want 400 RESERVATION_HOLDER_LIVE\n%s", code, body)
	}
}

// TestNATSHealthReportsTheBackends: health names the backends, the NATS
// connection and the shared state's applier, whether messaging is on
// NATS or stays on files.
func TestNATSHealthReportsTheBackends(t *testing.T) {
	t.Parallel()
	h := newHub(t)
	stateOnly := []string{"MCPRT_AACP_STATE_BACKEND=nats", "MCPRT_NATS_URL=nats://" + h.addr, "MCPRT_NATS_TOKEN=" + natsTestToken}
	for _, c := range []struct {
		name, backend string
		env           []string
	}{
		{"messaging and state on nats", "nats", h.stateEnv()},
		{"state on nats, messaging on files", "files", stateOnly},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := startAgent(t, filepath.Join(t.TempDir(), "a"), "hl_"+c.backend, "Implementation", c.env...)
			a.ok(t, "memory_store", `{"key":"k","value":1}`)
			hl := a.ok(t, "health", `{}`)
			msg, _ := hl["messaging"].(map[string]any)
			conn := msg
			if c.backend == "files" {
				conn, _ = msg["nats"].(map[string]any)
			}
			ss, _ := msg["sharedState"].(map[string]any)
			if astr(hl, "messaging", "backend") != c.backend || conn == nil || conn["connected"] != true || str(conn["server"]) == "" ||
				conn["reconnects"] != float64(0) || ss == nil || anum(hl, "messaging", "sharedState", "applied") < 1 ||
				anum(hl, "messaging", "sharedState", "lag") != anum(hl, "messaging", "sharedState", "last")-anum(hl, "messaging", "sharedState", "applied") {
				t.Fatalf("health messaging = %v, want backend %s, connected to a named server, no reconnects, the applier's lag", msg, c.backend)
			}
		})
	}
}
