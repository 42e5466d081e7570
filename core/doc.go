// Package core holds the foundations every other mcprt package shares:
// structured errors and their codes, configuration loading, structured
// logging with redaction and sanitization, injectable identifiers and
// clock, concurrency slots and payload sizing, and runtime telemetry with
// the health rules.
//
// core depends on nothing outside the standard library: besides it, it
// imports only the module's internal jsontext package (JSON text helpers),
// which imports the standard library alone. Nothing in it keeps global
// mutable state: every stateful value (a Loader, a logger, a LogWriter, a
// slot pool, a telemetry sampler, a clock) is created by its owner and
// passed where it is needed, so two servers in one process share nothing.
//
// # Concurrency
//
// Safe for concurrent use: Clock implementations (SystemClock,
// ManualClock), IDGenerator implementations, Redactor, the loggers of
// NewLogger and the handlers of LimitRepeats, LogWriter, Slots and
// Telemetry. Values (Config, *Error, ConfigError) are plain data: share
// them read-only or copy them. A Loader is used by one goroutine: add the
// sections, then load.
//
// What happens exactly once: a timer's callback runs at most once, and
// Stop returns true only when it prevented that run; ManualClock runs due
// callbacks on the goroutine that moves it, before Set or Advance returns.
// A LogWriter writes each accepted entry once, whole, in order, and counts
// each entry it drops once. A Loader's Load changes its sections once, all
// together, or not at all.
//
// # Configuration
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
// values are in, for rules across keys; returning a *ConfigError whose Key
// is relative to that struct names the key, and Load fills in its
// variable, value and source.
//
// A Loader holds the sections: NewConfigLoader starts one with mcprt's own
// sections (Config), Add adds one, Load reads the file and the environment
// into all of them at once, and Keys lists every key for documentation.
// Loading is strict: an unknown key in the file, a duplicate or null key,
// a value of the wrong JSON type, a value a rule refuses, and an MCPRT_*
// variable that belongs to no key all fail the load with a *ConfigError
// naming the key, its variable, the value, and what is allowed. The mcprt
// binary logs it and exits 78.
//
// # Logging
//
// Logs are JSON lines on stderr (NewLogger). Values under keys that match a
// redaction key are replaced by "[REDACTED]" at any depth, and control
// characters in strings are escaped, on copies: the caller's values are
// never changed. LogFields writes a record of string and integer
// attributes (the tools/call completion record) byte for byte as the
// handler would, without slog's reflective path. LogWriter keeps a slow or stalled stderr from ever
// blocking the caller; LimitRepeats keeps a client from flooding the log
// with a warning it can trigger at will.
package core
