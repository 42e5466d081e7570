// Package memory is a key-value memory shared by agents: JSON values
// addressed as {namespace}:{key}.
//
// Service validates every request (namespace: 1-64 of A-Z a-z 0-9 . _ - /
// in segments that are neither empty nor "." or "..",
// default "default"; key: 1-512 bytes of text without control characters,
// kept verbatim; value: any JSON but null, at most 100 KiB compact and 64
// levels deep), stamps storedAt from its clock and delegates to a Store.
// A request that fails validation changes nothing.
//
// Semantics: Put overwrites (last writer wins); Get of a missing key is
// found=false, not an error; Delete of a missing key succeeds with
// deleted=false; Search matches a case-sensitive substring of keys, newest
// first, or (FullText) every word of the values, best match first; List
// pages by namespace then key (a stable order for offsets, so memory_list
// pages do not shift as entries are stored), or newest first with
// ListQuery.Recent (the memory://entries resource); Export and Import speak NDJSON, one Record
// per line, and Import is all or nothing (every line is checked first; bad
// ones are reported by line number; the writes share one transaction).
// ExportPage (memory_export) pages an export of any size: each page is at
// most MaxExportBytes as a JSON string (4 MiB; the result carries it
// twice and must fit tools.maxResultBytes), from one snapshot, and
// returns an opaque cursor (namespace and key of its last record) from
// which the next page continues; a bad cursor is INVALID_ARGUMENT.
//
// Store is the persistence interface. MemStore is an in-process one; the
// store package has the SQLite one, shared by processes. Both are safe for
// concurrent use and make each method atomic. Tools holds the typed MCP
// tool handlers and ToolSpecs their annotations.
package memory
