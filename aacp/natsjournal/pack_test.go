package natsjournal_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

// AppendAll writes the appends of one channel as one JetStream message
// (a pack) after what the channel holds: seqs stay dense, the inbox
// passes each transmission once and in order (also one whose fn failed
// part-way through a pack, again on the next Read), a repeat of a packed
// transmission gets the seq it was stored with, and compaction never
// purges a pack that holds a seq it must keep.
func TestAppendAllPacksAChannelInOneMessage(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	conn := natstest.Connect(t, srv.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := natsjournal.Open(ctx, natsjournal.Options{JS: conn.JS})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Append(ctx, env("a", "b", "m0")); err != nil {
		t.Fatal(err)
	}
	var envs []*envelope.Envelope
	for i := 1; i <= 5; i++ {
		envs = append(envs, env("a", "b", fmt.Sprint("m", i)))
	}
	envs = append(envs, env("c", "b", "other"), env("a", "", "refused")) // another channel; no receiver
	errs := s.AppendAll(ctx, envs)
	for i, e := range envs[:6] {
		if errs[i] != nil {
			t.Fatalf("AppendAll %s: %v", e.MessageID, errs[i])
		}
	}
	if errs[6] == nil {
		t.Error("AppendAll took an envelope to an invalid agent id")
	}
	for i, e := range envs[:5] {
		if e.Seq != uint64(i+2) {
			t.Errorf("%s has seq %d, want %d", e.MessageID, e.Seq, i+2)
		}
	}
	if envs[5].Seq != 1 {
		t.Errorf("the other channel's first transmission has seq %d, want 1", envs[5].Seq)
	}
	st, err := conn.JS.Stream(ctx, natsjournal.ChannelStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 3 { // m0, the pack m1…m5, other
		t.Errorf("the channel stream holds %d messages, want 3 (one per channel write)", info.State.Msgs)
	}
	if last, err := s.LastSequence(ctx, "a", "b"); err != nil || last != 6 {
		t.Errorf("LastSequence = %d, %v; want 6", last, err)
	}
	if seq, err := s.Append(ctx, env("a", "b", "m3")); err != nil || seq != 4 {
		t.Errorf("a repeat of packed m3: seq %d, %v; want 4 (stored once)", seq, err)
	}

	in, err := s.Inbox("b")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var got []string
	stop := fmt.Errorf("stop")
	err = in.Read(ctx, func(e *envelope.Envelope) error {
		if e.MessageID == "m3" && !strings.Contains(strings.Join(got, " "), "m3") {
			got = append(got, "m3")
			return stop // fails part-way through the pack
		}
		got = append(got, e.MessageID)
		return nil
	})
	if err != stop {
		t.Fatalf("Read = %v, want the fn's error", err)
	}
	if err := in.Read(ctx, func(e *envelope.Envelope) error { got = append(got, e.MessageID); return nil }); err != nil {
		t.Fatal(err)
	}
	want := "m0 m1 m2 m3 m3 m4 m5 other"
	if strings.Join(got, " ") != want {
		t.Fatalf("read %q, want %q (m3 again after its fn failed, nothing else twice)", strings.Join(got, " "), want)
	}

	// Below 4: seqs 1–2 may go, 3 must stay; 2 and 3 share the pack, so
	// only m0's message is purged.
	if _, err := s.CompactChannel(ctx, "a", "b", 4); err != nil {
		t.Fatal(err)
	}
	if info, err = st.Info(ctx); err != nil || info.State.Msgs != 2 {
		t.Fatalf("after compacting below 4 the stream holds %v messages (%v), want 2: the pack holding seq 3 is kept", info.State.Msgs, err)
	}
	if last, err := s.LastSequence(ctx, "a", "b"); err != nil || last != 6 {
		t.Errorf("LastSequence after compaction = %d, %v; want 6", last, err)
	}
}

// AppendWith calls Before with the seq the transmission is written with,
// again with a new one when another store moved the channel's end in
// between; an error from Before cancels the append.
func TestAppendWithBeforeGetsTheWrittenSeq(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stores []*natsjournal.Store
	for range 2 {
		conn := natstest.Connect(t, srv.ClientURL())
		s, err := natsjournal.Open(ctx, natsjournal.Options{JS: conn.JS})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	a, other := stores[0], stores[1]
	if _, err := a.Append(ctx, env("a", "b", "first")); err != nil { // a learns the channel's end
		t.Fatal(err)
	}
	if _, err := other.Append(ctx, env("a", "b", "elsewhere")); err != nil { // and it moves
		t.Fatal(err)
	}
	var calls []uint64
	seq, err := a.AppendWith(ctx, env("a", "b", "mine"), journal.AppendOptions{Before: func(seq uint64) error {
		calls = append(calls, seq)
		return nil
	}})
	if err != nil || seq != 3 {
		t.Fatalf("AppendWith = %d, %v; want seq 3", seq, err)
	}
	if len(calls) == 0 || calls[len(calls)-1] != seq {
		t.Fatalf("Before was called with %v; want its last call with the seq written, %d", calls, seq)
	}
	refused := errors.New("the ledger refused")
	if _, err := a.AppendWith(ctx, env("a", "b", "cancelled"), journal.AppendOptions{Before: func(uint64) error { return refused }}); !errors.Is(err, refused) {
		t.Fatalf("AppendWith with a failing Before = %v, want its error", err)
	}
	if last, err := a.LastSequence(ctx, "a", "b"); err != nil || last != 3 {
		t.Fatalf("LastSequence = %d, %v; want 3 (the cancelled append not written)", last, err)
	}
}

// A pack written again whole (an attempt whose answer was lost, sent
// again; here from a second store) is recognised by its message id and
// contents: stored once, each transmission given the seq it has.
func TestPackWrittenAgainIsStoredOnce(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn := natstest.Connect(t, srv.ClientURL())
	var stores []*natsjournal.Store
	for range 2 {
		s, err := natsjournal.Open(ctx, natsjournal.Options{JS: natstest.Connect(t, srv.ClientURL()).JS})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	pack := func() []*envelope.Envelope {
		return []*envelope.Envelope{env("a", "b", "p1"), env("a", "b", "p2"), env("a", "b", "p3")}
	}
	for i, s := range stores {
		envs := pack()
		for k, err := range s.AppendAll(ctx, envs) {
			if err != nil || envs[k].Seq != uint64(k+1) {
				t.Fatalf("store %d: %s got seq %d, %v; want %d", i, envs[k].MessageID, envs[k].Seq, err, k+1)
			}
		}
	}
	st, err := conn.JS.Stream(ctx, natsjournal.ChannelStream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := st.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Fatalf("the stream holds %v messages (%v), want the pack once", info.State.Msgs, err)
	}
}
