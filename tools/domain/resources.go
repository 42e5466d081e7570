package domain

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/guard"
	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/domain/trace"
	"github.com/mcprt/mcprt/mcp"
)

// The resources the domains serve, read-only and as application/json. A
// template's variables sit in the path, not the authority: strict URI
// parsers refuse braces in a host, so sessions://{id} would not validate
// as a uri-template.
const (
	URIMemoryEntries   = "memory://entries"
	URIMemoryEntry     = "memory://entries/{namespace}/{key}"
	URISessionsActive  = "sessions://active"
	URISession         = "sessions://id/{id}"
	URITracesRecent    = "traces://recent"
	URITrace           = "traces://id/{traceId}"
	URIPolicies        = "policies://"
	URIPolicy          = "policies://id/{id}"
	mimeJSON           = "application/json"
	maxCompletionItems = 100
)

// resourceDef is one resource or template and the tool whose admission it
// follows.
type resourceDef struct {
	tool     string
	res      *mcp.Resource
	tmpl     *mcp.ResourceTemplate
	handler  mcp.ResourceHandler
	tracing  bool // only when tracing is on
	complete mcp.CompletionHandler
}

// registerResources adds the domain resources whose tools the server
// admitted. Nothing is read here: every handler opens the store on use.
func (d *Domain) registerResources(srv *mcp.Server, admitted map[string]bool) error {
	mt, st, gt, tt := memory.NewTools(d.memory), session.NewTools(d.sessions), guard.NewTools(d.guard), trace.NewTools(d.traces)
	defs := []resourceDef{
		{tool: "memory_list", res: &mcp.Resource{URI: URIMemoryEntries, Name: "memory-entries", Title: "Memory entries",
			Description: "The 100 most recently stored memory entries, newest first, without values, and how many there are"},
			handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := mt.Recent(ctx, maxCompletionItems)
				return jsonResult(req.URI, out, err)
			}},
		{tool: "memory_retrieve", tmpl: &mcp.ResourceTemplate{URITemplate: URIMemoryEntry, Name: "memory-entry",
			Title: "Memory entry", Description: "One memory entry with its value (namespace and key percent-encoded)"},
			handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := mt.Retrieve(ctx, memory.KeyInput{Namespace: req.Variables["namespace"], Key: req.Variables["key"]})
				if err == nil && !out.Found {
					err = core.NewError(core.CodeNotFound, "no memory entry at "+out.Namespace+":"+out.Key)
				}
				return jsonResult(req.URI, out, err)
			}, complete: d.completeMemory},
		{tool: "session_list", res: &mcp.Resource{URI: URISessionsActive, Name: "active-sessions", Title: "Active sessions",
			Description: "The newest 100 active collaboration sessions and how many there are"},
			handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := st.List(ctx, session.ListInput{Status: session.StatusActive, Limit: session.MaxListLimit})
				return jsonResult(req.URI, out, err)
			}},
		{tool: "session_status", tmpl: &mcp.ResourceTemplate{URITemplate: URISession, Name: "session", Title: "Session",
			Description: "One collaboration session: state, participants and applied policies"},
			handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := st.Status(ctx, session.IDInput{SessionID: req.Variables["id"]})
				return jsonResult(req.URI, out, err)
			}, complete: d.completeSessions},
		{tool: "trace_list", tracing: true, res: &mcp.Resource{URI: URITracesRecent, Name: "recent-traces", Title: "Recent traces",
			Description: "The 100 most recent traces of tool calls and how many there are"},
			handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := tt.List(ctx, trace.ListInput{Limit: maxCompletionItems})
				return jsonResult(req.URI, out, err)
			}},
		{tool: "trace_get", tracing: true, tmpl: &mcp.ResourceTemplate{URITemplate: URITrace, Name: "trace", Title: "Trace",
			Description: "One trace: its steps in start order"},
			handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := tt.Get(ctx, trace.IDInput{TraceID: req.Variables["traceId"]})
				return jsonResult(req.URI, out, err)
			}, complete: d.completeTraces},
		{tool: "guard_list", res: &mcp.Resource{URI: URIPolicies, Name: "guard-policies", Title: "Guard policies",
			Description: "The guard policies catalogue, sorted by id"},
			handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := gt.List(ctx, guard.ListInput{Limit: guard.MaxListLimit})
				return jsonResult(req.URI, out, err)
			}},
		{tool: "guard_list", tmpl: &mcp.ResourceTemplate{URITemplate: URIPolicy, Name: "guard-policy", Title: "Guard policy",
			Description: "One guard policy: its path rules and gates"},
			handler: func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				p, err := d.guard.Policy(req.Variables["id"])
				return jsonResult(req.URI, policyOutput(p), err)
			}, complete: d.completePolicies},
	}
	for _, def := range defs {
		if !admitted[def.tool] || (def.tracing && d.recorder == nil) {
			continue
		}
		var err error
		if def.res != nil {
			def.res.MIMEType = mimeJSON
			err = srv.AddResource(*def.res, def.handler)
		} else {
			def.tmpl.MIMEType, def.tmpl.Complete = mimeJSON, def.complete
			err = srv.AddResourceTemplate(*def.tmpl, def.handler)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// jsonResult is v as the application/json contents of uri, or err as a
// read error: an unknown or invalid id names nothing, so it is NOT_FOUND.
func jsonResult(uri string, v any, err error) (*mcp.ReadResourceResult, error) {
	if err != nil {
		return nil, notFound(err)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(uri, mimeJSON, string(data))}}, nil
}

// notFound turns the domains' "no such thing" and "not a valid id" errors
// into NOT_FOUND, keeping their message and details.
func notFound(err error) error {
	var ce *core.Error
	if !errors.As(err, &ce) {
		return err
	}
	switch ce.Code {
	case session.CodeNotFound, trace.CodeTraceNotFound, guard.CodePolicyNotFound, core.CodeInvalidArgument:
		nf := core.NewError(core.CodeNotFound, ce.Message)
		for k, v := range ce.Details {
			nf = nf.WithDetail(k, v)
		}
		return nf
	}
	return err
}

// policyOutput is p as guard_list shows it.
func policyOutput(p guard.Policy) guard.PolicyOutput {
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return guard.PolicyOutput{PolicyID: p.ID, Description: p.Description, AllowedPaths: nonNil(p.AllowedPaths),
		ForbiddenPaths: nonNil(p.ForbiddenPaths), Gates: nonNil(p.Gates), ChangeRadiusLimit: p.ChangeRadiusLimit, Source: p.Source}
}

// completeMemory proposes namespaces, and keys of the namespace already
// chosen (of every namespace when none is).
func (d *Domain) completeMemory(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var names []string
	switch req.Argument {
	case "namespace":
		st, err := d.memory.Stats(ctx, "")
		if err != nil {
			return nil, err
		}
		for _, ns := range st.Namespaces {
			names = append(names, ns.Namespace)
		}
	case "key":
		page, err := d.memory.List(ctx, memory.ListQuery{Namespace: req.Context["namespace"], Limit: memory.MaxListLimit})
		if err != nil {
			if core.AsError(err).Code == core.CodeInvalidArgument {
				return completions(nil, ""), nil // a namespace that cannot exist has no keys
			}
			return nil, err
		}
		for _, e := range page.Entries {
			names = append(names, e.Key)
		}
		slices.Sort(names)
		names = slices.Compact(names)
	}
	return completions(names, req.Value), nil
}

// completeSessions proposes the ids of the newest sessions.
func (d *Domain) completeSessions(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	page, _, err := d.sessions.List(ctx, session.Filter{Limit: session.MaxListLimit})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(page))
	for i, s := range page {
		ids[i] = s.ID
	}
	return completions(ids, req.Value), nil
}

// completeTraces proposes the ids of the most recent traces.
func (d *Domain) completeTraces(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	sums, _, err := d.traces.List(ctx, trace.ListQuery{Limit: trace.MaxListLimit})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(sums))
	for i, s := range sums {
		ids[i] = s.TraceID
	}
	return completions(ids, req.Value), nil
}

// completePolicies proposes policy ids.
func (d *Domain) completePolicies(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	ps, _, err := d.guard.List(ctx, guard.MaxListLimit)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return completions(ids, req.Value), nil
}

// completions are the candidates that begin with prefix (ignoring case),
// in order, at most maxCompletionItems of them.
func completions(candidates []string, prefix string) *mcp.CompleteResult {
	prefix = strings.ToLower(prefix)
	out := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), prefix) {
			out = append(out, c)
		}
	}
	res := &mcp.CompleteResult{Values: out, Total: len(out)}
	if len(out) > maxCompletionItems {
		res.Values, res.HasMore = out[:maxCompletionItems], true
	}
	return res
}
