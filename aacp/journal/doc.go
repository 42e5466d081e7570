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
//	ledger/{agentId}.ndjson                               {"kind":"request"|"message"|"outcome"|"inbound", ...}
//	registry/agents.ndjson                                one line per registration (latest wins)
//	deadletter/messages.ndjson                            one line per change (latest wins)
//	locks/{agentId}.lock                                  the agent's claim
//
// # Several processes
//
// Any number of processes may open the same directory. Each append takes
// the file's advisory lock (flock on a *.lock file beside it), checks that
// its descriptor still names the file at the path (another process may
// have rotated or rewritten it), cuts off a torn last line if it finds
// one, and writes whole lines with a single write on an O_APPEND
// descriptor. The check is skipped while nothing changed: the first 8
// bytes of the lock file, mapped shared by every process, count changes;
// each holder of the lock adds one before it changes the file (so a
// holder killed half-way still leaves the count moved), and a writer that
// finds the count where its own last append left it knows the file is as
// it left it. (Every process sharing a directory must therefore be a
// build that keeps the count; where mapping is unavailable, every append
// checks.) A channel's next seq is read from the file's last line under
// that lock, so seq is dense and in file order whoever appends. An agent
// is claimed by one holder at a time (flock on locks/{agentId}.lock); only
// the holder reads the agent's inbound channels, writes its ledger and
// compacts its inbound channels. The kernel drops a dead process's locks.
//
// # Durability and crashes
//
// Under FsyncAlways (the default) Append, and Ledger.Sync after Put,
// return only once the data is on stable storage; concurrent writers of
// one file share an fsync (group commit). FsyncBatch leaves forcing to
// Store.Sync, which the owner calls on a timer; FsyncNever leaves it to
// the operating system. A process that dies (kill -9 included) loses
// nothing it had written, whatever the policy; a machine crash may lose
// the unsynced tail under batch and never. A line cut short by a crash is
// never passed to a reader: readers consume complete lines only, a
// ledger replay ignores the partial tail, and the next writer truncates
// it. A complete line that does not decode is skipped with a warning.
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
// other systems).
//
// All Store, Ledger and Inbox methods are safe for concurrent use, except
// that one Inbox must not be Read by two goroutines at once.
package journal
