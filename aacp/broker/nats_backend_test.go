package broker_test

import (
	"context"
	"testing"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

// TestBrokerOnBackends runs the broker's store-level tests (those whose
// rig is given no data directory) on every journal backend of the table:
// the memory journal runs them as the plain tests do; nats runs them on a
// real embedded NATS server per rig.
func TestBrokerOnBackends(t *testing.T) {
	backends := []struct {
		name string
		open func(testing.TB) journal.Store
	}{
		{"nats", openNATS},
	}
	tests := []struct {
		name string
		run  func(*testing.T)
	}{
		{"SendReceiveAckComplete", broker.TestSendReceiveAckComplete},
		{"SendRejections", broker.TestSendRejections},
		{"RegisterRules", broker.TestRegisterRules},
		{"InboxPacedDeliveryReofferAndTTL", broker.TestInboxPacedDeliveryReofferAndTTL},
		{"LateAckForFailedDeliveryIsIgnoredBySender", broker.TestLateAckForFailedDeliveryIsIgnoredBySender},
		{"RequeueAfterNack", broker.TestRequeueAfterNack},
		{"Nack", broker.TestNack},
		{"RetryOfAnsweredRequestIsReAcknowledged", broker.TestRetryOfAnsweredRequestIsReAcknowledged},
		{"RedeliveryOfUnansweredRequest", broker.TestRedeliveryOfUnansweredRequest},
		{"PriorityOrderAndFilter", broker.TestPriorityOrderAndFilter},
		{"Broadcast", broker.TestBroadcast},
		{"IdempotentSendByRequestID", broker.TestIdempotentSendByRequestID},
		{"TTLExpiryAndPurge", broker.TestTTLExpiryAndPurge},
		{"ReceiveWaitsForANewMessage", broker.TestReceiveWaitsForANewMessage},
		{"AckValidation", broker.TestAckValidation},
		{"AckAll", broker.TestAckAll},
		{"AckAllReceivedThenProcessed", broker.TestAckAllReceivedThenProcessed},
		{"AckAllTwoTransmissionsOfOneRequest", broker.TestAckAllTwoTransmissionsOfOneRequest},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			saved := broker.RigStore
			broker.RigStore = b.open
			defer func() { broker.RigStore = saved }()
			for _, tc := range tests {
				t.Run(tc.name, tc.run)
			}
		})
	}
}

func openNATS(t testing.TB) journal.Store {
	srv := natstest.Server(t)
	conn := natstest.Connect(t, srv.ClientURL())
	s, err := natsjournal.Open(context.Background(), natsjournal.Options{JS: conn.JS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
