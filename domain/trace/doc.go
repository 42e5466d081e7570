// Package trace records every tool call as an event and reads them back
// as traces, delegation trees and analyses.
//
// # Model
//
// An Event is one finished tools/call: tool, start, duration, outcome,
// error code and message, correlation id, run id, the process that
// recorded it, the collaboration session it names, and (only when
// capturing is on) its redacted, bounded arguments and result.
//
// A trace is every event whose correlation id starts with the same
// segment: correlation ids are '/'-separated paths. A client that sends
// _meta.correlationId "T" for a task, and hands "T/review" to the agent it
// delegates to (which hands "T/review/lint" on), gets one trace "T" whose
// tree has the nodes T -> T/review -> T/review/lint. A call without a
// client correlation id gets a generated one: a trace of one step.
//
// # Recording
//
// Recorder.Record never blocks and never fails the call: it puts the
// event on a bounded queue, and when the queue is full it drops the event
// and counts it (Counts). One goroutine writes batches (up to BatchSize
// events per transaction), applies retention (by age and by count) about
// once a minute, and redacts and bounds captured arguments and results,
// off the call's path. Flush waits until what was queued before it has
// been written; Close writes what is queued and stops. Write failures are
// logged and counted; the events are then lost.
//
// # Reading
//
// Service validates requests (ids: 1-128 bytes of text without control
// characters; limits in range), flushes this process's queue first (so a
// trace tool sees the calls made before it) and reads the Store. A trace
// id with no event is TRACE_NOT_FOUND. Tree builds the delegation tree,
// Analyze the performance, issues and recommendations, Render a text view.
// Tools holds the typed MCP tool handlers; all of them are read-only.
//
// The store package has the SQLite Store, shared by processes.
package trace
