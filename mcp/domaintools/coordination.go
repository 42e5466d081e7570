package domaintools

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/mcprt/mcprt/domain/guard"
	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/domain/toolspec"
	"github.com/mcprt/mcprt/mcp"
)

// URIReservationsActive is the resource of the active file reservations.
const URIReservationsActive = "reservations://active"

// Messaging is what the coordination tools need of the agent messaging
// service: the caller's identity, other agents' presence and durable
// notices. *aacptools.Service satisfies it.
type Messaging interface {
	reservation.Messaging
}

// coordination holds the reservation and work-queue services.
type coordination struct {
	reservations *reservation.Service
}

// newCoordination builds the coordination services over the store and
// puts the reservation gate on guard_check.
func (d *Domain) newCoordination(cfg Config, opts Options) {
	d.coord.reservations = reservation.NewService(reservation.Options{Store: d.db.Reservations(), Clock: opts.Clock, IDs: opts.IDs,
		MaxPerAgent: cfg.Coord.MaxReservationsPerAgent, DefaultTTL: time.Duration(cfg.Coord.DefaultTTLSeconds) * time.Second})
	d.guard.SetReservationGate(d.reservationGate("", true))
}

// ConnectMessaging gives the coordination tools the caller's identity,
// presence and notices. Without it they fail with
// AGENT_IDENTITY_UNAVAILABLE. Call it before Register.
func (d *Domain) ConnectMessaging(m Messaging) {
	if m == nil {
		return
	}
	d.coord.reservations.Connect(m)
}

// reservationGate is guard_check's reservation gate for agentID, or for
// the calling agent when useCaller is set (no identity: every exclusive
// reservation of a live agent blocks).
func (d *Domain) reservationGate(agentID string, useCaller bool) guard.ReservationGate {
	return func(ctx context.Context, paths []string) ([]guard.Violation, error) {
		me := agentID
		if useCaller {
			if id, err := d.coord.reservations.Caller(ctx); err == nil {
				me = id
			}
		}
		cs, err := d.coord.reservations.Blocking(ctx, me, paths)
		if err != nil {
			return nil, err
		}
		vs := make([]guard.Violation, len(cs))
		for i, c := range cs {
			vs[i] = guard.Violation{Type: guard.ViolationPathReserved, Path: c.Path,
				Message: fmt.Sprintf("%s is reserved exclusively by %s (%s, reservation %s) until %s: ask %s to release it, or wait until then",
					c.Path, c.Lease.AgentID, c.Lease.Pattern, c.Lease.ID, c.Lease.ExpiresAt.UTC().Format(time.RFC3339), c.Lease.AgentID)}
		}
		return vs, nil
	}
}

// CheckPaths runs guard_check's rules for a program such as `mcprt guard
// check`: the policies of policyID and sessionID (see guard.Service.Check)
// and the reservations of agents other than agentID ("" for none: then
// every live agent's exclusive reservation blocks). A store that does not
// exist yet holds no reservations and no sessions: it is not created.
func (d *Domain) CheckPaths(ctx context.Context, policyID, sessionID, agentID string, paths []string) (guard.Result, error) {
	gate := d.reservationGate(agentID, false)
	if _, err := os.Stat(d.db.Path()); err != nil && sessionID == "" {
		gate = nil
	}
	return d.guard.CheckGated(ctx, policyID, paths, sessionID, gate)
}

// coordSpecs lists the specs of the coordination tools.
func coordSpecs() []toolspec.Spec {
	return reservation.ToolSpecs()
}

// addCoordTools registers the reservation tools.
func (d *Domain) addCoordTools(r *registrar) {
	rt := reservation.NewTools(d.coord.reservations)
	add(r, "reserve_paths", rt.Reserve)
	add(r, "renew_reservations", rt.Renew)
	add(r, "release_reservations", rt.Release)
	add(r, "force_release_reservation", rt.Force)
	add(r, "list_reservations", rt.List)
	add(r, "check_reservations", rt.Check)
}

// registerCoordResources adds reservations://active.
func (d *Domain) registerCoordResources(srv *mcp.Server, admitted map[string]bool) error {
	rt := reservation.NewTools(d.coord.reservations)
	if admitted["list_reservations"] {
		if err := srv.AddResource(mcp.Resource{URI: URIReservationsActive, Name: "active-reservations", Title: "Active file reservations",
			Description: "Every active file reservation (at most 500, oldest first) and how many there are", MIMEType: mimeJSON},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := rt.List(ctx, reservation.ListInput{})
				return jsonResult(req.URI, out, err)
			}); err != nil {
			return err
		}
	}
	return nil
}
