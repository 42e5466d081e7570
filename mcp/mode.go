package mcp

// Modes of Options.Mode: which tools a server admits.
const (
	ModeFull     = "FULL"     // everything configured
	ModeReadOnly = "READONLY" // only read-only tools
	ModeMinimal  = "MINIMAL"  // only server_ping and health
	ModeTest     = "TEST"     // FULL plus the test fixtures
)
