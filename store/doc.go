// Package store keeps the domain data of mcprt in one embedded SQLite
// database, <dir>/mcprt.db, that several mcprt processes may share.
//
// # Contract
//
//   - New touches nothing; the file is opened (and the directory created,
//     mode 0700) by the first operation or by Open. A failed open is
//     retried by the next operation.
//   - The driver is modernc.org/sqlite (pure Go, so CGO_ENABLED=0 builds
//     work). Every connection sets a busy timeout (Options.BusyTimeout),
//     WAL journaling (readers never wait for the writer), synchronous
//     NORMAL, foreign keys and a 512 KiB page cache (SQLite's default is
//     2 MiB; modernc's SQLite keeps it outside the Go heap).
//   - Writes run in BEGIN IMMEDIATE transactions: the write lock is taken
//     up front, so a transaction waits for other writers (up to the busy
//     timeout) instead of failing half-way with SQLITE_BUSY. Inside one
//     process, writers queue on a one-slot channel that honours their
//     contexts. Reads run in deferred (snapshot) transactions or as single
//     statements.
//   - The schema is versioned in code: schema_version holds one row per
//     applied step. Opening applies the missing steps in one BEGIN
//     IMMEDIATE transaction, so when several processes open a fresh
//     directory together each step is applied exactly once. A database
//     newer than the binary is refused.
//   - Errors are *core.Error, with what was being done: TIMEOUT when the
//     caller's context ended; STORE_BUSY (retryable) when a write waited
//     the whole busy timeout for the database's write lock, held by
//     another connection or process; the codes of internal/diskerr when
//     the disk is full (STORAGE_FULL, retryable: SQLite rolls the
//     transaction back, and the next write succeeds once space returns),
//     read-only (STORAGE_READ_ONLY), failing (STORAGE_IO_ERROR) or the
//     database file is gone (STORAGE_GONE); INTERNAL otherwise.
//   - A data directory (or database file) that is not writable when the
//     database is first used is opened read-only (mode=ro, immutable when
//     SQLite needs that to read a WAL database without its -shm file):
//     reads work, migrations are not applied, writes fail
//     STORAGE_READ_ONLY — and a write once the directory is writable
//     again reopens the database read-write.
//   - Every write first checks, with one stat, that the file at the
//     database's path is still the file it opened (device and inode), and
//     checks again after the commit: a database removed (rm -rf of the
//     directory) or replaced under a running process is never written
//     into and acknowledged; the write fails STORAGE_GONE, and the
//     process needs a restart to open a fresh store.
//   - DB, Memory, Sessions and Traces are safe for concurrent use.
//
// # Layout
//
// memory_entries (namespace, key unique; value as compact JSON; stored_at
// in Unix nanoseconds; rev, a write counter that orders equal times) and
// its FTS5 index memory_fts (same rowid; body = memory.IndexText of the
// value) and memory_keys, a trigram FTS5 index of the keys over the same
// rows (kept in step by triggers), through which a search by key substring
// of three characters or more reads only its candidates (shorter queries
// walk the entries newest first); sessions, session_participants (ord keeps join order) and
// session_policies; trace_batches, one row per batch of finished tool
// calls (its events as a compact binary blob, with its time span and the
// lists of trace and session ids it holds, so a write costs one row, not
// one per call; reads decode the batches they select) and trace_blooms,
// per batch a Bloom filter of its trace and session ids, through which
// trace_get and trace_by_session pick the batches they decode; changes,
// the change feed: triggers add a row (seq, domain, scope, key) for every
// write to memory_entries, sessions or trace_batches, in the write's own
// transaction, and trim the table to its last 4096 to 4352 rows;
// aacp_messages, the message index (MessageIndex): one row per agent
// message transmission (thread, subject, payload, state), its FTS5 index
// aacp_messages_fts (same rowid; subject and payload text) and
// aacp_index_channels, per journal channel the highest seq indexed. The
// agent messaging journal stays the source of truth: the index is derived
// from it and can be emptied (Reset) and rebuilt; replication_applied
// and replication_results, per replicated stream the last sequence
// applied and the outcomes of recent events (package sharedstate).
//
// # Replicated state
//
// ApplyEvent applies one event of a stream with a function whose store
// writes (any of Memory, Sessions, Reservations, Tasks, through the ctx
// it is given) join one transaction with the event's outcome and the
// stream's new applied sequence: a sequence already applied is skipped,
// so an event is applied once per database whoever delivers it.
//
// # Change feed
//
// LastChange and ChangesSince read the feed; a reader that fell behind
// the trimming is told so (gap). A Watcher follows it while started: it
// polls every WatchOptions.Interval (timed by the injected core.Clock) for
// other processes' writes and at once after each write its own DB
// commits, stops by itself when WatchOptions.Active says nobody cares,
// and costs nothing until started again.
//
// # Example
//
//	db, err := store.New(store.Options{Dir: ".mcprt"})
//	if err != nil { ... }
//	defer db.Close()
//	mem := memory.NewService(db.Memory(), nil)
//	sessions := session.NewService(db.Sessions(), nil, nil)
package store
