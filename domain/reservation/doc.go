// Package reservation is the file-reservation domain: advisory leases an
// agent takes on paths or doublestar globs before editing them, so that
// agents working in one project do not edit the same files at once.
//
// A pattern is normalised by ParsePattern (Unicode NFC, relative to the
// project root, no ".." segment, "src/" meaning "src/**", "d/**" covering
// d itself) and bounded (MaxPatternBytes, MaxSegments, MaxDoubleStars,
// MaxAlternatives). Overlap decides exactly whether two patterns share a
// path, glob against glob, without enumerating paths.
//
// Reserve grants all requested patterns or none. An exclusive lease
// conflicts with every overlapping lease of another agent, a shared one
// only with exclusive ones; an agent's own leases never conflict with it.
// A lease counts until it is released or its ExpiresAt passes, judged
// against the clock at each query: there is no sweeper. A lease whose
// holder messaging reports stale or offline stops blocking: the first
// request it is in the way of releases it (recorded, holder told).
// Holders messaging does not know are treated as live.
//
// The Store makes Reserve atomic across processes (the SQLite store runs
// it in one BEGIN IMMEDIATE transaction). Service needs a Messaging (the
// caller's identity, presence, notices), which it consumes through the
// small interface defined here. Tools holds the typed MCP handlers and
// ToolSpecs their annotations. Errors are *core.Error: INVALID_ARGUMENT,
// RESOURCE_EXHAUSTED (per-agent limit), RESERVATION_NOT_FOUND,
// RESERVATION_HOLDER_LIVE, AGENT_IDENTITY_UNAVAILABLE.
package reservation
