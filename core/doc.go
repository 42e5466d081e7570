// Package core holds the foundations every other mcprt package shares:
// structured errors and their codes, configuration loading, structured
// logging with redaction and sanitization, injectable identifiers and clock,
// concurrency slots and payload sizing, and runtime telemetry with the
// health rules.
//
// core imports the standard library only. Nothing in it keeps global
// mutable state: every stateful value (a logger, a slot pool, a telemetry
// sampler) is created by its owner and passed where it is needed.
package core
