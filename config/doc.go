// Package config is the mcprt binary's configuration: the composition of
// every section the product knows and its one load.
//
//	cfg, err := config.Load(path, os.Environ(), version)
//	if err != nil { ... } // a *config.Error naming the key
//
// The sections: Base holds the server's own (server.*, transport.*,
// tools.*, resources.*, logging.*, security.*, stateless.*, and aacp.*,
// whose struct is the messaging service's, messaging.Config); Domain
// holds the domain tools' (store, guard, trace, workflow, agent, coord)
// and where their directories default to; the Streamable HTTP
// transport's (transport.http), the console's (console), the messaging
// backend's (aacp.backend) and the NATS section (nats) are the structs
// of those packages. Keys lists every key, for docs/configuration.md;
// ServerOptions maps the base sections onto mcp.Options.
//
// The library packages (jsonrpc, core, mcp, the transports) know nothing
// of this package: each takes plain options, and the binary maps this
// configuration onto them. A section struct declared in another package
// carries only tags; only this package reads them.
//
// # Keys, variables and rules
//
// Settings come from three sources, strongest first: environment variables,
// a JSON file, and the defaults in code. Every package that has settings
// declares a section: a Go struct whose value holds the defaults. The
// struct's json tags name the keys; a nested struct is a nested JSON
// object; the key path of a field is the section's path plus the json
// names, e.g. "transport.http.allowedOrigins". The environment variable of
// a key is "MCPRT_" plus the key path in UPPER_SNAKE_CASE (see EnvName):
// MCPRT_TRANSPORT_HTTP_ALLOWED_ORIGINS.
//
// A field's type sets how its value is written:
//
//	int       a JSON integer (1e3 and 1.0 count); env: decimal digits
//	time.Duration  written as an int in the unit its key's name ends
//	          with: "…Ms" milliseconds, "…Seconds" seconds; the loader
//	          converts it once; a value longer than a Duration holds
//	          (about 292 years) becomes the longest one in whole units
//	bool      true or false; env: true, false, 1 or 0
//	string    a JSON string; env: the text as it is
//	[]string  a JSON array of non-empty strings; env: a comma-separated
//	          list (items trimmed, empty items skipped)
//	struct    a JSON object of its own keys (no env variable of its own)
//
// Its config tag adds rules, comma-separated:
//
//	min=N      int: at least N (the default minimum is 1)
//	max=N      int: at most N (the default maximum is 2^53-1)
//	enum=a|b   string: exactly one of these (case-sensitive)
//	nonempty   string: not ""; []string: at least one item
//	envvar     string: "" or an environment variable name; the variable it
//	           names is the key's business, so even with the MCPRT_ prefix
//	           it is not an unknown variable
//	reserved   bool: must stay false
//	secret     any: the value never appears in errors or in Keys
//
// A help tag says in one line what the key does (Keys reports it). A
// struct whose pointer has a method Validate() error is checked after all
// values are in, for rules across keys; returning a *Error whose Key
// is relative to that struct names the key, and Load fills in its
// variable, value and source. A package that config imports (and so
// cannot import config) returns a *setting.Error (internal/setting)
// instead: the same key, reason and what is allowed; AsError turns one
// returned at run time into a *Error.
//
// Load is the one load: it adds every section to one loader, reads the
// file and the environment into all of them at once, and Keys lists every
// key for documentation. Loading is strict: an unknown key in the file, a duplicate or null key,
// a value of the wrong JSON type, a value a rule refuses, and an MCPRT_*
// variable that belongs to no key all fail the load with a *Error
// naming the key, its variable, the value, and what is allowed. The mcprt
// binary logs it and exits 78.
package config
