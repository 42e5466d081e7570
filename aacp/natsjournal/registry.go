package natsjournal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/natsengine/lease"
)

// Claim implements journal.Store with a lease on the key agentID in the
// claims bucket, renewed every third of the claim TTL while held. Two
// stores, in any processes on any machines, never hold one agent; a
// holder that dies releases it when the TTL passes.
func (s *Store) Claim(agentID string) (func() error, error) {
	if err := envelope.CheckAgentID(agentID); err != nil {
		return nil, err
	}
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := s.claims.Acquire(ctx, agentID, s.owner)
	if errors.Is(err, lease.ErrHeld) {
		return nil, fmt.Errorf("claim agent %q: %w (%w)", agentID, journal.ErrClaimed, err)
	}
	if err != nil {
		return nil, fmt.Errorf("claim agent %q: %w", agentID, err)
	}
	stop := l.KeepAlive(func(err error) {
		s.log.Error("aacp nats journal: an agent claim was lost (not renewed in time: disconnected too long?)", "agent", agentID, "error", err.Error())
	})
	var once sync.Once
	var rerr error
	release := func() {
		once.Do(func() {
			stop()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := l.Release(ctx); err != nil && !errors.Is(err, lease.ErrLost) {
				rerr = fmt.Errorf("release agent %q: %w", agentID, err)
			}
		})
	}
	s.mu.Lock()
	if err := s.check(); err != nil {
		s.mu.Unlock()
		release()
		return nil, err
	}
	s.held[agentID] = release
	s.mu.Unlock()
	return func() error {
		s.mu.Lock()
		delete(s.held, agentID)
		s.mu.Unlock()
		release()
		return rerr
	}, nil
}

// PutAgent implements journal.Store: the registry is a key-value bucket
// keyed by agent id.
func (s *Store) PutAgent(ctx context.Context, rec journal.AgentRecord) error {
	if err := envelope.CheckAgentID(rec.AgentID); err != nil {
		return err
	}
	if err := s.checkOpen(); err != nil {
		return err
	}
	if rec.Removed {
		err := retry(ctx, attemptTimeout, func(actx context.Context) error { return s.agents.Delete(actx, rec.AgentID) })
		if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return fmt.Errorf("nats journal: remove agent %s: %w", rec.AgentID, err)
		}
		return nil
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("nats journal: encode agent %s: %w", rec.AgentID, err)
	}
	if err := retry(ctx, attemptTimeout, func(actx context.Context) error {
		_, err := s.agents.Put(actx, rec.AgentID, data)
		return err
	}); err != nil {
		return fmt.Errorf("nats journal: register agent %s: %w", rec.AgentID, err)
	}
	return nil
}

// Agents implements journal.Store; Online is whether a claim is held.
func (s *Store) Agents(ctx context.Context) ([]journal.AgentRecord, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	var keys []string
	err := retry(ctx, attemptTimeout, func(actx context.Context) error {
		keys = keys[:0]
		lister, err := s.agents.ListKeys(actx)
		if err != nil {
			return err
		}
		for k := range lister.Keys() {
			keys = append(keys, k)
		}
		return nil
	})
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, fmt.Errorf("nats journal: list agents: %w", err)
	}
	var held map[string]string
	err = retry(ctx, attemptTimeout, func(actx context.Context) error {
		var err error
		held, err = s.claims.Held(actx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("nats journal: list claims: %w", err)
	}
	out := make([]journal.AgentRecord, 0, len(keys))
	for _, k := range keys {
		var e jetstream.KeyValueEntry
		err := retry(ctx, attemptTimeout, func(actx context.Context) error {
			var err error
			e, err = s.agents.Get(actx, k)
			return err
		})
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("nats journal: read agent %s: %w", k, err)
		}
		var rec journal.AgentRecord
		if err := json.Unmarshal(e.Value(), &rec); err != nil {
			s.log.Warn("aacp nats journal: skipped an undecodable agent record", "agent", k)
			continue
		}
		_, rec.Online = held[k]
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b journal.AgentRecord) int { return strings.Compare(a.AgentID, b.AgentID) })
	return out, nil
}

// deadSubject is a dead letter's subject; message ids may hold any
// character, so they are hex-escaped where not subject-safe.
func deadSubject(messageID string) string {
	var b strings.Builder
	b.WriteString(deadPrefix)
	for i := 0; i < len(messageID); i++ {
		c := messageID[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "~%02x", c)
		}
	}
	return b.String()
}

// AddDeadLetter implements journal.Store: one message per change on the
// messageId's subject of the dead-letter stream.
func (s *Store) AddDeadLetter(ctx context.Context, d journal.DeadLetter) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if d.MessageID == "" {
		return errors.New("nats journal: a dead letter needs a messageId")
	}
	data, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("nats journal: encode dead letter %s: %w", d.MessageID, err)
	}
	// A message id: a publish sent again after an unanswered attempt is
	// stored once.
	msg := &nats.Msg{Subject: deadSubject(d.MessageID), Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, nuid.Next())
	if _, err := s.publish(ctx, msg); err != nil {
		return fmt.Errorf("nats journal: add dead letter %s: %w", d.MessageID, err)
	}
	return nil
}

// DeadLetters implements journal.Store.
func (s *Store) DeadLetters(ctx context.Context) ([]journal.DeadLetter, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	var all []journal.DeadLetter
	err := s.readSubject(ctx, s.dead, deadPrefix+">", func(m jetstream.Msg) {
		var d journal.DeadLetter
		if json.Unmarshal(m.Data(), &d) == nil && d.MessageID != "" {
			all = append(all, d)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("nats journal: read dead letters: %w", err)
	}
	return journal.FoldDeadLetters(all), nil
}

// PurgeExpired implements journal.Store: it purges the subjects of dead
// letters whose latest version expired.
func (s *Store) PurgeExpired(ctx context.Context, now time.Time) (int, error) {
	dl, err := s.DeadLetters(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range dl {
		if d.ExpiresAt.IsZero() || d.ExpiresAt.After(now) {
			continue
		}
		if err := s.dead.Purge(ctx, jetstream.WithPurgeSubject(deadSubject(d.MessageID))); err != nil {
			return n, fmt.Errorf("nats journal: purge dead letter %s: %w", d.MessageID, err)
		}
		n++
	}
	return n, nil
}
