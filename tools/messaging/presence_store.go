package messaging

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// PresenceStore keeps one presence record per agent, an opaque JSON
// document written by the process hosting the agent and read by every
// process that judges it. The data directory's presence files are one
// (the default); natsengine/presencekv keeps them in a JetStream
// key-value bucket, so that every machine on one NATS reads the same
// record. Implementations must be safe for concurrent use.
type PresenceStore interface {
	// Put replaces agentID's record.
	Put(ctx context.Context, agentID string, record []byte) error
	// Get returns agentID's record, or nil and no error when it has none.
	Get(ctx context.Context, agentID string) ([]byte, error)
	// Delete removes agentID's record; one that is gone already is fine.
	Delete(ctx context.Context, agentID string) error
}

// filePresence is the PresenceStore of one data directory: one small
// JSON file per agent, <dir>/<agentId>.json, replaced atomically.
type filePresence struct{ dir string }

func (f filePresence) Put(_ context.Context, agentID string, data []byte) error {
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return fmt.Errorf("record the presence of %q: %w", agentID, err)
	}
	tmp, err := os.CreateTemp(f.dir, "."+agentID+".*")
	if err != nil {
		return fmt.Errorf("record the presence of %q: %w", agentID, err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("record the presence of %q: %w", agentID, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(f.dir, agentID+".json")); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("record the presence of %q: %w", agentID, err)
	}
	return nil
}

func (f filePresence) Get(_ context.Context, agentID string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(f.dir, agentID+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the presence of %q: %w", agentID, err)
	}
	return data, nil
}

func (f filePresence) Delete(_ context.Context, agentID string) error {
	err := os.Remove(filepath.Join(f.dir, agentID+".json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the presence of %q: %w", agentID, err)
	}
	return nil
}
