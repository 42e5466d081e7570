package journal

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/mcprt/mcprt/internal/diskerr"
)

// appendFile is one NDJSON file that several goroutines and processes
// append to. Writers of this process take mu, then the advisory lock of a
// separate lock file (which never moves, unlike the data file, which may
// be rotated or rewritten by another process); under both they check that
// their descriptor still names the file at path, repair a torn tail, and
// write whole lines with one write on an O_APPEND descriptor.
//
// Durability is group commit: every write bumps a counter; waitSync(n)
// returns once an fsync that started after write n has finished, and one
// fsync serves every writer waiting at that moment.
type appendFile struct {
	path     string
	lockPath string
	policy   FsyncPolicy
	log      *slog.Logger
	// exclusive: only this process writes the file (a ledger, written by
	// its agent's claim holder), so once the file is open and checked,
	// appends skip the cross-process lock and the path check.
	exclusive bool
	// hooks are the store's (nil: none).
	hooks *ioHooks
	// mark: after each fsync, publish the durable mark in the lock file
	// (a channel's active segment under FsyncAlways; see durable.go).
	mark bool

	mu    sync.Mutex
	lockf *os.File  // guarded by mu
	f     *os.File  // guarded by mu: O_RDWR|O_APPEND on path
	ino   [2]uint64 // guarded by mu: the file f is open on
	size  int64     // guarded by mu: f's size after our last look; -1: unknown
	// cur is f with its identity, for waitSync, which must not wait for
	// mu (a writer may hold it while it waits for another process's
	// lock).
	cur atomic.Pointer[liveFile]

	// markMu orders durable marks and the closing of f: a mark is
	// published only while its file is still open (so that no other file
	// can have its inode number meanwhile).
	markMu   sync.Mutex
	markf    *os.File  // guarded by markMu: the lock file, for marks
	marked   [2]uint64 // guarded by markMu: the file of the last mark published
	markedTo int64     // guarded by markMu: its end

	sc sync.Mutex
	// sync state, guarded by sc
	cond    *sync.Cond
	written uint64 // writes made (bumped under mu, read under sc)
	synced  uint64
	syncing bool
	// the file and the offset that the last write ended at
	writtenID  [2]uint64
	writtenEnd int64
}

// liveFile is an open data file and its identity (device, inode).
type liveFile struct {
	f  *os.File
	id [2]uint64
}

func newAppendFile(path string, policy FsyncPolicy, log *slog.Logger) *appendFile {
	a := &appendFile{path: path, lockPath: lockPathFor(path), policy: policy, log: log, size: -1}
	a.cond = sync.NewCond(&a.sc)
	return a
}

// lockPathFor is "x.lock" for "x.ndjson".
func lockPathFor(path string) string {
	ext := filepath.Ext(path)
	return path[:len(path)-len(ext)] + ".lock"
}

// locked runs fn holding mu and the cross-process lock, with a.f open on
// the current file at path (created when missing) and a.size its size,
// its torn tail (if any) cut off.
//
// Every call looks at the path (one stat) before writing: another process
// may have rotated or rewritten the file, and a person may have removed it
// or the whole directory, and an append into an unlinked file would be
// acknowledged and lost. The exclusive writer of a file skips the lock
// but not that look.
func (a *appendFile) locked(fn func() error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.exclusive && a.f != nil && a.size >= 0 {
		if err := a.stillThere(); err != nil {
			return err
		}
		return fn()
	}
	if err := a.lockFile(); err != nil {
		return err
	}
	defer func() {
		if err := unlock(a.lockf); err != nil {
			a.log.Warn("aacp journal: unlock failed", "path", a.lockPath, "err", err)
		}
	}()
	if err := a.current(); err != nil {
		return err
	}
	return fn()
}

// lockFile opens (when needed) and takes the cross-process lock; mu is
// held. A lock file replaced or removed since it was opened is opened
// again: a lock on an unlinked file excludes nobody.
func (a *appendFile) lockFile() error {
	for attempt := 0; ; attempt++ {
		if a.lockf == nil {
			lf, err := os.OpenFile(a.lockPath, os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				return a.fileError("open the lock file "+a.lockPath, err)
			}
			a.lockf = lf
		}
		if err := lockExclusive(a.lockf); err != nil {
			return a.fileError("lock "+a.lockPath, err)
		}
		same, err := sameFile(a.lockf, a.lockPath)
		if err == nil && same {
			return nil
		}
		_ = unlock(a.lockf)
		a.lockf.Close()
		a.lockf = nil
		a.markMu.Lock() // marks go to the lock file at the path from now on
		if a.markf != nil {
			a.markf.Close()
			a.markf = nil
		}
		a.markMu.Unlock()
		if attempt == 2 {
			if err == nil {
				err = errors.New("the lock file keeps being replaced")
			}
			return a.fileError("lock "+a.lockPath, err)
		}
	}
}

// sameFile reports whether f is still the file at path.
func sameFile(f *os.File, path string) (bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ofi, err := f.Stat()
	if err != nil {
		return false, err
	}
	return inode(fi) == inode(ofi), nil
}

// stillThere checks, for the exclusive writer, that a.f is still the file
// at path; mu is held.
func (a *appendFile) stillThere() error {
	fi, err := os.Stat(a.path)
	if err == nil && inode(fi) == a.ino {
		return nil
	}
	if err == nil || errors.Is(err, os.ErrNotExist) {
		// Replaced or removed by someone else: look again under the lock.
		a.size = -1
		if err := a.lockFile(); err != nil {
			return err
		}
		defer func() { _ = unlock(a.lockf) }()
		return a.current()
	}
	return a.fileError("stat "+a.path, err)
}

// fileError describes a failure on the file system: a storage condition
// (full, read-only, failing, the directory removed) becomes the matching
// tool error; anything else is wrapped with what was being done.
func (a *appendFile) fileError(doing string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(filepath.Dir(a.path)); errors.Is(serr, os.ErrNotExist) {
			return diskerr.New(diskerr.CodeGone, "aacp journal: "+doing, err)
		}
	}
	if c := diskerr.Classify(err, "aacp journal: "+doing); c != err {
		return c
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// current makes a.f the file at path and a.size its complete size; mu and
// the lock are held.
func (a *appendFile) current() error {
	fi, err := os.Stat(a.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		a.retire()
		f, err := os.OpenFile(a.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return a.fileError("create "+a.path, err)
		}
		if fi, err = f.Stat(); err != nil {
			f.Close()
			return fmt.Errorf("stat %s: %w", a.path, err)
		}
		a.f, a.ino, a.size = f, inode(fi), 0
		a.cur.Store(&liveFile{f: f, id: a.ino})
		if a.mark {
			// Before the file holds a byte: a mark left by an earlier
			// file with the same inode number must not vouch for it.
			writeMark(a.lockf, a.ino, 0)
		}
		if a.policy != FsyncNever {
			syncDir(filepath.Dir(a.path))
		}
		return nil
	case err != nil:
		return a.fileError("stat "+a.path, err)
	}
	if a.f == nil || inode(fi) != a.ino {
		a.retire()
		f, err := os.OpenFile(a.path, os.O_RDWR|os.O_APPEND, 0o644)
		if err != nil {
			return a.fileError("open "+a.path, err)
		}
		if fi, err = f.Stat(); err != nil {
			f.Close()
			return fmt.Errorf("stat %s: %w", a.path, err)
		}
		a.f, a.ino, a.size = f, inode(fi), -1
		a.cur.Store(&liveFile{f: f, id: a.ino})
	}
	if fi.Size() != a.size {
		n, err := completeSize(a.f, fi.Size())
		if err != nil {
			return err
		}
		if n != fi.Size() {
			a.log.Warn("aacp journal: cutting off a torn last line", "path", a.path, "bytes", fi.Size()-n)
			if err := a.f.Truncate(n); err != nil {
				return a.fileError("cut the torn tail of "+a.path, err)
			}
		}
		a.size = n
	}
	return nil
}

// retire syncs (unless the policy is never) and closes a.f, so that
// waitSync need not look at it again; a waitSync already calling Sync on
// it gets os.ErrClosed, which it takes for success.
func (a *appendFile) retire() {
	if a.f == nil {
		return
	}
	if a.policy != FsyncNever {
		if err := a.f.Sync(); err != nil {
			a.log.Warn("aacp journal: fsync of a replaced file failed", "path", a.path, "err", err)
		}
	}
	a.sc.Lock()
	a.synced = max(a.synced, a.written)
	a.sc.Unlock()
	a.markMu.Lock()
	a.cur.Store(nil)
	if err := a.f.Close(); err != nil {
		a.log.Warn("aacp journal: close of a replaced file failed", "path", a.path, "err", err)
	}
	a.markMu.Unlock()
	a.f = nil
}

// write appends b (whole lines) to a.f; mu and the lock are held. It
// returns the write's number for waitSync.
func (a *appendFile) write(b []byte) (uint64, error) {
	if err := a.hooks.checkWrite(a.path); err != nil {
		return 0, a.fileError("append to "+a.path, err)
	}
	n, err := a.f.Write(b)
	if err != nil {
		a.size = -1 // a partial line may be there: check the tail next time
		return 0, a.fileError("append to "+a.path, err)
	}
	a.size += int64(n)
	a.sc.Lock()
	a.written++
	w := a.written
	a.writtenID, a.writtenEnd = a.ino, a.size
	a.sc.Unlock()
	return w, nil
}

// rewriteLocked replaces the file's content with data (whole lines), by
// a renamed temporary file; the locks are held. Other writers notice the
// new file when they next take the lock.
func (a *appendFile) rewriteLocked(data []byte) error {
	{
		tmp, err := os.CreateTemp(filepath.Dir(a.path), ".rewrite-*")
		if err != nil {
			return a.fileError("rewrite "+a.path, err)
		}
		_, err = tmp.Write(data)
		if err == nil && a.policy != FsyncNever {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), a.path)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return a.fileError("rewrite "+a.path, err)
		}
		if a.policy != FsyncNever {
			syncDir(filepath.Dir(a.path))
		}
		a.retire()
		return a.current()
	}
}

// append writes b under the locks and waits as the policy says.
func (a *appendFile) append(b []byte) error {
	var w uint64
	err := a.locked(func() (err error) {
		w, err = a.write(b)
		return err
	})
	if err != nil {
		return err
	}
	if a.policy == FsyncAlways {
		return a.waitSync(w)
	}
	return nil
}

// waitSync returns once write w is on stable storage.
func (a *appendFile) waitSync(w uint64) error {
	a.sc.Lock()
	defer a.sc.Unlock()
	for a.synced < w {
		if a.syncing {
			a.cond.Wait()
			continue
		}
		a.syncing = true
		target, id, end := a.written, a.writtenID, a.writtenEnd
		a.sc.Unlock()
		of := a.cur.Load()
		var err error
		if of != nil {
			err = a.hooks.fsync(of.f)
			if err == nil && a.mark && of.id == id {
				a.publish(of, end)
			}
		}
		a.sc.Lock()
		a.syncing = false
		a.cond.Broadcast()
		if err != nil && !errors.Is(err, os.ErrClosed) {
			return a.fileError("fsync "+a.path, err)
		}
		a.synced = max(a.synced, target)
	}
	return nil
}

// publish writes the durable mark: of is on stable storage up to end
// (every write up to one ending there was made before the fsync that
// just finished began). It does nothing once of is no longer the open
// file.
func (a *appendFile) publish(of *liveFile, end int64) {
	a.markMu.Lock()
	defer a.markMu.Unlock()
	if a.cur.Load() != of || (a.marked == of.id && a.markedTo >= end) {
		return
	}
	if a.markf == nil {
		f, err := os.OpenFile(a.lockPath, os.O_RDWR, 0)
		if err != nil {
			return // readers fsync themselves
		}
		a.markf = f
	}
	if readMark(a.markf, of.id) < end { // another process may have marked further
		writeMark(a.markf, of.id, end)
	}
	a.marked, a.markedTo = of.id, end
}

// sync forces everything written so far.
func (a *appendFile) sync() error {
	a.sc.Lock()
	w := a.written
	a.sc.Unlock()
	return a.waitSync(w)
}

func (a *appendFile) close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	if a.f != nil {
		if a.policy != FsyncNever {
			errs = append(errs, a.f.Sync())
		}
		a.markMu.Lock()
		a.cur.Store(nil)
		errs = append(errs, a.f.Close())
		a.markMu.Unlock()
		a.f = nil
	}
	a.markMu.Lock()
	if a.markf != nil {
		errs = append(errs, a.markf.Close())
		a.markf = nil
	}
	a.markMu.Unlock()
	if a.lockf != nil {
		errs = append(errs, a.lockf.Close())
		a.lockf = nil
	}
	return errors.Join(errs...)
}

// syncDir fsyncs a directory so that a file created or renamed in it
// survives a machine crash. Errors are ignored: some file systems refuse.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
