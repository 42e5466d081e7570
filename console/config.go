package console

import "time"

// ConfigPath is where the section lives in the configuration file:
// {"console": {...}}; its variables are MCPRT_CONSOLE_*.
const ConfigPath = "console"

// Config is the "console" section of the configuration.
type Config struct {
	Enabled        bool          `json:"enabled" help:"Serve the overseer's console at /ui/ beside the MCP endpoint of mcprt --http."`
	Addr           string        `json:"addr" config:"nonempty" help:"host:port that mcprt ui listens on; the default keeps it reachable from this machine only (--addr overrides it)."`
	HumanAgentID   string        `json:"humanAgentId" config:"nonempty" help:"The agent id the person sends messages as from the console (registered in the messaging journal when a signed-in browser first opens a page, or on the first send)."`
	HumanAgentType string        `json:"humanAgentType" config:"enum=Manager|Implementation|AdHoc" help:"The agent type the person's agent is registered with."`
	PollInterval   time.Duration `json:"pollIntervalMs" config:"min=50,max=10000" help:"How often the live view looks for other processes' messages, presence changes and store writes, in milliseconds."`
	SessionTTL     time.Duration `json:"sessionTtlMs" config:"min=60000" help:"How long a browser stays signed in without using the console, in milliseconds."`
	PageSize       int           `json:"pageSize" config:"min=5,max=500" help:"Rows per page of every list."`
}

// DefaultConfig returns the section's defaults.
func DefaultConfig() Config {
	return Config{Enabled: true, Addr: "127.0.0.1:8081", HumanAgentID: "human", HumanAgentType: "Manager",
		PollInterval: 250 * time.Millisecond, SessionTTL: 12 * time.Hour, PageSize: 50}
}
