package sharedstate

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/store"
)

// DomainSession is the subject token of session events (sessions, their
// participants and the guard policies applied to them).
const DomainSession = "session"

// Sessions is the session.Store of a node that shares its sessions:
// Create is an event; Update, whose change is a function, is decided on
// this node's caught-up copy and published with Decide. Reads are the
// local store's.
type Sessions struct {
	r     *Replicator
	local *store.Sessions
}

var _ session.Store = (*Sessions)(nil)

type sessionPut struct {
	Session session.Session `json:"session"`
}

// decodeSession reads a session event; a null metadata is none.
func decodeSession(data json.RawMessage) (sessionPut, error) {
	var op sessionPut
	if err := decode(data, &op); err != nil {
		return op, err
	}
	if string(op.Session.Metadata) == "null" {
		op.Session.Metadata = nil
	}
	return op, nil
}

// NewSessions registers the session events on r and returns the shared
// session.Store over local.
func NewSessions(r *Replicator, local *store.Sessions) *Sessions {
	r.Handle("session.create", func(ctx context.Context, data json.RawMessage) (any, error) {
		op, err := decodeSession(data)
		if err != nil {
			return nil, err
		}
		return nil, local.Create(ctx, op.Session)
	})
	r.Handle("session.set", func(ctx context.Context, data json.RawMessage) (any, error) {
		op, err := decodeSession(data)
		if err != nil {
			return nil, err
		}
		return local.Update(ctx, op.Session.ID, func(s *session.Session) error {
			*s = op.Session.Clone()
			return nil
		})
	})
	return &Sessions{r: r, local: local}
}

// Create implements session.Store.
func (s *Sessions) Create(ctx context.Context, sess session.Session) error {
	return s.r.Do(ctx, DomainSession, "session.create", sessionPut{Session: sess}, nil)
}

// Update implements session.Store: fn runs on this node's copy, caught
// up with every session event; the session it leaves is published only
// if no session event came in between (else fn runs again).
func (s *Sessions) Update(ctx context.Context, id string, fn func(*session.Session) error) (session.Session, error) {
	var out session.Session
	err := s.r.Decide(ctx, DomainSession, "session.set", func(ctx context.Context) (any, error) {
		var op sessionPut
		_, err := s.local.Update(ctx, id, func(sess *session.Session) error {
			if err := fn(sess); err != nil {
				return err
			}
			op = sessionPut{Session: sess.Clone()}
			return errDecided
		})
		if !errors.Is(err, errDecided) {
			return nil, err
		}
		return op, nil
	}, &out)
	return out, err
}

// Get implements session.Store from the local store.
func (s *Sessions) Get(ctx context.Context, id string) (session.Session, error) {
	return s.local.Get(ctx, id)
}

// List implements session.Store from the local store.
func (s *Sessions) List(ctx context.Context, f session.Filter) ([]session.Summary, int, error) {
	return s.local.List(ctx, f)
}
