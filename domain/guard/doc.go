// Package guard checks the paths an agent changed against governance
// policies.
//
// A Policy has allowed and forbidden path globs (doublestar syntax: '**'
// spans directories), gates (path_violation, change_radius) and a
// change-radius limit. Policies come from Builtin ("default",
// "docs-only"), from a directory of JSON files (one policy per *.json
// file; a file replaces a built-in of the same id), or from Add. Every
// glob is checked when a policy is loaded; a bad one is
// INVALID_PATH_PATTERN naming the policy and file.
//
// Check normalises every changed path first (NormalizePath: '\' as '/',
// Unicode NFC, cleaned, relative and inside the root — so "a/../secret" is
// judged as "secret" and "../x" or "/etc/x" are refused), then reports
// every violation of every gate: path_not_allowed, path_forbidden (both
// when both apply) and change_radius_exceeded. Matching is case-sensitive.
//
// Service.Check runs the policies that apply: the one named and, with a
// session id, every policy applied to that session (in the order
// applied); with neither, DefaultPolicyID. When a ReservationGate is set
// it runs last as the gate "reservation": a changed path another live
// agent reserved exclusively is a path_reserved violation naming the
// holder. CheckGated runs a check with another gate (the `mcprt guard
// check` command names the agent itself).
//
// Service holds the policies (safe for concurrent use; Reload rereads the
// directory and keeps the old set on error) and applies policies to
// sessions through the session domain: POLICY_NOT_FOUND,
// POLICY_ALREADY_APPLIED, SESSION_NOT_FOUND, SESSION_ALREADY_COMPLETED.
// Tools holds the typed MCP tool handlers and ToolSpecs their
// annotations.
package guard
