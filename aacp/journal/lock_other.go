//go:build !unix

package journal

import (
	"os"
	"sync"
)

// Without flock the file journal is safe for one process only: these
// locks are process-wide mutexes keyed by file name.

var fileLocks sync.Map // name → *sync.Mutex

func mutexFor(f *os.File) *sync.Mutex {
	m, _ := fileLocks.LoadOrStore(f.Name(), new(sync.Mutex))
	return m.(*sync.Mutex)
}

func lockExclusive(f *os.File) error { mutexFor(f).Lock(); return nil }
func unlock(f *os.File) error        { mutexFor(f).Unlock(); return nil }
func tryLock(f *os.File, _ bool) (bool, error) {
	return mutexFor(f).TryLock(), nil
}

func inode(fi os.FileInfo) [2]uint64 {
	return [2]uint64{uint64(fi.ModTime().UnixNano()), 0}
}
