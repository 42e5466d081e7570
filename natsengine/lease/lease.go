package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// ErrHeld is wrapped by Acquire's error when another owner holds the key.
var ErrHeld = errors.New("the lease is held by another owner")

// ErrLost is wrapped by Renew's and Release's errors when the lease is no
// longer this holder's: it expired (and perhaps was taken by another
// owner) or was released.
var ErrLost = errors.New("the lease was lost")

// Options configures Open.
type Options struct {
	// Bucket is the key-value bucket's name (created when missing).
	Bucket string
	// TTL is how long a lease lasts without renewal. It is the bucket's
	// max age, enforced by the NATS server's clock.
	TTL time.Duration
	// Replicas is the bucket's replica count (1, or 3 in a cluster).
	Replicas int
	// Memory keeps the bucket in memory instead of files (a lease held
	// by nobody after a full restart is harmless for short-lived leases).
	Memory bool
}

// Leases is a set of leases kept in one key-value bucket. It is safe for
// concurrent use.
type Leases struct {
	kv  jetstream.KeyValue
	ttl time.Duration
}

// Open creates or binds the bucket. A bucket that exists with another
// TTL is updated to opts.TTL; one that cannot be is an error.
func Open(ctx context.Context, js jetstream.JetStream, opts Options) (*Leases, error) {
	if opts.Bucket == "" || opts.TTL <= 0 {
		return nil, errors.New("lease: a bucket name and a positive TTL are required")
	}
	st := jetstream.FileStorage
	if opts.Memory {
		st = jetstream.MemoryStorage
	}
	kv, err := EnsureKeyValue(ctx, js, jetstream.KeyValueConfig{
		Bucket: opts.Bucket, TTL: opts.TTL, History: 1, Storage: st, Replicas: max(opts.Replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("lease bucket %s (TTL %v, %d replicas): %w", opts.Bucket, opts.TTL, max(opts.Replicas, 1), err)
	}
	return &Leases{kv: kv, ttl: opts.TTL}, nil
}

// EnsureKeyValue creates or updates a key-value bucket, each attempt
// bounded to 3 s and retried until ctx ends: several nodes creating one
// replicated bucket at once can leave a request unanswered, and a cluster
// still forming answers "no suitable peers" for a while.
func EnsureKeyValue(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	// An attempt's bound doubles from 3 s to 15 s (a loaded cluster's
	// first creations can take longer than 3 s).
	each := 3 * time.Second
	for {
		actx, cancel := context.WithTimeout(ctx, each)
		kv, err := js.CreateOrUpdateKeyValue(actx, cfg)
		cancel()
		each = min(2*each, 15*time.Second)
		if err == nil || ctx.Err() != nil || !retryable(err) {
			return kv, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func retryable(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == 10005 || apiErr.ErrorCode == 10008 || apiErr.Code == 503
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout)
}

// TTL is the lifetime of a lease without renewal.
func (l *Leases) TTL() time.Duration { return l.ttl }

// record is a lease's stored value.
type record struct {
	Owner string    `json:"owner"`
	At    time.Time `json:"at"`
	// Token is unique per Acquire: a write sent again after an unanswered
	// attempt recognises the value it wrote itself.
	Token string `json:"token,omitempty"`
}

// attemptTimeout bounds one request to the bucket: a request caught by a
// leader change or a reconnection may never be answered, and is sent
// again (until the caller's deadline).
const attemptTimeout = 3 * time.Second

// attempts calls op in attempts of attemptTimeout until it succeeds,
// fails for good, or ctx ends.
func attempts(ctx context.Context, op func(context.Context) error) error {
	pause := 50 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		err := op(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// mine returns the revision of key when its value carries token: a write
// of this holder that was stored although its answer was lost.
func (l *Leases) mine(ctx context.Context, key, token string) (uint64, bool) {
	e, err := l.kv.Get(ctx, key)
	if err != nil {
		return 0, false
	}
	var r record
	if json.Unmarshal(e.Value(), &r) != nil || r.Token != token {
		return 0, false
	}
	return e.Revision(), true
}

// Lease is one held lease. Its methods are safe for concurrent use.
type Lease struct {
	// Key and Owner identify the lease.
	Key, Owner string

	token string // in every value this holder writes
	l     *Leases
	mu    sync.Mutex
	rev   uint64 // guarded by mu: the revision this holder last wrote; 0 once released
}

// Acquire takes key for owner, exclusively, until it is released or not
// renewed within the TTL. Of any number of concurrent Acquire calls for a
// free key, from any process on any machine, exactly one succeeds (the
// bucket's compare-and-swap decides); the others fail with an error
// wrapping ErrHeld that names the holder.
func (l *Leases) Acquire(ctx context.Context, key, owner string) (*Lease, error) {
	token := nuid.Next()
	val, err := json.Marshal(record{Owner: owner, At: time.Now().UTC(), Token: token})
	if err != nil {
		return nil, fmt.Errorf("lease %s: %w", key, err)
	}
	var rev uint64
	first := true
	err = attempts(ctx, func(actx context.Context) error {
		r, err := l.kv.Create(actx, key, val)
		if err == nil {
			rev = r
			return nil
		}
		if errors.Is(err, jetstream.ErrKeyExists) && !first {
			// A previous attempt may have been stored unanswered.
			if r, ok := l.mine(actx, key, token); ok {
				rev = r
				return nil
			}
		}
		first = false
		return err
	})
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			holder, _, _ := l.Holder(ctx, key)
			return nil, fmt.Errorf("lease %s: held by %q (it expires %v after its last renewal): %w", key, holder, l.ttl, ErrHeld)
		}
		return nil, fmt.Errorf("lease %s: acquire: %w", key, err)
	}
	return &Lease{Key: key, Owner: owner, token: token, l: l, rev: rev}, nil
}

// Holder returns the current holder of key, if any.
func (l *Leases) Holder(ctx context.Context, key string) (owner string, held bool, err error) {
	e, err := l.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("lease %s: read holder: %w", key, err)
	}
	var r record
	if json.Unmarshal(e.Value(), &r) != nil {
		return "", true, nil
	}
	return r.Owner, true, nil
}

// Held returns the keys currently held, with their owners.
func (l *Leases) Held(ctx context.Context) (map[string]string, error) {
	lister, err := l.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("lease: list: %w", err)
	}
	out := map[string]string{}
	for k := range lister.Keys() {
		out[k] = ""
	}
	for k := range out {
		if o, ok, err := l.Holder(ctx, k); err == nil && ok {
			out[k] = o
		} else {
			delete(out, k)
		}
	}
	return out, nil
}

// Renew extends the lease by a TTL from now. It fails with an error
// wrapping ErrLost when the lease expired, was released or was taken.
func (x *Lease) Renew(ctx context.Context) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.rev == 0 {
		return fmt.Errorf("lease %s: renew after release: %w", x.Key, ErrLost)
	}
	val, _ := json.Marshal(record{Owner: x.Owner, At: time.Now().UTC(), Token: x.token})
	var rev uint64
	first := true
	err := attempts(ctx, func(actx context.Context) error {
		r, err := x.l.kv.Update(actx, x.Key, val, x.rev)
		if err == nil {
			rev = r
			return nil
		}
		if !first && (errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists)) {
			// A previous attempt may have been stored unanswered: the
			// value is this holder's renewal, not another owner's.
			if r, ok := x.l.mine(actx, x.Key, x.token); ok && r != x.rev {
				rev = r
				return nil
			}
		}
		first = false
		return err
	})
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
			x.rev = 0
			return fmt.Errorf("lease %s: renew: it expired or was taken: %w", x.Key, ErrLost)
		}
		return fmt.Errorf("lease %s: renew: %w", x.Key, err)
	}
	x.rev = rev
	return nil
}

// Release gives the lease up. Releasing a lease that expired (or was
// already released) fails with an error wrapping ErrLost and changes
// nothing: a newer holder keeps its lease.
func (x *Lease) Release(ctx context.Context) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.rev == 0 {
		return fmt.Errorf("lease %s: already released: %w", x.Key, ErrLost)
	}
	rev := x.rev
	x.rev = 0
	if err := x.l.kv.Delete(ctx, x.Key, jetstream.LastRevision(rev)); err != nil {
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyNotFound) {
			return fmt.Errorf("lease %s: release: it had expired: %w", x.Key, ErrLost)
		}
		return fmt.Errorf("lease %s: release: %w", x.Key, err)
	}
	return nil
}

// KeepAlive renews the lease every third of the TTL until stop is called
// or the lease is lost; onLost (may be nil) is called once if it is.
// A renewal that fails for a transient reason (a disconnection) is
// retried at the next tick; the lease is lost only if the TTL passes.
func (x *Lease) KeepAlive(onLost func(error)) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(max(x.l.ttl/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), x.l.ttl/3+time.Second)
			err := x.Renew(ctx)
			cancel()
			if errors.Is(err, ErrLost) {
				if onLost != nil {
					onLost(err)
				}
				return
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}
