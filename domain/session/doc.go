// Package session manages collaboration sessions between agents.
//
// A session is created active with its initiator as first participant
// (role "initiator") and ends exactly once, as completed or failed:
//
//	active --complete--> completed
//	active --fail------> failed
//
// Ending an ended session again the same way is SESSION_ALREADY_COMPLETED;
// the other way is SESSION_INVALID_TRANSITION; joining, leaving, recording
// a task in or applying a policy to an ended session is
// SESSION_ALREADY_COMPLETED; an unknown id is SESSION_NOT_FOUND. Join and
// Leave are idempotent: joining twice or leaving when absent changes
// nothing and says so (joined=false, left=false).
//
// Every change goes through Store.Update, which reads, changes and writes
// a session atomically, so concurrent changes from several processes never
// overwrite each other. A failed call changes nothing. MemStore is an
// in-process Store; the store package has the SQLite one. Service is safe
// for concurrent use; ids come from a core.IDGenerator and times from a
// core.Clock. Tools holds the typed MCP tool handlers and ToolSpecs their
// annotations.
package session
