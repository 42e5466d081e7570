//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// identity returns the identity of the file at path: device and inode.
func identity(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, errors.New("no device and inode for " + path)
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, nil //nolint:unconvert // Dev is int32 on some systems
}

// writable reports whether dir can take new files (the database's -wal
// and -shm files, a new database) and path, when it exists, can be
// written (access(2), which also says EROFS on a read-only mount).
func writable(dir, path string) bool {
	const wOK = 2
	if syscall.Access(dir, wOK) != nil {
		return false
	}
	err := syscall.Access(path, wOK)
	return err == nil || errors.Is(err, os.ErrNotExist)
}
