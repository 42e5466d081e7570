package config

import "github.com/mcprt/mcprt/mcp"

// Tool profiles of tools.profile: the named tool sets of the product's
// tools (mcp.Options.Profiles).
const (
	ToolProfileCore         = "core"
	ToolProfileMessaging    = "messaging"
	ToolProfileMemory       = "memory"
	ToolProfileCoordination = "coordination"
	ToolProfileGovernance   = "governance"
	ToolProfileFull         = mcp.ToolProfileFull // every tool
)

// ToolProfiles returns the named tool profiles other than full: each a
// list of tool names and name prefixes ending in "*". A name that no
// registered tool has is simply absent from the sessions' lists. Every
// call returns a fresh map.
func ToolProfiles() map[string][]string {
	return map[string][]string{
		ToolProfileCore: {"aacp_send", "aacp_receive", "aacp_ack", "aacp_peek", "aacp_reply",
			"memory_store", "memory_search", "memory_retrieve",
			"reserve_paths", "check_reservations", "release_reservations",
			"task_claim", "task_update", "coord_start", "coord_finish", "server_ping"},
		ToolProfileMessaging: {"aacp_*", "coord_start", "coord_finish", "server_ping"},
		ToolProfileMemory:    {"memory_*", "server_ping"},
		ToolProfileCoordination: {"reserve_paths", "renew_reservations", "release_reservations", "check_reservations",
			"list_reservations", "force_release_reservation", "task_*", "coord_start", "coord_finish", "server_ping"},
		// Governance watches and unblocks the others' work: it sees
		// reservations and tasks and may break a lease, but takes none.
		ToolProfileGovernance: {"guard_*", "session_*", "trace_*", "workflow_*", "list_reservations", "check_reservations",
			"force_release_reservation", "task_list", "task_get", "server_ping", "health"},
	}
}
