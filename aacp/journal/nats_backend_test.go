package journal_test

import (
	"context"
	"testing"

	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

// The shared store tests also run against the NATS journal, on a real
// embedded server per test.
func init() {
	journal.StoreBackends = append(journal.StoreBackends, journal.StoreBackend{Name: "nats", Open: openNATS})
}

func openNATS(t testing.TB) journal.Store {
	srv := natstest.Server(t)
	conn := natstest.Connect(t, srv.ClientURL())
	s, err := natsjournal.Open(context.Background(), natsjournal.Options{JS: conn.JS})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
