//go:build unix

package journal

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockExclusive takes an exclusive advisory lock on f, waiting for it.
func lockExclusive(f *os.File) error { return flock(f, unix.LOCK_EX) }

// unlock releases f's advisory lock.
func unlock(f *os.File) error { return flock(f, unix.LOCK_UN) }

// tryLock takes f's lock without waiting (shared or exclusive); it reports
// false when someone else holds a conflicting lock.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	err := flock(f, how|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			if err != nil {
				return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

// inode identifies the file behind fi (device and inode number). The
// os package describes files with syscall.Stat_t, so this one use of
// syscall stays.
func inode(fi os.FileInfo) [2]uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return [2]uint64{uint64(st.Dev), uint64(st.Ino)}
	}
	return [2]uint64{}
}
