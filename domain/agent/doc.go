// Package agent is the agent catalogue and runner behind agent_list,
// agent_get and agent_run.
//
// # Contract
//
//   - Agents are known from three sources, merged by id and listed in the
//     order profile, in-process, messaging: profiles (one JSON object per
//     *.json file of the agents directory, read once by LoadDir), the
//     in-process agents of an aacp.Coordinator, and the agents registered
//     for durable messaging (the broker's registry; delegating agents,
//     which carry DelegatorCapability, are left out). Listing never creates the messaging
//     journal: when none exists, no agent is registered there.
//   - A profile has agentId (an agent id usable over messaging) and
//     description, and optionally displayName, version, role, expertise,
//     capabilities, team, tags, enabled (default true), workflowId,
//     workflow (descriptive steps) and orchestration {maxDelegationDepth,
//     canReadWorkspaces, canWriteToShared}. Unknown fields, a second JSON
//     value, files over 256 KiB, nesting over 16, non-regular files, bad
//     values and duplicate ids fail the whole load, naming the file.
//   - Depth: every run has a delegation depth, how many delegations led to
//     it: 0 for a direct call, the delegationDepth argument for a worker
//     that delegates further, and, in process, the depth its context
//     carries (WithDepth). A run is refused with
//     AGENT_DELEGATION_DEPTH_EXCEEDED when its depth is over the agent's
//     limit: its profile's orchestration.maxDelegationDepth, else the
//     default (agent.maxDelegationDepth, 3). Whatever the agent starts
//     runs at depth+1 (the TASK_ASSIGNMENT's context.delegation.depth).
//   - Run picks one way, in order: a profile naming workflowId runs that
//     workflow on the WorkflowRunner (NOT_IMPLEMENTED when none is
//     connected); an agent registered for messaging is delegated to; an
//     in-process agent gets a RunMessageType message with payload
//     {input, task?, sessionId?, delegation: {depth}}. A disabled profile
//     is AGENT_PERMISSION_DENIED, an unknown id AGENT_NOT_FOUND.
//   - Delegation (Messaging): the process hosts one delegating agent of
//     its own (DelegatorID: its messaging agent id plus "-runs"), which
//     sends the TASK_ASSIGNMENT {taskId, taskRef "agent_run:{agentId}",
//     taskDescription, memoryLogPath "none", executionType single-step,
//     context {input, sessionId?, delegation {depth, maxDepth, replyTo}}}
//     with correlationId taskId and a ttl of what remains of the call's
//     deadline. The worker answers with TASK_UPDATE {taskId, status,
//     progress, output?, notes?, error?} to replyTo; only completed and
//     failed end the run, and only from the agent the task went to. A
//     failed update, or the broker's ERROR_REPORT on the assignment (the
//     worker NACKed it, or it expired), is AGENT_STAGE_FAILED; the call's
//     deadline is TIMEOUT (retryable); cancellation ends the wait with its
//     cause. A late update is acknowledged and dropped.
//   - Service, Messaging and Tools are safe for concurrent use. The
//     coordinator, workflow runner and messaging are connected by setters
//     and may each stay nil. Service.RunAgent is the workflow engine's
//     agent runner.
package agent
