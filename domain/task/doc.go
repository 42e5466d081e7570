// Package task is the shared work queue: agents post tasks, claim them
// atomically, report progress, hand them off and finish them.
//
// A task is open until claimed; claimed, in_progress and blocked tasks
// have one holder; done and failed are final. Claim takes a task (the one
// named, or the best open one by priority then age having every label
// asked for) only when nobody holds it, it is not final, it was not posted
// for another agent, and every task it depends on is done; the Store runs
// it in one transaction (BEGIN IMMEDIATE in SQLite), so two agents never
// claim one task, even from two processes. Only the holder may update,
// release or hand off a task. Steal takes a task from a holder messaging
// reports stale or offline; Claim reopens such a holder's tasks when it
// meets them — the task it was asked for, or, when no open task matches,
// every such holder's (Sweep). Every transition is an Event, the durable
// history task_get shows. The people concerned are told through
// Messaging: the designated assignee of a post, the poster of a claim, an
// end, a handoff or a steal, the receiver of a handoff, the holder who
// lost a task. Holders messaging does not know are treated as live.
//
// Errors are *core.Error: INVALID_ARGUMENT, TASK_NOT_FOUND,
// TASK_NOT_CLAIMABLE, TASK_NOT_HOLDER, TASK_INVALID_TRANSITION,
// TASK_HOLDER_LIVE, AGENT_IDENTITY_UNAVAILABLE. Tools holds the typed MCP
// handlers and ToolSpecs their annotations.
package task
