// Package presencekv keeps agents' presence records (who was last seen
// when, by which process, and whether its session ended) in one NATS
// JetStream key-value bucket, AACP_PRESENCE, so that every mcprt process
// on one NATS — whatever its data directory, and whether messaging, the
// shared state or both are on NATS — judges an agent's presence from the
// same record. It is the one presence mechanism of the NATS backends.
//
// # Contract
//
//   - One key per agent id, holding the last record its hosting process
//     wrote (History 1, file storage, Options.Replicas replicas). A Put is
//     acknowledged by the bucket's stream (in a cluster: by its quorum)
//     before it returns, so a Get on any node after that sees it or a
//     later record.
//   - The record carries its writer's lastSeen; each reader grades it
//     (online, idle, stale) against its own clock and aacp.idleAfterMs /
//     aacp.staleAfterMs. The bucket has no TTL: expiry by the NATS
//     server's clock could not be moved by a test's clock and would make
//     "stale" a second notion of time; machine clocks are assumed in sync
//     to well within aacp.staleAfterMs (NTP).
//   - Writes: the messaging service coalesces heartbeats to at most one
//     Put per agent per second (aacp_heartbeat writes at once), and one
//     when a session ends (the record marked released). Reads are one Get
//     per judged agent. This is fewer writes than a lease kept alive by
//     renewal and needs no stream of events.
//   - Errors are wrapped with the bucket and agent they concern; Get of
//     an agent without a record is nil, nil; Delete of one is no error.
//
// Why not the alternatives: the agent registry's bucket (AACP_AGENTS)
// exists only with aacp.backend=nats, and the shared state's stream
// (aacp.stateBackend=nats) keeps every event forever, which a heartbeat
// a second per agent would bloat; a lease bucket's TTL runs on the
// server's clock. A bucket of last-seen records serves both backends
// with one mechanism.
package presencekv
