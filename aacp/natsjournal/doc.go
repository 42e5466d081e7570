// Package natsjournal is the persistence of agent-to-agent messaging
// (journal.Store) on NATS JetStream, so that mcprt processes on several
// machines share one set of channels, ledgers, registry and dead letters.
// The broker runs on it unchanged: same tools, same semantics.
//
// # Layout
//
//	stream AACP_CHANNELS  aacp.ch.{receiver}.{sender}   one message per write (a transmission, or a pack of them), header Mcprt-Seq = channel seq
//	stream AACP_LEDGERS   aacp.lg.{agent}               one message per Ledger.Put (NDJSON records)
//	stream AACP_DEAD      aacp.dl.{messageId}           one message per dead-letter change (latest wins)
//	kv     AACP_AGENTS    {agentId}                     the registry (JSON AgentRecord)
//	kv     AACP_CLAIMS    {agentId}                     agent claims: leases (package lease)
//
// Every stream uses file storage and Options.Replicas replicas. A '.' in
// an agent id becomes '~' in a subject token.
//
// # Guarantees
//
// Append publishes with the channel's next seq and JetStream's expected
// last sequence per subject (compare-and-swap): of concurrent appenders
// to one channel, on any machine, one wins and the others re-read the
// channel's end and retry, so seqs are dense and in stream order. Within
// one store, appends to a channel are group-committed: one write per
// channel is in flight, and the appends queued meanwhile go out as one
// JetStream message, a pack (header Mcprt-Count = how many; Mcprt-Seq =
// the seq of its last; the envelopes one after another): one
// compare-and-swap, one message stored and, under sync_always, synced
// once, all or none. (JetStream's atomic batches would keep one message
// per transmission, but on a stream of one replica with file storage the
// server stages each batch in a file store of its own, about 20 ms a
// batch.) An inbox passes a pack's transmissions one by one; compaction
// purges a pack whole or not at all. Each single
// transmission is published with its messageId as the JetStream message
// id, a pack with its last one's: a publish repeated within the dedup
// window (nats.dedupWindowMs; a client that reconnects and resends) is
// stored once, and a store answers a repeated Append of any transmission
// it wrote lately (its last 1,024 per channel) from memory. Beyond that,
// the receiver's ledger (its inbound records, themselves on JetStream)
// recognises a repeated request, as with the file journal (so the
// ledgers, which are on JetStream, are the durable record of seen request
// ids beyond the window: the sender's by requestId, the receiver's by
// sender and requestId). Append returns only after JetStream acknowledged
// the write: stored under the server's sync policy (sync_always when
// aacp.fsync=always on an embedded server), on a quorum of replicas in a
// cluster. A write JetStream did not confirm (timeout, no quorum) fails;
// it may still have been stored, like any timed-out write.
//
// A ledger's writes are group-committed: one publish per ledger is in
// flight, and the records Put meanwhile go out together in the next
// message; Ledger.Sync waits until every record Put before it was
// acknowledged. Concurrent sends of one agent thus cost JetStream (and
// its fsyncs) one ledger message, not one each.
//
// Every request to JetStream (publishes, reads of a channel's end, the
// registry, ledger loads, dead letters, consumer creation) is made in
// bounded attempts and sent again while it goes unanswered or the
// cluster has no leader for the stream, until the caller's deadline:
// a request caught by a node's loss or a leader election is not waited
// for forever. Writes carry a message id or a compare-and-swap, so a
// repeat is stored once.
//
// Claim is a lease on the agent id (create on a key-value bucket with a
// TTL, renewed every third of it): two stores never hold one agent; a
// holder that dies without releasing frees it after nats.claimTtlMs.
//
// An Inbox reads aacp.ch.{receiver}.* through an ephemeral consumer it
// keeps itself: new messages are pushed by the server as they are stored
// (from any machine) and signal Changed, so no one polls. The server
// sends a heartbeat every second while the inbox waits; two missed ones
// (the node holding the consumer stopped, a route broke), a deleted
// consumer, a gap in its delivery sequence, or a Read that waited 3 s
// for a message the stream holds make the inbox replace the consumer at
// once with one that starts after the last stream seq delivered. Read
// first learns the last stored message for the receiver and waits until
// the consumer delivered it, so a Read after any Append sees it.
// CompactChannel purges the messages an inbox of this store has read
// below the given seq, always keeping the channel's last message (it
// holds the channel's seq).
//
// A ledger is replayed from its subject when first used; PurgeExpired
// (and a ledger whose dead records outnumber live ones) publishes a
// snapshot and purges the subject before it.
//
// # Starting
//
// Open creates the streams and buckets, or adopts existing ones; one it
// can neither create nor update (another storage type, subjects owned by
// another stream) is an error naming it, so a process fails at start
// rather than at its first send.
package natsjournal
