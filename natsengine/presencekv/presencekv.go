package presencekv

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcprt/mcprt/natsengine/lease"
	"github.com/nats-io/nats.go/jetstream"
)

// Bucket is the key-value bucket of presence records.
const Bucket = "AACP_PRESENCE"

// Options configure Open.
type Options struct {
	// Replicas of the bucket (1 on a single server, 3 in a cluster).
	Replicas int
	// Bucket overrides the bucket name (tests); empty means Bucket.
	Bucket string
}

// Store is the presence bucket. It implements the messaging service's
// PresenceStore.
type Store struct {
	kv jetstream.KeyValue
}

// Open creates or binds the presence bucket.
func Open(ctx context.Context, js jetstream.JetStream, opts Options) (*Store, error) {
	name := opts.Bucket
	if name == "" {
		name = Bucket
	}
	kv, err := lease.EnsureKeyValue(ctx, js, jetstream.KeyValueConfig{
		Bucket: name, History: 1, Storage: jetstream.FileStorage, Replicas: max(opts.Replicas, 1),
		Description: "mcprt: the last sign of life of each agent",
	})
	if err != nil {
		return nil, fmt.Errorf("presence bucket %s (%d replicas): %w", name, max(opts.Replicas, 1), err)
	}
	return &Store{kv: kv}, nil
}

// Put replaces agentID's record.
func (s *Store) Put(ctx context.Context, agentID string, record []byte) error {
	if _, err := s.kv.Put(ctx, agentID, record); err != nil {
		return fmt.Errorf("record the presence of %q in %s: %w", agentID, s.kv.Bucket(), err)
	}
	return nil
}

// Get returns agentID's record, or nil, nil when it has none.
func (s *Store) Get(ctx context.Context, agentID string) ([]byte, error) {
	e, err := s.kv.Get(ctx, agentID)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the presence of %q from %s: %w", agentID, s.kv.Bucket(), err)
	}
	return e.Value(), nil
}

// Delete removes agentID's record; one already gone is no error.
func (s *Store) Delete(ctx context.Context, agentID string) error {
	if err := s.kv.Delete(ctx, agentID); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("remove the presence of %q from %s: %w", agentID, s.kv.Bucket(), err)
	}
	return nil
}
