// Package console is the overseer's console: web pages, served by mcprt
// itself, where the person running several AI sessions sees and steers
// them — agents and their presence, messages and dead letters, memory,
// sessions, guard policies, traces — and sends messages as the human
// overseer.
//
// # Contract
//
//   - A Console is an http.Handler for the paths under Options.Prefix
//     (default /ui/). mcprt --http mounts it beside the MCP endpoint;
//     mcprt ui serves it alone over a data directory.
//   - Pages are html/template output; templates, CSS and the one script
//     are embedded (go:embed). Nothing else is ever served: an asset name
//     with a slash or outside the embedded set is 404.
//   - Every answer carries a strict Content-Security-Policy (scripts,
//     styles and connections from the console's own origin only; no
//     inline script or style; no framing). Everything agents wrote is
//     escaped by the templates, so an agent's payload shows as text.
//   - Requests must pass the Host check (localhost, loopback addresses,
//     Options.AllowedHosts) and, when they carry an Origin, the Origin
//     check (the console's own host, localhost, Options.AllowedOrigins);
//     otherwise 403.
//   - With Options.Token set, a browser signs in once by posting the
//     token to {prefix}signin; it gets an HttpOnly, SameSite=Strict
//     cookie holding a random session id (the token is not stored).
//     Without a sign-in, pages redirect to the sign-in form (GET) or
//     answer 401. Without a token, a browser gets a session on its first
//     visit. Sessions live in memory, expire after console.sessionTtlMs
//     unused, and at most 256 are kept.
//   - State-changing actions — compose, requeue, force-release, sign out
//     — are POSTs carrying the session's CSRF token (else 403). Compose,
//     requeue and force-release are recorded as trace events (tools
//     console.compose, console.requeue, console.force_release, server
//     "console:{humanAgentId}").
//   - Compose sends through the messaging broker (Options.Messaging) as
//     console.humanAgentId, registered with console.humanAgentType when a
//     signed-in browser first opens a page (so agents can write to the
//     person) or, failing that, on the first send, so the message takes the same durable path as any
//     aacp_send. Requeue sends a dead letter again for its sender: the
//     person's agent or another agent this process hosts directly, an
//     agent no process runs by hosting it for the moment it takes; an
//     agent that runs in another process is refused (that session
//     requeues with aacp_requeue).
//   - The journal is read without claiming any agent, as mcprt aacp
//     reads it, and re-read only when its files or the agents' presence
//     change; at most the newest 2000 messages of each inbox are shown.
//     With Options.Journal (aacp.backend=nats) it is read from stores
//     that source opens instead of the data directory's files, and
//     re-read when the source's version or the agents' presence change.
//     Trace listings are cached until the store's change feed moves.
//   - Live updates: {prefix}events is a server-sent event stream; each
//     "change" event's data names what changed (messages, presence,
//     reservations, tasks, trace, memory, session). While a browser
//     listens, the console polls the journal and the Reservations and
//     Tasks sources every console.pollIntervalMs and follows the store's
//     change feed; with no listener it polls nothing.
//   - Reservations, Tasks, MessageSearch and Health are optional sources;
//     a nil one shows its view as not available in this build.
//   - Every list is bounded and paginated (console.pageSize rows).
package console
