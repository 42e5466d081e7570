// Package config is the mcprt binary's configuration: the composition of
// every section the product knows (the server's base sections of package
// core, the domain tools', the Streamable HTTP transport's, the console's,
// the messaging backend's and the NATS section) and its one load.
//
//	cfg, err := config.Load(path, os.Environ(), version)
//	if err != nil { ... } // a *core.ConfigError naming the key
//
// Load reads the defaults, then the JSON file, then the MCPRT_*
// variables, through one core.Loader: every key and variable of every
// section is known in one load, so a misspelt one fails it. Keys lists
// them all, for docs/configuration.md. Domain holds the domain tools'
// sections (store, guard, trace, workflow, agent, coord) and where their
// directories default to.
//
// The library packages (jsonrpc, core, mcp, the transports) know nothing
// of this package: each takes plain options, and the binary maps this
// configuration onto them.
package config
