// Package broker is the durable agent-to-agent messaging engine: it hosts
// agents, sends and receives their messages through a journal shared by
// any number of processes on one machine, and drives each delivery
// through its lifecycle.
//
// # Agents and processes
//
// RegisterAgent makes a Broker the host of an agent: it claims the agent
// (one host at a time, across processes; a crashed host's claim is
// released by the kernel), negotiates the protocol version, records the
// agent in the shared registry, and resumes the agent's unfinished work
// from its ledger. Every other method acts for an agent the broker hosts
// (in MCP terms: the agent id is the tool's configuration, the rest is
// the tool's input). Close releases the agents; they stay registered, and
// messages to them wait in the journal for the next host.
//
// # A message's life
//
// Send validates the message (envelope and payload schemas), routes it
// (one agent, every agent of a type, or every agent; no match is
// E_ROUTING_001 and nothing is sent) and appends one transmission to
// each receiver's channel, in one code path for one receiver and many:
// each transmission's ledger records (the request with the first to get
// there, its payload left in the channel line) are written in one write
// under the channel's lock, seq included, just ahead of the line, and
// Send returns once the lines are durable — under fsync always one fsync
// per channel, shared by concurrent senders (see package journal: "One
// send, one write of its payload"). Each delivery is then paced by the
// receiver's inbox, not by the clock:
//
//	IN_TRANSIT, waiting in the inbox (no ack timer: not late, however long)
//	    │ the receiver takes it (Receive): a TAKEN notice goes back to the
//	    ▼ sender, whose ack timer starts now (the type's AckTimeout)
//	IN_TRANSIT, taken ──ACK──▶ DELIVERED ──ACK processed──▶ PROCESSED
//	    │ no answer within the ack timeout, or NACK canRetry
//	    ▼
//	PENDING ──backoff──▶ IN_TRANSIT, waiting (re-offered: new messageId,
//	    │                 same requestId, retryCount+1, redelivered)
//	    │ the ttl ends (from any state but DELIVERED and PROCESSED), NACK
//	    │ without canRetry, NACK canRetry with the retry budget spent, or
//	    │ the channel cannot be written after the budget
//	    ▼
//	FAILED ──▶ dead-letter queue + one ERROR_REPORT from "_broker" to the sender
//
// An ack timeout has no budget: a taken message left unanswered is
// re-offered each time, until its ttl. The taken notice is a TakenType
// envelope appended to the reverse channel, so the sender learns of the
// take durably, in whatever process hosts it. FAILED is final: the
// receiver refuses to answer an expired message (E_PROTOCOL_004), and an
// ACK that still reaches a FAILED delivery is ignored, never turning it
// into a success; Requeue (of a delivery that has not expired) sends it
// again.
//
// Timeouts and retry budgets come from a per-type table (DefaultPolicies,
// overridable); retry waits grow exponentially with jitter. The request's
// outcome is COMPLETED once every receiver processed it, FAILED once a
// delivery failed and none is under way, UNKNOWN otherwise.
//
// The receiving side: Receive hands out waiting messages, HIGH before
// NORMAL before LOW and in seq order within a channel and priority; Ack
// and Nack answer them (AckAll answers several at once: their records
// in one ledger write, their replies appended together) (an answer to a message handed out reads nothing
// from the journal first: a retry of it read later is answered again,
// below). Each answer is written to the receiver's ledger
// before the reply goes out (its fsync overlaps the reply's, and the
// answer returns once both are done; a machine crash between the two
// may keep the reply and lose the answer, and the message is then handed
// out again: at least once), so receivers deduplicate across restarts: a
// transmission whose messageId was seen is ignored; a retry of a request
// already ACKed is ACKed again and not handed out; a retry of a request
// still queued is ignored; a retry of a request handed out but not yet
// answered is handed out again marked redelivered (the consumer may have
// lost it). Handing out is not recorded in the receiver's ledger (only
// the taken notice tells the sender): after a restart, unanswered
// messages are handed out again. Every envelope carries the cumulative
// acknowledgement (ack) of the reverse channel: the highest seq up to
// which everything was received; gaps are detected and logged.
//
// Inbox lists an agent's unfinished messages (queued, and handed out but
// not answered) without handing anything out; Options.OnInbox is called
// whenever new messages are queued for a hosted agent, so that a caller
// can announce them (tools/messaging notifies subscribers of the agent's inbox
// resource).
//
// # Exactly once, at least once
//
// Delivery is at least once; with the deduplication above, each request
// is handed out once unless it is retried before it is answered, and is
// never handed out after it was answered (as long as its ledger records,
// kept until the message's ttl, last). A Send that returned is never
// lost, even if the process is killed right after (or, under fsync
// always, the machine crashes: its line is on stable storage); a Send
// cut short by a crash may or may not be delivered.
//
// # Time
//
// Deadlines, retries and expiry read Options.Clock; nothing waits on a
// timer of its own except Receive's bounded long poll (Options.After).
// A journal read inside Receive is bounded by the receive's wait, and the
// inbox goroutine's reads by a few seconds, so a journal that cannot
// answer (a NATS cluster electing leaders) never holds a receive past
// its wait.
// RetryDue does the work that is due; PurgeExpired and Compact reclaim
// space; Pump reads inboxes. Unless Options.Manual is set, a goroutine
// per hosted agent reads its inbox when the journal signals new data
// (inotify on Linux), and a maintenance goroutine calls RetryDue every
// TickInterval, syncs the journal (a batch journal; under always, the
// ledgers' lines, which a send does not fsync), compacts and purges.
//
// # Concurrency
//
// All Broker methods are safe for concurrent use. Per hosted agent, the
// receiving side and the sending side each have one lock, and no lock is
// held across a read of the journal: one more lock per agent only orders
// the inbox's reads, and what a read returns is applied under the
// receiving side's lock afterwards (replies to the agent as a sender
// under the sending side's, after that). A send takes neither the
// receiving side's lock nor the read's, so it never waits behind an
// inbox read; the journal serialises appends across processes.
//
// # Example
//
//	b, err := broker.Open(broker.Options{DataDir: cfg.AACP.DataDir, DefaultTTL: ttl})
//	if err != nil { ... }
//	defer b.Close()
//	b.RegisterAgent(ctx, "manager_001", broker.RegisterInput{Type: envelope.Manager})
//	out, err := b.Send(ctx, "manager_001", broker.SendInput{
//		Receiver:    broker.Receiver{AgentID: "impl_001"},
//		MessageType: envelope.TaskAssignment,
//		Payload:     json.RawMessage(`{"taskId":"t1","taskRef":"T1","taskDescription":"…","memoryLogPath":"m.md","executionType":"single-step"}`),
//	})
//	// in the process hosting impl_001:
//	got, err := b.Receive(ctx, "impl_001", broker.ReceiveInput{WaitMs: 30000})
//	b.Ack(ctx, "impl_001", broker.AckInput{MessageID: got.Messages[0].MessageID, Status: "processed"})
package broker
