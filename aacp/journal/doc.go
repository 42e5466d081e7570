// Package journal is the persistence of agent-to-agent messaging: the
// Store interface, a durable implementation on disk (FileStore) and one in
// memory (MemoryStore).
//
// A Store holds four things:
//
//   - channels: for each sender→receiver pair, the transmissions in the
//     order they were appended, numbered 1, 2, 3, … (seq) without gaps;
//   - ledgers: for each agent, what it sent (requests, transmissions and
//     every state change) and how it answered what it received (inbound
//     records), replayed into an in-memory index on open;
//   - the agent registry;
//   - the dead-letter queue.
//
// # On disk
//
// Every data file is NDJSON (one JSON object per line), readable with jq:
//
//	channels/{sender}_to_{receiver}/messages.ndjson       active segment
//	channels/{sender}_to_{receiver}/messages.{seq}.ndjson  sealed segments, named by their last seq
//	channels/{sender}_to_{receiver}/seq.json              highest seq removed by compaction
//	ledger/{agentId}.ndjson                               {"kind":"request"|"message"|"outcome"|"inbound", ...}, see "One send, one write of its payload"
//	registry/agents.ndjson                                one line per registration (latest wins)
//	deadletter/messages.ndjson                            one line per change (latest wins)
//	locks/{agentId}.lock                                  the agent's claim
//	locks/channels.gen                                    one byte per channel a process first writes to: inboxes list the channels again when it grows
//	channels/{sender}_to_{receiver}/messages.lock         the channel's append lock and durable mark
//	quarantine/lines.ndjson                               copies of refused channel lines
//
// # Several processes
//
// Any number of processes may open the same directory. Each append takes
// the file's advisory lock (flock on a *.lock file beside it; a lock file
// removed or replaced meanwhile is opened again, since a lock on an
// unlinked file excludes nobody), checks with one stat that its
// descriptor still names the file at the path (another process may have
// rotated or rewritten it, a person may have removed it), cuts off a torn
// last line if it finds one, and writes whole lines with a single write
// on an O_APPEND descriptor. (Earlier builds skipped the stat through a
// change counter memory-mapped from the lock file; mapping a sparse file
// made a full disk a SIGBUS, and a stat costs little beside the lock, so
// the counter is gone and no unsafe code is left.) A channel's next seq
// is derived from its lines under that lock (see "Damaged lines"), so seq
// is dense and in file order whoever appends. An agent
// is claimed by one holder at a time (flock on locks/{agentId}.lock); only
// the holder reads the agent's inbound channels, writes its ledger and
// compacts its inbound channels. The kernel drops a dead process's locks.
//
// # Durability and crashes
//
// Under FsyncAlways (the default) Append, and Ledger.Sync after Put,
// return only once the data is on stable storage; concurrent writers of
// one file share an fsync (group commit: a writer that arrives while an
// fsync is in flight joins the next one, which covers every line written
// by the time it starts; none returns before an fsync that started after
// its write has finished). FsyncBatch leaves forcing to
// Store.Sync, which the owner calls on a timer; FsyncNever leaves it to
// the operating system. A process that dies (kill -9 included) loses
// nothing it had written, whatever the policy; a machine crash may lose
// the unsynced tail under batch and never. A line cut short by a crash is
// never passed to a reader: readers consume complete lines only, a
// ledger replay ignores the partial tail, and the next writer truncates
// it.
//
// Under FsyncAlways a transmission is never visible before it is
// durable: this process's receivers are woken after the fsync, and a
// reader (in any process) passes a line of the active segment only once
// it knows the line is durable: from the channel's durable mark, or by
// fsyncing the segment itself. The mark (32 bytes at the start of the
// channel's messages.lock: the segment's device and inode, an offset and
// a check) is written by a writer after its fsync, saying "this file is
// on stable storage up to here"; it spares a reader in another process a
// second fsync of the same bytes (a reader woken by a write before its
// writer's fsync ended still makes its own, which overlaps the
// writer's). A new segment is marked (its inode, 0) before it holds a
// byte, a reader reads the mark after the data, and a mark that does not
// verify or names another file vouches for nothing; durable.go argues why
// a stale mark cannot vouch for bytes that are not durable.
//
// # One send, one write of its payload
//
// A sender records a transmission in its ledger from AppendOptions.Before:
// under the channel's lock, with the seq the line will get, in one write
// ahead of the line (AppendWith does the same for a store that cannot,
// with seq 0 first). The file ledger then writes the request record
// without its payload ("payload":null) and names the channel line that
// holds it (payloadAt: receiver, seq, messageId): the payload is written
// once, in the channel line, and under FsyncAlways the send makes one
// fsync, the channel's; the ledger's lines reach stable storage with the
// next Ledger.Sync or Store.Sync (the broker syncs every tick) or Close.
// A killed process loses neither (both are written before Append
// returns); a machine crash may keep the line and lose the last ledger
// lines, so the sender's view of its latest sends (their status), never
// the delivery itself.
//
// The payload stays in memory in the process that wrote it. A ledger
// opened later reads it back from the channel, checking the messageId,
// in one pass over a channel when a request's payload is first asked for
// (Ledger.Request). A channel keeps a line until its receiver has
// processed it, and before anything that may need the payload after
// that — a retry scheduled (PENDING), a failure (FAILED, for the
// dead-letter queue) — the ledger writes the full request record. No
// counter is memory-mapped and no unsafe code is used: a stat under the
// lock is cheap beside the fsync.
//
// # Storage failures
//
// A write the file system refuses (ENOSPC, EDQUOT, EFBIG past a file-size
// limit, EIO, EROFS) or a directory removed under the process fails that
// call with a *core.Error of package internal/diskerr (STORAGE_FULL and
// STORAGE_IO_ERROR retryable); nothing else is affected, reads go on, and
// the next append after space returns succeeds (a partial line left by
// the failed write is cut off first).
//
// # Damaged lines
//
// A reader passes a channel line only when it is valid UTF-8, decodes to
// an envelope with a seq and a messageId, is filed in its channel, and
// its seq continues the numbering: above the last seq passed, by at most
// one more than the lines refused since. Any other line is refused: it
// stays where it is (every reader skips it the same way), and a copy,
// with the channel, file, offset and reason, goes to
// quarantine/lines.ndjson (once per line; Quarantined lists them, as does
// mcprt aacp quarantine). A refused line never blocks, hides or
// renumbers the lines after it. Writers derive the last seq by the same
// rule, scanning the active segment from the sealed base when they first
// see it and only the new bytes after another process appended, so a seq
// of 2^64-1 or a repeated seq cannot stop or bend the numbering. A
// transmission whose line was refused is not delivered; its sender's
// retry after the ack timeout delivers it with a new seq. Damaged ledger,
// registry and dead-letter lines are skipped with a warning.
//
// # Growth
//
// A channel's active segment is sealed (renamed) when it would pass
// MaxSegmentBytes; the receiver removes sealed segments it has fully
// processed with CompactChannel. A ledger is rewritten from its index
// (through a renamed temporary file) when PurgeExpired drops records or
// when dead lines outnumber live ones; the dead-letter queue is rewritten
// by Store.PurgeExpired.
//
// # Notification
//
// An Inbox learns of new data from inotify on Linux (watches on the
// channels directory and on each channel into its receiver), from appends
// made through the same store, and from a poll tick (the only mechanism on
// other systems). Changes to lock files (durable marks) wake nobody.
//
// All Store, Ledger and Inbox methods are safe for concurrent use, except
// that one Inbox must not be Read by two goroutines at once.
package journal
