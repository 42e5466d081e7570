//go:build !linux

package journal

import (
	"errors"
	"log/slog"
)

// watcher is unavailable here: inboxes poll.
type watcher struct{}

func newWatcher(string, func(bool), *slog.Logger) (*watcher, error) {
	return nil, errors.New("file notifications are implemented for Linux only")
}

func (*watcher) add(string) error { return nil }
func (*watcher) close()           {}
