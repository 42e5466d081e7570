package journal

import "os"

// ioHooks are the store's two steps that touch stable storage, made
// replaceable so that tests can inject faults (a full disk, a failing
// device) and hold a step to watch what others see meanwhile. The zero
// value does the real thing.
type ioHooks struct {
	// beforeWrite, when set, runs before each append to path; its error
	// is the append's (nothing is written).
	beforeWrite func(path string) error
	// sync, when set, replaces f.Sync() for every fsync of a data file:
	// the writers' group commit and the readers' durability check.
	sync func(f *os.File) error
}

func (h *ioHooks) fsync(f *os.File) error {
	if h != nil && h.sync != nil {
		return h.sync(f)
	}
	return f.Sync()
}

func (h *ioHooks) checkWrite(path string) error {
	if h != nil && h.beforeWrite != nil {
		return h.beforeWrite(path)
	}
	return nil
}
