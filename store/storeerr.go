package store

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/diskerr"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// CodeBusy is the code of a write that waited the whole busy timeout for
// the database's write lock, held by another connection or process. It is
// retryable: the holder finishes.
const CodeBusy core.Code = "STORE_BUSY"

// storeError turns a database failure into an *core.Error: TIMEOUT when
// the caller's context ended; STORE_BUSY (retryable) when the database's
// write lock stayed taken; the storage codes of package diskerr when the
// disk is full, read-only or failing; INTERNAL otherwise; each with what
// was being done.
func (d *DB) storeError(ctx context.Context, doing string, err error) error {
	var ce *core.Error
	if errors.As(err, &ce) {
		return err
	}
	if ctx.Err() != nil {
		return ctxError(ctx, doing)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		path := "the store"
		timeout := DefaultBusyTimeout
		if d != nil {
			path, timeout = d.path, d.opts.BusyTimeout
		}
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return core.Errorf(CodeBusy,
				"store: %s: the write lock of the SQLite database %s was held by another connection or process for the whole busy timeout (%s): %w; call again shortly",
				doing, path, timeout, err).WithRetryable(true)
		case sqlite3.SQLITE_FULL:
			return diskerr.New(diskerr.CodeFull, "store: "+doing+" in "+path, err)
		case sqlite3.SQLITE_READONLY:
			return diskerr.New(diskerr.CodeReadOnly, "store: "+doing+" in "+path, err)
		case sqlite3.SQLITE_IOERR:
			if code, ok := diskerr.CodeOf(err); ok {
				return diskerr.New(code, "store: "+doing+" in "+path, err)
			}
			return diskerr.New(diskerr.CodeIO, "store: "+doing+" in "+path, err)
		case sqlite3.SQLITE_CANTOPEN:
			if d != nil && d.gone() {
				return diskerr.New(diskerr.CodeGone, "store: "+doing+" in "+path, err)
			}
		}
	}
	if c := diskerr.Classify(err, "store: "+doing); c != err {
		return c
	}
	return core.Errorf(core.CodeInternal, "store: %s: %w", doing, err)
}

// named adds the database's path to a STORE_BUSY error made without it.
func (d *DB) named(err error) error {
	var ce *core.Error
	if errors.As(err, &ce) && ce.Code == CodeBusy && ce.Unwrap() != nil {
		var se *sqlite.Error
		if errors.As(ce.Unwrap(), &se) {
			return d.storeError(context.Background(), "writing", se)
		}
	}
	return err
}

// storeError is DB.storeError for callers without the DB at hand.
func storeError(ctx context.Context, doing string, err error) error {
	return (*DB)(nil).storeError(ctx, doing, err)
}

// fileID is a file's identity: device and inode.
type fileID [2]uint64

// gone reports whether the data directory or the database file has been
// removed.
func (d *DB) gone() bool {
	_, err := os.Stat(d.path)
	return errors.Is(err, os.ErrNotExist)
}

// checkIdentity refuses to write when the database file this DB opened is
// no longer the file at its path (removed, or replaced by another): a
// write would go into a file nobody will open again, and be lost. One stat.
func (d *DB) checkIdentity(doing string) error {
	id, err := identity(d.path)
	if err == nil && id == d.ident {
		return nil
	}
	what := "was replaced by another file"
	if errors.Is(err, os.ErrNotExist) {
		what = "was removed"
	} else if err != nil {
		return diskerr.Classify(fmt.Errorf("store: %s: stat %s: %w", doing, d.path, err), "store: "+doing)
	}
	return diskerr.New(diskerr.CodeGone, "store: "+doing,
		fmt.Errorf("the database file %s %s while the server ran", d.path, what))
}
