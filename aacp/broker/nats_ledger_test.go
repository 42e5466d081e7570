package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

// TestNATSSendReturnsAfterItsLedgerRecord: the moment a send returns,
// another store on another connection (a restarted process) finds the
// request in the sender's ledger on JetStream, also when many sends of
// one agent share the ledger's group commit. (On NATS a ledger's Put only
// queues its records; the broker waits for Ledger.Sync before a send
// returns — journal.BufferedLedgers.)
func TestNATSSendReturnsAfterItsLedgerRecord(t *testing.T) {
	ctx := context.Background()
	srv := natstest.Server(t)
	open := func() *natsjournal.Store {
		conn := natstest.Connect(t, srv.ClientURL())
		s, err := natsjournal.Open(ctx, natsjournal.Options{JS: conn.JS})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	st := open()
	b, err := broker.Open(broker.Options{Store: st, Manual: true, IDs: &core.SequenceGenerator{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	for id, typ := range map[string]envelope.AgentType{"a": envelope.Manager, "b": envelope.Implementation} {
		if _, err := b.RegisterAgent(ctx, id, broker.RegisterInput{Type: typ}); err != nil {
			t.Fatal(err)
		}
	}
	// Concurrent sends: the ledger has one publish in flight and the
	// records of the others wait for the next, while their channel
	// writes go out together.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			payload, _ := json.Marshal(map[string]int{"n": i})
			out, err := b.Send(ctx, "a", broker.SendInput{Receiver: broker.Receiver{AgentID: "b"}, MessageType: "CUSTOM_TEST", Payload: payload})
			if err != nil {
				errs <- err
				return
			}
			l, err := open().Ledger("a") // a fresh store: another process's view, read from JetStream
			if err != nil {
				errs <- err
				return
			}
			if _, ok := l.Request(out.RequestID); !ok {
				errs <- fmt.Errorf("send %d returned before its request %s reached the sender's ledger on JetStream", i, out.RequestID)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
