//go:build linux

package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// watcher reports changes under the channels directory through inotify:
// a watch on the directory itself (a channel appears) and one on each
// channel directory added (a segment is written, created or renamed).
type watcher struct {
	f       *os.File // never changes
	fd      int
	root    int // watch descriptor of the channels directory
	onEvent func(newDir bool)
	log     *slog.Logger
	done    chan struct{}
	mu      sync.Mutex
	closed  bool // guarded by mu
}

const (
	dirMask  = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE
	chanMask = unix.IN_MODIFY | unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE
)

func newWatcher(root string, onEvent func(newDir bool), log *slog.Logger) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify_init1: %w", err)
	}
	wd, err := unix.InotifyAddWatch(fd, root, dirMask)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	// A non-blocking descriptor in an *os.File goes through the runtime
	// poller: Read parks the goroutine, and Close wakes it.
	w := &watcher{f: os.NewFile(uintptr(fd), "inotify"), fd: fd, root: wd, onEvent: onEvent, log: log, done: make(chan struct{})}
	go w.loop()
	return w, nil
}

func (w *watcher) add(dir string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("watcher closed")
	}
	_, err := unix.InotifyAddWatch(w.fd, dir, chanMask)
	return err
}

func (w *watcher) loop() {
	defer close(w.done)
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				w.log.Warn("aacp journal: inotify read failed; polling only", "err", err)
			}
			return
		}
		newDir, any := false, false
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			// struct inotify_event: int32 wd, uint32 mask, uint32 cookie,
			// uint32 len, then len bytes of name.
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			nameLen := binary.NativeEndian.Uint32(buf[off+12:])
			name := bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:min(n, off+unix.SizeofInotifyEvent+int(nameLen))], "\x00")
			off += unix.SizeofInotifyEvent + int(nameLen)
			if int(wd) == w.root || mask&unix.IN_Q_OVERFLOW != 0 {
				newDir = true
			} else if bytes.HasSuffix(name, []byte(".lock")) {
				continue // a lock file's durable mark: no new data
			}
			any = true
		}
		if any {
			w.onEvent(newDir)
		}
	}
}

func (w *watcher) close() {
	w.mu.Lock()
	was := w.closed
	w.closed = true
	w.mu.Unlock()
	if !was {
		w.f.Close()
		<-w.done
	}
}
