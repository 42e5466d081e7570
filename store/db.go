package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/diskerr"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// FileName is the name of the database file inside the data directory.
const FileName = "mcprt.db"

// DefaultBusyTimeout is how long a writer waits for another process's write
// transaction before giving up, when Options.BusyTimeout is zero.
const DefaultBusyTimeout = 10 * time.Second

// Options configure a DB. The zero value of every field has a documented
// default; Dir is required.
type Options struct {
	// Dir is the data directory. It is created (mode 0700) on first use.
	Dir string
	// BusyTimeout bounds how long one statement waits for a lock held by
	// another connection or process. Zero means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// Clock stamps the schema_version rows. Nil means core.SystemClock.
	Clock core.Clock
	// ReadOnly opens the database for reading only: the directory and the
	// file are never created, migrations are not applied, and every write
	// fails with STORAGE_READ_ONLY. For readers beside a server (hooks).
	ReadOnly bool
}

// DB is the shared SQLite database of one data directory. It is opened on
// first use (see Open) and is safe for concurrent use by many goroutines;
// several processes may use the same directory at once.
type DB struct {
	opts Options
	path string

	mu sync.Mutex // guards db
	db *sql.DB    // nil until the first successful open; guarded by mu

	// writeSlot serialises this process's write transactions so that its
	// goroutines queue in Go (honouring their contexts) instead of
	// spinning in SQLite's busy handler against each other. Other
	// processes are held off by SQLite's file locks and the busy timeout.
	writeSlot chan struct{}

	hooks writeHooks // called after each committed write (changes.go)

	// readOnly: the directory or file was not writable when the database
	// was opened, so it was opened read-only (reads work, writes fail
	// with STORAGE_READ_ONLY until it is writable again). ident is the
	// database file's identity when opened. Both guarded by mu.
	readOnly bool
	ident    fileID
}

// New returns a DB for the data directory opts.Dir (a relative path is
// taken from the working directory now). Nothing is touched on disk until
// the first operation (or an explicit Open).
func New(opts Options) (*DB, error) {
	if opts.Dir == "" {
		return nil, core.NewError(core.CodeInvalidArgument, "store: no data directory given: set Options.Dir to a directory path")
	}
	// The DSN is a file: URI, which needs an absolute path (a relative one
	// would be read as a URI authority).
	abs, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidArgument, "store: cannot make the data directory %q absolute: %v", opts.Dir, err)
	}
	opts.Dir = abs
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	if opts.Clock == nil {
		opts.Clock = core.SystemClock{}
	}
	return &DB{
		opts:      opts,
		path:      filepath.Join(opts.Dir, FileName),
		writeSlot: make(chan struct{}, 1),
	}, nil
}

// Path returns the database file's path.
func (d *DB) Path() string { return d.path }

// Open opens the database and applies pending migrations if that has not
// happened yet. It is called by every operation, so calling it is only
// needed to fail early. A failed open is not remembered: the next call
// tries again.
func (d *DB) Open(ctx context.Context) error {
	_, err := d.handle(ctx)
	return err
}

// handle returns the open *sql.DB, opening it on first use.
func (d *DB) handle(ctx context.Context) (*sql.DB, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.db != nil {
		return d.db, nil
	}
	db, err := d.open(ctx)
	if err != nil {
		return nil, err
	}
	d.db = db
	return db, nil
}

// writeHandle is handle for a write: a database opened read-only is
// reopened read-write once its directory is writable again (or the write
// is refused), and a database file removed or replaced under the server
// is refused rather than written into.
func (d *DB) writeHandle(ctx context.Context) (*sql.DB, error) {
	if d.opts.ReadOnly {
		return nil, diskerr.New(diskerr.CodeReadOnly, "store: write to "+d.path,
			errors.New("the store was opened for reading only (Options.ReadOnly)"))
	}
	d.mu.Lock()
	if d.db != nil && d.readOnly {
		if !writable(d.opts.Dir, d.path) {
			d.mu.Unlock()
			return nil, diskerr.New(diskerr.CodeReadOnly, "store: write to "+d.path,
				errors.New("the data directory is read-only; it was opened for reading only"))
		}
		d.db.Close()
		d.db = nil
	}
	d.mu.Unlock()
	db, err := d.handle(ctx)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.checkIdentity("write to " + d.path); err != nil {
		return nil, err
	}
	return db, nil
}

func (d *DB) open(ctx context.Context) (*sql.DB, error) {
	if d.opts.ReadOnly {
		return d.openReadOnly(ctx)
	}
	if err := os.MkdirAll(d.opts.Dir, 0o700); err != nil {
		if _, serr := os.Stat(d.path); serr != nil {
			return nil, d.storeError(ctx, "create the data directory "+d.opts.Dir, err)
		}
	}
	if !writable(d.opts.Dir, d.path) {
		return d.openReadOnly(ctx)
	}
	// Pragmas run on every new connection, in this order: the busy
	// timeout first, so that switching to WAL waits for a concurrent
	// opener instead of failing.
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", d.opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	// A page cache of 512 KiB per connection, not SQLite's 2 MiB: modernc's
	// SQLite keeps it outside the Go heap, and under a steady trace load
	// the pool's connections filled theirs, about 3 MB of the process's
	// resident set (bench/cmd/rssmap); reads that miss it are served by the
	// operating system's file cache.
	q.Add("_pragma", "cache_size(-512)")
	dsn := (&url.URL{Scheme: "file", Path: d.path, RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, core.Errorf(core.CodeInternal, "store: cannot open %q: %w", d.path, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(4)
	// When several processes open a fresh directory at once, a new
	// connection's switch to WAL can meet another's first migration and
	// fail with SQLITE_BUSY at once (the busy handler does not cover the
	// switch): try again a few times, briefly.
	for attempt := 1; ; attempt++ {
		err := migrate(ctx, d, db)
		if err == nil {
			break
		}
		if attempt == 5 || !strings.Contains(err.Error(), "SQLITE_BUSY") {
			db.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			db.Close()
			return nil, err
		case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
		}
	}
	ident, err := identity(d.path)
	if err != nil {
		db.Close()
		return nil, d.storeError(ctx, "open "+d.path, err)
	}
	d.ident, d.readOnly = ident, false
	return db, nil
}

// openReadOnly opens the database of a directory that cannot be written
// (a read-only mount, or permissions): reads work, writes are refused.
// Migrations are not applied; the schema is whatever the last writable
// open left. With no -shm file beside a WAL database, SQLite can read it
// only as immutable, which is what a read-only file system makes it.
func (d *DB) openReadOnly(ctx context.Context) (*sql.DB, error) {
	ident, err := identity(d.path)
	if err != nil {
		return nil, d.storeError(ctx, "open "+d.path+" (the data directory is not writable)", err)
	}
	var lastErr error
	for _, extra := range []string{"mode=ro", "mode=ro&immutable=1"} {
		q := fmt.Sprintf("_pragma=busy_timeout(%d)&%s", d.opts.BusyTimeout.Milliseconds(), extra)
		dsn := (&url.URL{Scheme: "file", Path: d.path, RawQuery: q}).String()
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			lastErr = err
			continue
		}
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
			db.Close()
			lastErr = err
			continue
		}
		db.SetMaxOpenConns(8)
		d.ident, d.readOnly = ident, true
		return db, nil
	}
	return nil, d.storeError(ctx, "open "+d.path+" read-only (the data directory is not writable)", lastErr)
}

// Close closes the database. Operations after Close reopen it.
func (d *DB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.db == nil {
		return nil
	}
	err := d.db.Close()
	d.db = nil
	if err != nil {
		return fmt.Errorf("store: close %q: %w", d.path, err)
	}
	return nil
}

// write runs fn inside one BEGIN IMMEDIATE transaction: the write lock is
// taken at the start, so fn never meets SQLITE_BUSY half-way through (a
// deferred transaction that upgrades to writing can fail at once, busy
// timeout or not). fn's error rolls the transaction back and is returned
// as it is.
func (d *DB) write(ctx context.Context, fn func(conn *sql.Conn) error) error {
	// Inside ApplyEvent the write joins the event's transaction.
	if conn := applyConn(ctx, d); conn != nil {
		return fn(conn)
	}
	db, err := d.writeHandle(ctx)
	if err != nil {
		return err
	}
	select {
	case d.writeSlot <- struct{}{}:
	case <-ctx.Done():
		return ctxError(ctx, "waiting for the write slot")
	}
	defer func() { <-d.writeSlot }()
	if err := runImmediate(ctx, db, fn); err != nil {
		return d.named(err)
	}
	// Removed between the check before the transaction and its commit:
	// the commit went into a file nobody will open again.
	d.mu.Lock()
	err = d.checkIdentity("commit to " + d.path)
	d.mu.Unlock()
	if err != nil {
		return err
	}
	d.wrote()
	return nil
}

// runImmediate runs fn in a BEGIN IMMEDIATE transaction on one connection.
func runImmediate(ctx context.Context, db *sql.DB, fn func(conn *sql.Conn) error) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return storeError(ctx, "taking a connection", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return storeError(ctx, "starting a write transaction", err)
	}
	committed := false
	defer func() {
		if !committed {
			// The caller's context may be cancelled: roll back regardless.
			if _, rbErr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rbErr != nil && err == nil {
				err = storeError(ctx, "rolling back", rbErr)
			}
		}
	}()
	if err := fn(conn); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return storeError(ctx, "committing", err)
	}
	committed = true
	return nil
}

// read runs fn inside one read transaction: a consistent snapshot that
// never waits for writers (WAL).
func (d *DB) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	db, err := d.handle(ctx)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return storeError(ctx, "starting a read transaction", err)
	}
	defer tx.Rollback() // read-only: nothing to lose
	return fn(tx)
}

func ctxError(ctx context.Context, doing string) error {
	return core.Errorf(core.CodeTimeout, "store: %s: %w", doing, context.Cause(ctx))
}
