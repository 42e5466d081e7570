package main

// Presence across machines: two mcprt processes with separate data
// directories, connected only through an `mcprt nats` hub, judge an
// agent's presence from the same record (the AACP_PRESENCE bucket),
// whether messaging is on NATS too or stays on files.

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
)

func TestNATSSharedPresence(t *testing.T) {
	t.Parallel()
	h := newHub(t)
	stateOnly := []string{"MCPRT_AACP_STATE_BACKEND=nats", "MCPRT_NATS_URL=nats://" + h.addr, "MCPRT_NATS_TOKEN=" + natsTestToken}
	cases := []struct {
		name string
		env  []string
	}{
		{"messaging and state on nats", h.stateEnv()},
		{"state on nats, messaging on files", stateOnly},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := append([]string{"MCPRT_SERVER_MODE=TEST", "MCPRT_AACP_IDLE_AFTER_MS=2000", "MCPRT_AACP_STALE_AFTER_MS=5000"}, c.env...)
			alice, bob := fmt.Sprintf("alice%d", i), fmt.Sprintf("bob%d", i)
			a := startAgent(t, filepath.Join(t.TempDir(), "a"), alice, "Implementation", env...)
			b := startAgent(t, filepath.Join(t.TempDir(), "b"), bob, "Implementation", env...)

			r := a.ok(t, "reserve_paths", fmt.Sprintf(`{"paths":["src%d/**"],"reason":"refactor"}`, i))
			leases, _ := r["leases"].([]any)
			if r["granted"] != true || len(leases) != 1 {
				t.Fatalf("reserve on A: %v", r)
			}
			a.ok(t, "task_post", fmt.Sprintf(`{"title":"t%d","description":"held by %s","labels":["presence%d"]}`, i, alice, i))
			cl := a.ok(t, "task_claim", fmt.Sprintf(`{"labels":["presence%d"]}`, i))
			taskID := astr(cl, "task", "taskId")
			if cl["claimed"] != true || taskID == "" {
				t.Fatalf("task_claim on A: %v", cl)
			}
			steal := fmt.Sprintf(`{"taskId":%q,"reason":"%s looks gone"}`, taskID, alice)
			force := fmt.Sprintf(`{"id":%q,"reason":"%s looks gone"}`, astr(leases[0], "id"), alice)
			if hb := a.ok(t, "aacp_heartbeat", `{"status":"working"}`); hb["presence"] != "online" {
				t.Fatalf("aacp_heartbeat on A: %v", hb)
			}
			// Heartbeating on A: live on B, whose clock judges it. Both
			// clocks move together (machines' clocks are in sync).
			steps := []struct {
				advanceMs int
				beatOnA   bool
				want      string
			}{
				{0, false, "online"},
				{3000, false, "idle"},   // 3 s on B's clock without a beat: idle, still live
				{0, true, "online"},     // a beat on A counts on B at once
				{1000, false, "online"}, // ≥ 2 s since the beat is not reached
			}
			for _, st := range steps {
				if st.advanceMs > 0 {
					a.ok(t, "clock_advance", fmt.Sprintf(`{"ms":%d}`, st.advanceMs))
					b.ok(t, "clock_advance", fmt.Sprintf(`{"ms":%d}`, st.advanceMs))
				}
				if st.beatOnA {
					a.ok(t, "aacp_heartbeat", `{}`)
				}
				for _, c := range []struct{ tool, args, code string }{
					{"force_release_reservation", force, "RESERVATION_HOLDER_LIVE"},
					{"task_steal", steal, "TASK_HOLDER_LIVE"},
				} {
					e := b.fails(t, c.tool, c.args, c.code)
					if e.Details["presence"] != st.want || e.Details["holder"] != alice {
						t.Fatalf("after +%d ms (beat on A: %v): %s on B refused with %v, want holder %s %s",
							st.advanceMs, st.beatOnA, c.tool, e.Details, alice, st.want)
					}
				}
			}

			// A is killed: once B's clock passes aacp.staleAfterMs since
			// A's last beat, the holder is stale (or offline) on B and its
			// reservation forced and its task stolen.
			a.p.Signal(syscall.SIGKILL)
			a.p.Wait(t)
			b.ok(t, "clock_advance", `{"ms":5000}`)
			fr := b.ok(t, "force_release_reservation", force)
			if fr["releasedBy"] != bob || fr["agentId"] != alice || fr["releasedAt"] == "" {
				t.Fatalf("force_release on B after A died: %v", fr)
			}
			if sv := b.ok(t, "task_steal", steal); astr(sv, "assignee") != bob || astr(sv, "status") != "claimed" {
				t.Fatalf("task_steal on B after A died: %v", sv)
			}
		})
	}
}
