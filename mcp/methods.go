package mcp

import (
	"context"

	"github.com/mcprt/mcprt/jsonrpc"
)

// MCP method and notification names.
const (
	MethodInitialize       = "initialize"
	MethodPing             = "ping"
	MethodShutdown         = "shutdown"
	MethodToolsList        = "tools/list"
	MethodToolsCall        = "tools/call"
	NotifyInitialized      = "notifications/initialized"
	NotifyCancelled        = "notifications/cancelled"
	NotifyToolsListChanged = "notifications/tools/list_changed"
)

// gate says in which lifecycle states a method is served.
type gate uint8

const (
	// gateRunning methods are served only in RUNNING; earlier they get
	// -32002 Not initialized.
	gateRunning gate = iota
	// gateAlways methods are served in every state but CLOSED (ping).
	gateAlways
	// gateHandshake is initialize: served in STARTING only; later it is
	// -32600 already initialized.
	gateHandshake
	// gateStateless methods exist only in the stateless revision: every
	// request of them is routed statelessly, whatever the session's state.
	gateStateless
)

// methodSpec is one entry of the method table.
type methodSpec struct {
	handle func(sess *Session, ctx context.Context, req *jsonrpc.Request) (any, error)
	gate   gate
	// inline runs the handler on the reading goroutine, in order: only
	// for cheap handlers that never block.
	inline bool
	// closeAfter closes the session once the answer is written.
	closeAfter bool
	// capability is the server capability the method implies ("" for
	// none); initialize advertises it.
	capability string
	// inputs marks the methods whose handlers may ask the client for
	// input (RequestInput): under the stateless revision their requests
	// carry inputResponses and requestState.
	inputs bool
}

// methodTable is every MCP request method the server serves. Adding a
// method is adding one entry. It is set once, at package initialization,
// and never changed.
var methodTable map[string]methodSpec

func init() {
	methodTable = map[string]methodSpec{
		MethodInitialize: {handle: (*Session).initialize, gate: gateHandshake, inline: true},
		MethodPing:       {handle: (*Session).ping, gate: gateAlways, inline: true},
		MethodShutdown:   {handle: (*Session).handleShutdown, inline: true, closeAfter: true},
		MethodToolsList:  {handle: (*Session).listTools, inline: true, capability: "tools"},
		MethodToolsCall:  {handle: (*Session).handleCall, capability: "tools", inputs: true},
		// The stateless revision's own methods (see modern.go).
		MethodServerDiscover:      {handle: (*Session).discover, gate: gateStateless, inline: true},
		MethodSubscriptionsListen: {handle: (*Session).listen, gate: gateStateless},
		// The tasks extension (tasks_methods.go).
		MethodTasksGet:    {handle: (*Session).tasksGet, gate: gateStateless, inline: true},
		MethodTasksUpdate: {handle: (*Session).tasksUpdate, gate: gateStateless, inline: true},
		MethodTasksCancel: {handle: (*Session).tasksCancel, gate: gateStateless, inline: true},
		// Client logging: the level of notifications/message.
		MethodLoggingSetLevel: {handle: (*Session).setLogLevel, inline: true, capability: capLogging},
		// Resources, prompts and completion answer -32601 until the server
		// serves them (gated; see Server.serves).
		MethodResourcesList:          {handle: gated(capResources, (*Session).listResources), inline: true, capability: capResources},
		MethodResourcesTemplatesList: {handle: gated(capResources, (*Session).listResourceTemplates), inline: true, capability: capResources},
		MethodResourcesRead:          {handle: gated(capResources, (*Session).readResource), capability: capResources, inputs: true},
		MethodResourcesSubscribe:     {handle: gated(capResources, (*Session).subscribeResource), inline: true, capability: capResources},
		MethodResourcesUnsubscribe:   {handle: gated(capResources, (*Session).unsubscribeResource), inline: true, capability: capResources},
		MethodPromptsList:            {handle: gated(capPrompts, (*Session).listPrompts), inline: true, capability: capPrompts},
		MethodPromptsGet:             {handle: gated(capPrompts, (*Session).getPrompt), capability: capPrompts, inputs: true},
		MethodCompletionComplete:     {handle: gated(capCompletions, (*Session).complete), capability: capCompletions},
	}
}

// bindMethods binds the method table to one session, once, so that
// routing a request allocates nothing.
func bindMethods(sess *Session) map[string]jsonrpc.Route {
	routes := make(map[string]jsonrpc.Route, len(methodTable))
	for name, spec := range methodTable {
		h := spec.handle
		routes[name] = jsonrpc.Route{
			Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				return h(sess, ctx, req)
			}),
			Inline:     spec.inline,
			CloseAfter: spec.closeAfter,
		}
	}
	return routes
}

// capabilities advertise exactly what is implemented.
type capabilities struct {
	Tools       *listChanged          `json:"tools,omitempty"`
	Resources   *resourcesCapability  `json:"resources,omitempty"`
	Prompts     *listChanged          `json:"prompts,omitempty"`
	Completions *completionCapability `json:"completions,omitempty"`
	Logging     *loggingCapability    `json:"logging,omitempty"`
	// Extensions are the MCP extensions served (stateless revision only).
	Extensions map[string]any `json:"extensions,omitempty"`
}

// withExtensions adds the extensions the server serves.
func (c capabilities) withExtensions(s *Server) capabilities {
	if s.tasks != nil {
		c.Extensions = map[string]any{ExtensionTasks: map[string]any{}}
	}
	return c
}

// capLogging is the logging capability (logging/setLevel and
// notifications/message); loggingCapability is its empty object.
const capLogging = "logging"

type loggingCapability struct{}

// resourcesCapability is the resources capability: subscriptions and
// list_changed are always offered.
type resourcesCapability struct {
	Subscribe   bool `json:"subscribe"`
	ListChanged bool `json:"listChanged"`
}

// completionCapability is the empty completions capability object.
type completionCapability struct{}

// forVersion drops the capabilities revision version does not have
// (completions before 2025-03-26, where completion/complete is served
// without one).
func (c capabilities) forVersion(version string) capabilities {
	if version < Version20250326 {
		c.Completions = nil
	}
	return c
}

type listChanged struct {
	ListChanged bool `json:"listChanged"`
}

// capabilities computes what initialize advertises from the method table:
// a capability is advertised when a method that implies it is served
// (resources, prompts and completions only once the server serves them).
func (s *Server) capabilities() capabilities {
	var c capabilities
	for _, spec := range methodTable {
		switch spec.capability {
		case "tools":
			c.Tools = &listChanged{ListChanged: true}
		case capResources:
			if s.serves(capResources) {
				c.Resources = &resourcesCapability{Subscribe: true, ListChanged: true}
			}
		case capPrompts:
			if s.serves(capPrompts) {
				c.Prompts = &listChanged{ListChanged: true}
			}
		case capCompletions:
			if s.serves(capCompletions) {
				c.Completions = &completionCapability{}
			}
		case capLogging:
			c.Logging = &loggingCapability{}
		}
	}
	return c
}
