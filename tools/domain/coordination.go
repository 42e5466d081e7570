package domain

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/guard"
	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/domain/task"
	"github.com/mcprt/mcprt/domain/toolspec"
	"github.com/mcprt/mcprt/mcp"
)

// The resources of the coordination tools.
const (
	URIReservationsActive = "reservations://active"
	URITasksOpen          = "tasks://open"
	URITask               = "tasks://id/{id}"
)

// Messaging is what the coordination tools need of the agent messaging
// service: the caller's identity, other agents' presence and durable
// notices. *messaging.Service satisfies it.
type Messaging interface {
	reservation.Messaging
	task.Messaging
}

// coordination holds the reservation and work-queue services.
type coordination struct {
	reservations *reservation.Service
	tasks        *task.Service
	msg          Messaging // nil until ConnectMessaging
}

// newCoordination builds the coordination services over the store and
// puts the reservation gate on guard_check.
func (d *Domain) newCoordination(cfg config.Domain, opts Options) {
	d.coord.reservations = reservation.NewService(reservation.Options{Store: d.stores.reservations, Clock: opts.Clock, IDs: opts.IDs,
		MaxPerAgent: cfg.Coord.MaxReservationsPerAgent, DefaultTTL: cfg.Coord.DefaultTTL})
	d.coord.tasks = task.NewService(d.stores.tasks, opts.Clock, opts.IDs)
	d.guard.SetReservationGate(d.reservationGate("", true))
}

// ConnectMessaging gives the coordination tools the caller's identity,
// presence and notices. Without it they fail with
// AGENT_IDENTITY_UNAVAILABLE. Call it before Register.
func (d *Domain) ConnectMessaging(m Messaging) {
	if m == nil {
		return
	}
	d.coord.msg = m
	d.coord.reservations.Connect(m)
	d.coord.tasks.Connect(m)
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
	return append(append(reservation.ToolSpecs(), task.ToolSpecs()...), macroSpecs()...)
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
	tt := task.NewTools(d.coord.tasks)
	add(r, "task_post", tt.Post)
	add(r, "task_claim", tt.Claim)
	add(r, "task_update", tt.Update)
	add(r, "task_handoff", tt.Handoff)
	add(r, "task_release", tt.Release)
	add(r, "task_steal", tt.Steal)
	add(r, "task_list", tt.List)
	add(r, "task_get", tt.Get)
	add(r, "coord_start", d.coordStart)
	add(r, "coord_finish", d.coordFinish)
}

// registerCoordResources adds reservations://active, tasks://open and
// tasks://id/{id}, each when the tool it mirrors was admitted.
func (d *Domain) registerCoordResources(srv *mcp.Server, admitted map[string]bool) error {
	rt, tt := reservation.NewTools(d.coord.reservations), task.NewTools(d.coord.tasks)
	defs := []resourceDef{
		{tool: "list_reservations", res: &mcp.Resource{URI: URIReservationsActive, Name: "active-reservations", Title: "Active file reservations",
			Description: "Every active file reservation (at most 500, oldest first) and how many there are"},
			handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := rt.List(ctx, reservation.ListInput{})
				return jsonResult(req.URI, out, err)
			}},
		{tool: "task_list", res: &mcp.Resource{URI: URITasksOpen, Name: "open-tasks", Title: "Open tasks",
			Description: "The open tasks of the work queue (at most 500, by priority then age) and how many there are"},
			handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := tt.List(ctx, task.ListArgs{Status: task.StatusOpen, Limit: task.MaxListLimit})
				return jsonResult(req.URI, out, err)
			}},
		{tool: "task_get", tmpl: &mcp.ResourceTemplate{URITemplate: URITask, Name: "task", Title: "Task",
			Description: "One task of the work queue with its history"},
			handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := tt.Get(ctx, task.GetArgs{TaskID: req.Variables["id"]})
				if ce := core.AsError(err); err != nil && ce.Code == task.CodeNotFound {
					err = core.NewError(core.CodeNotFound, ce.Message)
				}
				return jsonResult(req.URI, out, err)
			}},
	}
	for _, def := range defs {
		if !admitted[def.tool] {
			continue
		}
		var err error
		if def.res != nil {
			def.res.MIMEType = mimeJSON
			err = srv.AddResource(*def.res, def.handler)
		} else {
			def.tmpl.MIMEType = mimeJSON
			err = srv.AddResourceTemplate(*def.tmpl, def.handler)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
