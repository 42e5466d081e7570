package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// InboxTemplate is the URI template of the inbox resources: one per agent.
const InboxTemplate = "aacp://inbox/{agentId}"

// InboxURI is the URI of agentID's inbox resource.
func InboxURI(agentID string) string { return "aacp://inbox/" + agentID }

// addInboxResource registers the inbox template on srv and remembers srv,
// so that new messages for a hosted agent are announced to its
// subscribers.
func (s *Service) addInboxResource(srv *mcp.Server) error {
	err := srv.AddResourceTemplate(mcp.ResourceTemplate{
		URITemplate: InboxTemplate, Name: "aacp_inbox", Title: "Agent inbox",
		Description: "The unfinished inbox of an agent this process hosts, as JSON: {agentId, messages: [envelope + " +
			"redelivered? + state (queued: waiting for aacp_receive; handedOut: received, not answered yet)], queued, " +
			"handedOut, truncated?}. Queued messages come first, in the order aacp_receive would return them; at most " +
			"100 are listed. Reading hands nothing out and answers nothing. Subscribe to hear " +
			"(notifications/resources/updated) when a new message arrives. Reading the server's own agent's inbox " +
			"registers that agent, as any aacp_* call does; other agents must be registered by this process " +
			"(aacp_register_agent). An unknown, unusable or elsewhere-hosted agent id is -32002 (NOT_FOUND).",
		MIMEType: "application/json",
		Complete: s.completeAgentID,
	}, s.readInbox)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.servers = append(s.servers, srv)
	s.mu.Unlock()
	return nil
}

// readInbox is the inbox resource's handler.
func (s *Service) readInbox(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id := req.Variables["agentId"]
	if err := envelope.CheckAgentID(id); err != nil {
		return nil, core.Errorf(core.CodeNotFound, "%s names no inbox: %s", req.URI, err.Message)
	}
	var b *broker.Broker
	var err error
	if id == s.agentID && !s.heldBySomeone(id) {
		b, _, err = s.act(ctx, "") // the default agent: hosted on first use
	} else {
		b, err = s.broker()
	}
	if err != nil {
		return nil, err
	}
	out, err := b.Inbox(ctx, id)
	var ce *core.Error
	if errors.As(err, &ce) && ce.Code == envelope.CodeAgentNotFound {
		return nil, core.Errorf(core.CodeNotFound, "%s: %s", req.URI, s.notHosted(ctx, b, id))
	}
	if err != nil {
		return nil, err
	}
	text, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode the inbox of %q: %w", id, err)
	}
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
		mcp.TextResource(req.URI, "application/json", string(text)),
	}}, nil
}

// notHosted explains why this process cannot read agentID's inbox.
func (s *Service) notHosted(ctx context.Context, b *broker.Broker, agentID string) string {
	all, err := b.Agents(ctx, broker.AgentsInput{})
	if err == nil {
		if i := slices.IndexFunc(all.Agents, func(a broker.AgentInfo) bool { return a.AgentID == agentID }); i >= 0 {
			if all.Agents[i].Online {
				return fmt.Sprintf("agent %q is hosted by another process; its inbox can be read only there", agentID)
			}
			return fmt.Sprintf("agent %q is registered but not hosted by this process; register it here with aacp_register_agent to read its inbox", agentID)
		}
	}
	return fmt.Sprintf("no agent %q is registered; register it with aacp_register_agent, or read %s (this server's own agent)", agentID, InboxURI(s.agentID))
}

// completeAgentID proposes agent ids for the template: only inboxes this
// process can read — the default agent, then the agents its sessions
// hold — each beginning with what was typed (ignoring case).
func (s *Service) completeAgentID(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	if req.Argument != "agentId" {
		return &mcp.CompleteResult{}, nil
	}
	s.mu.Lock()
	held := make([]string, 0, len(s.holders))
	for id := range s.holders {
		held = append(held, id)
	}
	s.mu.Unlock()
	slices.Sort(held)
	ids := append([]string{s.agentID}, held...)
	prefix := strings.ToLower(req.Value)
	var out []string
	for _, id := range ids {
		if strings.HasPrefix(strings.ToLower(id), prefix) && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return &mcp.CompleteResult{Values: out, Total: len(out)}, nil
}

// notifier announces inbox changes to the subscribers of the inbox
// resources. The broker calls changed from the goroutine that read the
// inbox; the notifications go out from a goroutine of the notifier's own
// (started on first use), so that a slow client never holds up reading.
// Changes that pile up while it sends are coalesced per agent.
type notifier struct {
	servers func() []*mcp.Server

	mu      sync.Mutex
	pending map[string]struct{} // guarded by mu
	running bool                // guarded by mu: the goroutine is started
	closed  bool                // guarded by mu
	wake    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
}

func newNotifier(servers func() []*mcp.Server) *notifier {
	ctx, cancel := context.WithCancel(context.Background())
	return &notifier{servers: servers, pending: map[string]struct{}{}, wake: make(chan struct{}, 1),
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// changed notes that agentID's inbox has new messages.
func (n *notifier) changed(agentID string) {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	n.pending[agentID] = struct{}{}
	if !n.running {
		n.running = true
		go n.run()
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) run() {
	defer close(n.done)
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-n.wake:
		}
		n.mu.Lock()
		ids := make([]string, 0, len(n.pending))
		for id := range n.pending {
			ids = append(ids, id)
		}
		clear(n.pending)
		n.mu.Unlock()
		slices.Sort(ids)
		for _, srv := range n.servers() {
			for _, id := range ids {
				srv.ResourceUpdated(n.ctx, InboxURI(id))
			}
		}
	}
}

// close stops the notifier and waits for its goroutine.
func (n *notifier) close() {
	n.mu.Lock()
	n.closed = true
	running := n.running
	n.mu.Unlock()
	n.cancel()
	if running {
		<-n.done
	}
}
