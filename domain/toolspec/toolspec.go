// Package toolspec describes the MCP tools of the domain packages without
// depending on the mcp package: each domain lists a Spec per tool, and the
// program that registers the tools pairs each Spec with the domain's typed
// handler of the same name.
package toolspec

// Spec is what a tool declares besides its handler and schemas. The hints
// are MCP tool annotations and are stated truthfully: ReadOnly tools change
// nothing; Destructive tools may change or remove what exists (not only
// add); Idempotent tools have no further effect when called again with the
// same arguments; OpenWorld tools reach outside this server's own data.
type Spec struct {
	Name        string
	Title       string
	Description string
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
}
