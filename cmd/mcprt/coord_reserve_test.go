package main

// File reservations through the binary: several processes on one data
// directory reserve, conflict, race, expire, die and are released; the
// guard_check reservation gate names the holder.

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
)

func TestCoordReservationsBetweenProcesses(t *testing.T) {
	t.Parallel()
	ps, _ := coordAgents(t, []string{"MCPRT_COORD_MAX_RESERVATIONS_PER_AGENT=5"}, "alice", "bob")
	a, b := ps[0], ps[1]

	got := a.ok(t, "reserve_paths", `{"paths":["src/**"],"reason":"refactor"}`)
	if got["granted"] != true || len(list(t, got, "leases")) != 1 {
		t.Fatalf("alice's reserve: %v", got)
	}
	lease := list(t, got, "leases")[0]
	if lease["agentId"] != "alice" || lease["path"] != "src/**" || lease["exclusive"] != true {
		t.Fatalf("lease %v", lease)
	}
	// The same call again renews, keeping the id.
	again := list(t, a.ok(t, "reserve_paths", `{"paths":["./src/"]}`), "leases")
	if len(again) != 1 || again[0]["id"] != lease["id"] {
		t.Fatalf("re-reserving src/ (normalised to src/**) made %v, want the same lease %v", again, lease["id"])
	}

	// bob sees alice in the way of src/a.go, not of docs/**.
	chk := b.ok(t, "check_reservations", `{"paths":["src/a.go","docs/**"]}`)
	cs := list(t, chk, "conflicts")
	if chk["free"] != false || len(cs) != 1 || cs[0]["heldBy"] != "alice" || cs[0]["path"] != "src/a.go" || cs[0]["holding"] != "src/**" {
		t.Fatalf("check_reservations: %v", chk)
	}
	// All or nothing: docs/** is not granted either.
	res := b.ok(t, "reserve_paths", `{"paths":["docs/**","src/a.go"]}`)
	if res["granted"] != false || len(list(t, res, "leases")) != 0 || !strings.Contains(str(res["message"]), "alice") {
		t.Fatalf("bob's conflicting reserve: %v", res)
	}
	if c := list(t, res, "conflicts"); len(c) != 1 || c[0]["heldBy"] != "alice" || c[0]["until"] == "" {
		t.Fatalf("conflicts %v", c)
	}
	// Disjoint globs do not conflict; shared + shared is fine.
	if r := b.ok(t, "reserve_paths", `{"paths":["docs/*.md","lib/**"],"exclusive":false}`); r["granted"] != true {
		t.Fatalf("bob's disjoint reserve: %v", r)
	}
	if r := a.ok(t, "reserve_paths", `{"paths":["lib/x.go"],"exclusive":false}`); r["granted"] != true {
		t.Fatalf("shared over shared: %v", r)
	}
	if r := a.ok(t, "reserve_paths", `{"paths":["lib/y.go"]}`); r["granted"] != false {
		t.Fatalf("exclusive over bob's shared lib/**: %v", r)
	}

	// The guard gate: bob changing src/a.go is a violation naming alice;
	// alice changing it is not.
	g := b.ok(t, "guard_check", `{"changedPaths":["src/a.go","README.md"]}`)
	if g["passed"] != false || !strings.Contains(asJSON(t, g), `"path_reserved"`) || !strings.Contains(asJSON(t, g), "reserved exclusively by alice") {
		t.Fatalf("bob's guard_check: %v", g)
	}
	if g := a.ok(t, "guard_check", `{"changedPaths":["src/a.go"]}`); g["passed"] != true {
		t.Fatalf("alice's guard_check of her own reservation: %v", g)
	}

	// A live holder's reservation cannot be forced.
	b.fails(t, "force_release_reservation", fmt.Sprintf(`{"id":%q,"reason":"need it"}`, lease["id"]), "RESERVATION_HOLDER_LIVE")

	// Hostile inputs: clear errors, nothing reserved.
	for _, bad := range []string{`{"paths":["../etc/passwd"]}`, `{"paths":["/abs"]}`, `{"paths":["src/[a"]}`, `{"paths":[]}`,
		`{"paths":["` + strings.Repeat("**/a/", 8) + `"]}`, `{"paths":["` + strings.Repeat("x", 5000) + `"]}`,
		`{"paths":["a"],"ttlSeconds":-1}`, `{"paths":` + jsonList(strings.Split(strings.Repeat("p,", 101), ",")[:101]...) + `}`} {
		e := b.fails(t, "reserve_paths", bad, "INVALID_ARGUMENT")
		if !strings.Contains(e.Message, "path") && !strings.Contains(e.Message, "ttl") {
			t.Errorf("%.60s: unclear message %q", bad, e.Message)
		}
	}
	// The per-agent limit (5 here): bob holds 2, 3 more fit, the 6th fails.
	b.ok(t, "reserve_paths", `{"paths":["t/1","t/2","t/3"]}`)
	e := b.fails(t, "reserve_paths", `{"paths":["t/4"]}`, "RESOURCE_EXHAUSTED")
	if !strings.Contains(e.Message, "coord.maxReservationsPerAgent") {
		t.Errorf("limit message %q", e.Message)
	}
	if rel := b.ok(t, "release_reservations", `{}`); len(list(t, rel, "leases")) != 5 {
		t.Fatalf("release all: %v", rel)
	}

	// Expiry counts at once, on the reader's clock: after bob's clock
	// passes alice's lease, src/a.go is free for bob.
	a.ok(t, "reserve_paths", `{"paths":["tmp/**"],"ttlSeconds":60}`)
	if r := b.ok(t, "reserve_paths", `{"paths":["tmp/x"]}`); r["granted"] != false {
		t.Fatalf("tmp/x before expiry: %v", r)
	}
	b.ok(t, "clock_advance", `{"ms":61000}`)
	if r := b.ok(t, "reserve_paths", `{"paths":["tmp/x"]}`); r["granted"] != true {
		t.Fatalf("tmp/x after alice's lease expired: %v", r)
	}

	// alice dies (kill -9): her leases stop blocking and are released,
	// recorded, and she is told.
	a.p.Signal(syscall.SIGKILL)
	a.p.Wait(t)
	// By hand: force_release of her src/**, recorded with the reason.
	fr := b.ok(t, "force_release_reservation", fmt.Sprintf(`{"id":%q,"reason":"alice crashed"}`, lease["id"]))
	if fr["releasedBy"] != "bob" || fr["releaseReason"] != "alice crashed" || fr["releasedAt"] == "" {
		t.Fatalf("force_release: %v", fr)
	}
	// By itself: her shared lib/x.go is in the way of bob's exclusive
	// lib/** and is released on the way.
	r := b.ok(t, "reserve_paths", `{"paths":["lib/**","src/a.go"]}`)
	if r["granted"] != true || len(list(t, r, "released")) != 1 || list(t, r, "released")[0]["agentId"] != "alice" ||
		list(t, r, "released")[0]["releasedBy"] != "bob" || list(t, r, "released")[0]["path"] != "lib/x.go" {
		t.Fatalf("reserve after alice died: %v", r)
	}
	act := b.ok(t, "list_reservations", `{"agentId":"alice"}`)
	if act["total"] != float64(0) {
		t.Fatalf("alice still holds %v", act)
	}
}

// TestCoordReserveRace races two long-lived processes over overlapping
// globs: in every round exactly one of the two wins.
func TestCoordReserveRace(t *testing.T) {
	t.Parallel()
	rounds := envInt("MCPRT_COORD_RACE_ROUNDS", 1000)
	// A winner keeps what it won (up to two leases a round), so the
	// per-agent limit must not decide a round.
	ps, _ := coordAgents(t, []string{fmt.Sprintf("MCPRT_COORD_MAX_RESERVATIONS_PER_AGENT=%d", 2*rounds+10)}, "r1", "r2")
	wins := [2]int{}
	// Batches of 40 rounds keep each process under its 64 concurrent
	// executions.
	for start := 0; start < rounds; start += 40 {
		end := min(start+40, rounds)
		ids := make([][2]string, end-start)
		for i := start; i < end; i++ {
			// Alternate who sends first, and the shapes of the globs.
			ids[i-start][i%2] = ps[i%2].send("reserve_paths", fmt.Sprintf(`{"paths":["round%d/**"]}`, i))
			ids[i-start][1-i%2] = ps[1-i%2].send("reserve_paths", fmt.Sprintf(`{"paths":["round%d/*/x.go","other%d"]}`, i, i))
		}
		oneWinnerEach(t, ps, ids, start, "granted", &wins)
	}
	t.Logf("%d rounds: r1 won %d, r2 won %d", rounds, wins[0], wins[1])
}
