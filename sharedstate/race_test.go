package sharedstate

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/domain/task"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

// raceRounds is MCPRT_SHAREDSTATE_RACE_ROUNDS, or def (1,000 rounds take
// about two minutes under -race on 2 cores: each round costs every node an
// SQLite write per client; set the variable lower while iterating).
func raceRounds(t *testing.T, def int) int {
	if s := os.Getenv("MCPRT_SHAREDSTATE_RACE_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("MCPRT_SHAREDSTATE_RACE_ROUNDS=%q: give a positive number", s)
		}
		return n
	}
	return def
}

// coordNode is a node with shared reservations and tasks.
type coordNode struct {
	*node
	res   *Reservations
	tasks *Tasks
}

func coordNodes(t *testing.T, n int) []coordNode {
	srv := natstest.ServerNoSync(t) // exclusion, not durability, is under test
	out := make([]coordNode, n)
	for i := range out {
		var res *Reservations
		var tasks *Tasks
		nd := newNode(t, srv.ClientURL(), "", func(r *Replicator) {
			res = NewReservations(r, r.db.Reservations())
			tasks = NewTasks(r, r.db.Tasks())
		})
		out[i] = coordNode{node: nd, res: res, tasks: tasks}
	}
	return out
}

// TestReserveLinearizable races one exclusive reserve per node (each on
// its own connection and store) for overlapping patterns, round after
// round: exactly one wins each round, and every node ends with the same
// leases.
func TestReserveLinearizable(t *testing.T) {
	t.Parallel()
	const clients = 4
	rounds := raceRounds(t, 1000)
	nodes := coordNodes(t, clients)
	ctx := testCtx(t)
	var ids atomic.Int64
	newID := func() string { return fmt.Sprint("lease-", ids.Add(1)) }
	now := time.Now().UTC()
	wins := make([]int, clients)
	for round := range rounds {
		var wg sync.WaitGroup
		granted := make([]bool, clients)
		errs := make([]error, clients)
		for i, n := range nodes {
			wg.Go(func() {
				text := fmt.Sprintf("round%d/**", round)
				if i%2 == 1 {
					text = fmt.Sprintf("round%d/sub/f.go", round)
				}
				p, err := reservation.ParsePattern(text)
				if err != nil {
					errs[i] = err
					return
				}
				g, c, err := n.res.Reserve(ctx, reservation.ReserveOp{AgentID: fmt.Sprint("agent", i), Patterns: []reservation.Pattern{p},
					Exclusive: true, Now: now, ExpiresAt: now.Add(time.Hour), MaxPerAgent: 100000, NewID: newID})
				errs[i] = err
				granted[i] = len(g) == 1 && len(c) == 0
			})
		}
		wg.Wait()
		winners := 0
		for i := range nodes {
			if errs[i] != nil {
				t.Fatalf("round %d, client %d: %v", round, i, errs[i])
			}
			if granted[i] {
				winners++
				wins[i]++
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d winners, want exactly 1", round, winners)
		}
	}
	t.Logf("%d rounds: wins per client %v", rounds, wins)
	last := nodes[0].r.Applied()
	for _, n := range nodes {
		last = max(last, n.r.Applied())
	}
	var want []string
	for i, n := range nodes {
		if err := n.r.WaitApplied(ctx, last); err != nil {
			t.Fatal(err)
		}
		leases, total, err := n.res.List(ctx, "", now, reservation.MaxListed)
		if err != nil || total != min(rounds, total) || total != rounds {
			t.Fatalf("node %d: %d active leases (%v), want %d", i, total, err, rounds)
		}
		got := make([]string, len(leases))
		for j, l := range leases {
			got[j] = l.ID + " " + l.AgentID + " " + l.Pattern
		}
		slices.Sort(got)
		if i == 0 {
			want = got
		} else if !slices.Equal(got, want) {
			t.Fatalf("node %d holds other leases than node 0", i)
		}
	}
}

// TestClaimLinearizable posts one task per round and races a ClaimNext
// per node for it: exactly one claims it; the losers find nothing.
func TestClaimLinearizable(t *testing.T) {
	t.Parallel()
	const clients = 4
	rounds := raceRounds(t, 1000)
	nodes := coordNodes(t, clients)
	ctx := testCtx(t)
	now := time.Now().UTC()
	wins := make([]int, clients)
	for round := range rounds {
		id := fmt.Sprint("task-", round)
		label := fmt.Sprint("r", round)
		tk := task.Task{ID: id, Title: "t", Priority: 3, Labels: []string{label}, Poster: "mgr", Status: task.StatusOpen, CreatedAt: now, UpdatedAt: now}
		if err := nodes[round%clients].tasks.Create(ctx, tk, task.Event{TaskID: id, At: now, AgentID: "mgr", Action: "posted", To: task.StatusOpen}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		claimed := make([]bool, clients)
		errs := make([]error, clients)
		for i, n := range nodes {
			wg.Go(func() {
				got, ok, err := n.tasks.ClaimNext(ctx, fmt.Sprint("worker", i), []string{label}, now)
				errs[i] = err
				claimed[i] = ok && got.ID == id && got.Assignee == fmt.Sprint("worker", i)
			})
		}
		wg.Wait()
		winners := 0
		for i := range nodes {
			if errs[i] != nil {
				t.Fatalf("round %d, client %d: %v", round, i, errs[i])
			}
			if claimed[i] {
				winners++
				wins[i]++
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d claimed the task, want exactly 1", round, winners)
		}
	}
	t.Logf("%d rounds: claims per client %v", rounds, wins)
	// Every node holds the same queue: each task claimed by its winner.
	var last uint64
	for _, n := range nodes {
		last = max(last, n.r.Applied())
	}
	var want []string
	for i, n := range nodes {
		if err := n.r.WaitApplied(ctx, last); err != nil {
			t.Fatal(err)
		}
		tasks, total, err := n.tasks.List(ctx, task.Filter{Limit: task.MaxListLimit})
		if err != nil || total != rounds {
			t.Fatalf("node %d: %d tasks (%v), want %d", i, total, err, rounds)
		}
		var got []string
		for _, tk := range tasks {
			got = append(got, tk.ID+" "+string(tk.Status)+" "+tk.Assignee+" "+tk.UpdatedAt.String())
		}
		slices.Sort(got)
		if i == 0 {
			want = got
		} else if !slices.Equal(got, want) {
			t.Fatalf("node %d's queue differs from node 0's", i)
		}
	}
}
