// Package core holds the foundations every other mcprt package shares:
// structured errors and their codes, structured logging with redaction
// and sanitization, injectable identifiers and clock, concurrency slots
// and payload sizing, and runtime telemetry with the health rules. It
// holds no product configuration: the mcprt binary's settings, their
// loader and their errors live in package config, above the library.
//
// core depends on nothing outside the standard library: besides it, it
// imports only the module's internal jsontext package (JSON text helpers),
// which imports the standard library alone. Nothing in it keeps global
// mutable state: every stateful value (a logger, a LogWriter, a
// slot pool, a telemetry sampler, a clock) is created by its owner and
// passed where it is needed, so two servers in one process share nothing.
//
// # Concurrency
//
// Safe for concurrent use: Clock implementations (SystemClock,
// ManualClock), IDGenerator implementations, Redactor, the loggers of
// NewLogger and the handlers of LimitRepeats, LogWriter, Slots and
// Telemetry. Values (*Error) are plain data: share them read-only or copy
// them.
//
// What happens exactly once: a timer's callback runs at most once, and
// Stop returns true only when it prevented that run; ManualClock runs due
// callbacks on the goroutine that moves it, before Set or Advance returns.
// A LogWriter writes each accepted entry once, whole, in order, and counts
// each entry it drops once.
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
