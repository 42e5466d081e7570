package presencekv_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcprt/mcprt/natsengine/natstest"
	"github.com/mcprt/mcprt/natsengine/presencekv"
)

// TestSharedAcrossConnections: a record put through one connection is
// read through another (another machine), replaced, and deleted.
func TestSharedAcrossConnections(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := presencekv.Open(ctx, natstest.Connect(t, srv.ClientURL()).JS, presencekv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := presencekv.Open(ctx, natstest.Connect(t, srv.ClientURL()).JS, presencekv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name  string
		do    func() error
		agent string
		want  string // "" means no record
	}{
		{"absent", func() error { return nil }, "impl_1", ""},
		{"put on a", func() error { return a.Put(ctx, "impl_1", []byte(`{"v":1}`)) }, "impl_1", `{"v":1}`},
		{"other agent absent", func() error { return nil }, "impl_2", ""},
		{"replaced on a", func() error { return a.Put(ctx, "impl_1", []byte(`{"v":2}`)) }, "impl_1", `{"v":2}`},
		{"replaced on b", func() error { return b.Put(ctx, "impl_1", []byte(`{"v":3}`)) }, "impl_1", `{"v":3}`},
		{"deleted on a", func() error { return a.Delete(ctx, "impl_1") }, "impl_1", ""},
		{"deleted again", func() error { return b.Delete(ctx, "impl_1") }, "impl_1", ""},
		{"deleted never put", func() error { return b.Delete(ctx, "impl_9") }, "impl_9", ""},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for name, s := range map[string]*presencekv.Store{"a": a, "b": b} {
			got, err := s.Get(ctx, st.agent)
			if err != nil {
				t.Fatalf("%s: Get on %s: %v", st.name, name, err)
			}
			if string(got) != st.want || (st.want == "") != (got == nil) {
				t.Fatalf("%s: Get(%s) on %s = %q, want %q", st.name, st.agent, name, got, st.want)
			}
		}
	}
}

// TestUnreachable: with the connection gone, Put and Get fail with an
// error naming the agent rather than pretending there is no record.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := natstest.Connect(t, srv.ClientURL())
	s, err := presencekv.Open(ctx, conn.JS, presencekv.Options{Bucket: "TEST_PRESENCE"})
	if err != nil {
		t.Fatal(err)
	}
	conn.NC.Close()
	if err := s.Put(ctx, "impl_1", []byte(`{}`)); err == nil {
		t.Fatal("Put on a closed connection succeeded")
	}
	if got, err := s.Get(ctx, "impl_1"); err == nil {
		t.Fatalf("Get on a closed connection = %q, no error", got)
	}
}
