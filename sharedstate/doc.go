// Package sharedstate shares mcprt's domain state (memory, sessions and
// the guard policies applied to them, file reservations, the work queue)
// among mcprt processes on several machines through one NATS JetStream
// stream of state events, applied in stream order to each node's local
// SQLite store (package store). Reads, full-text search included, stay
// local and work exactly as on one machine; traces are not shared.
//
// # Layout
//
//	stream SHARED_STATE  state.{domain}   one message per event: {id, kind, data}
//
// The stream uses file storage, Options.Replicas replicas and a dedup
// window of Options.DedupWindow (two minutes unless set; the binary sets
// the longest deadline a write can have) keyed by the event id (a publish
// repeated across a reconnect is stored once). Nothing is ever removed from it: a node
// that joins late, or whose store is new, replays it from the start.
//
// # Contract
//
//   - Apply: a Replicator follows the stream with an ordered consumer
//     (the server pushes new events; nobody polls) from the sequence its
//     store last applied, and applies each event with store.ApplyEvent:
//     the event's writes, its outcome and the new applied sequence commit
//     in one transaction. An event is applied at most once per store
//     however often it is delivered (redelivery, restart, two processes
//     sharing one data directory), and a restarted node resumes after the
//     sequence it recorded. A storage failure is retried in place, since
//     nothing after it may be applied first; an event kind this build
//     does not know stops the applier (health shows it) rather than let
//     the node diverge.
//   - Determinism: a Handler writes the same rows on every node, because
//     the event carries everything decided by its writer (ids, times from
//     the writer's clock, the patterns, the new state of a task or
//     session) and the handler runs against a store that holds exactly
//     the events before it. A domain error is an outcome like any other:
//     its writes are undone on every node alike.
//   - Read-your-writes: a write (Do, Decide) publishes its event, waits
//     until the local store has applied it (Options.WaitTimeout), and
//     returns that event's outcome, read from the store — so the writing
//     session reads its write at once; other nodes see it once their
//     applier reaches it (health's sharedState.lag).
//   - Linearizable decisions: the stream orders every event of every
//     node. An operation whose outcome depends on the state (reserve
//     paths, claim the next task, release a holder's tasks) is an event
//     carrying its inputs, decided where it lands in that order, the same
//     way on every node; so of racing writers on any machines exactly one
//     wins, and each learns which from its own event's outcome. An update
//     computed by code that cannot travel in an event (task and session
//     updates take a function) uses Decide: catch up with the domain's
//     subject, compute the new state locally, publish it with JetStream's
//     expected last sequence of the subject, and start again when another
//     event of the domain came in between.
//   - Publishing: an attempt without an answer within 3 s (a leader
//     election, a reconnection) is sent again with the same event id
//     until the caller's deadline, and never once the dedup window has
//     passed since the first attempt; the stream stores it once.
//   - Errors: SHARED_STATE_UNAVAILABLE (retryable) when an event cannot be
//     published (NATS unreachable, no quorum) or was not applied locally
//     in time; SHARED_STATE_CONTENDED (retryable) when
//     Decide lost its compare-and-set 64 times in a row.
//
// # Not here
//
// Presence is natsengine/presencekv's (one bucket of last-seen records,
// opened whenever either backend is on NATS) and agent claims are the
// messaging journal's (leases of aacp/natsjournal under
// aacp.backend=nats): the reservation and task services ask messaging,
// which reads that bucket, whether a holder is still there. Traces
// stay per node. Code that writes to a store.DB directly bypasses the
// stream: under aacp.stateBackend=nats every write must go through the
// Store wrappers here (the binary's tools and its /ui/ console do).
//
// # Plugging in more state
//
// A new kind of shared state needs no new mechanism: choose a domain
// token (its subject is state.{token}), write the store operation as
// usual (every store write joins ApplyEvent's transaction through the
// ctx it is given), and register one Handler per event kind with
// Replicator.Handle before Start, next to a wrapper of the domain's Store
// interface whose writes call Do (or Decide) and whose reads go to the
// local store — as Memory, Sessions, Reservations and Tasks do here. A
// new event kind must be known to every node before any node writes it:
// upgrade the readers first.
package sharedstate
