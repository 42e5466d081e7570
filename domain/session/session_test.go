package session

import (
	"fmt"
	"testing"

	"github.com/mcprt/mcprt/core"
)

func TestLimits(t *testing.T) {
	ctx := t.Context()
	svc := NewService(NewMemStore(), nil, nil)
	s, err := svc.Create(ctx, CreateRequest{Initiator: "a", Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < MaxParticipants; i++ {
		if _, _, err := svc.Join(ctx, s.ID, fmt.Sprint("agent-", i), ""); err != nil {
			t.Fatal(i, err)
		}
	}
	_, _, err = svc.Join(ctx, s.ID, "one-too-many", "")
	if ce := core.AsError(err); ce.Code != core.CodeResourceExhausted {
		t.Fatalf("join past the limit: %v", err)
	}
	for i := range MaxPolicies {
		if _, err := svc.ApplyPolicy(ctx, s.ID, fmt.Sprint("p", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.ApplyPolicy(ctx, s.ID, "extra"); core.AsError(err).Code != core.CodeResourceExhausted {
		t.Fatalf("policy past the limit: %v", err)
	}
	got, _ := svc.Get(ctx, s.ID)
	if len(got.Participants) != MaxParticipants || len(got.Policies) != MaxPolicies {
		t.Fatalf("%d participants, %d policies", len(got.Participants), len(got.Policies))
	}
}

// The store hands out copies: changing a returned session changes nothing.
func TestMemStoreCopies(t *testing.T) {
	ctx := t.Context()
	svc := NewService(NewMemStore(), nil, nil)
	s, _ := svc.Create(ctx, CreateRequest{Initiator: "a", Task: "t"})
	s.Participants[0].Role = "hacked"
	got, _ := svc.Get(ctx, s.ID)
	if got.Participants[0].Role != RoleInitiator {
		t.Fatal("a returned session aliases the store")
	}
}
