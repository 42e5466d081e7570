// Package envelope defines the message envelope of agent-to-agent
// messaging, its validation, and the protocol's error catalogue.
//
// An Envelope is one transmission of a message from one agent to another
// (or to many, when the receiver is "*"): protocol version "1.0.0", a
// messageId unique to the transmission, a requestId that stays the same
// when the message is retried, an optional correlationId, an RFC 3339 UTC
// timestamp, sender and receiver, messageType (seven core types and
// CUSTOM_*), priority, a JSON object payload, the channel sequence number
// seq, the cumulative acknowledgement ack of the reverse channel, and
// metadata (retryCount, ttl in seconds, tags).
//
// Validation has three layers, and each rejection is a *core.Error whose
// Code is a catalogue code (E_VALIDATION_*, E_ROUTING_*, E_PROTOCOL_*)
// and whose message says what was wrong and what would be right:
//
//   - syntax: one JSON object, valid UTF-8, no key repeated in an object,
//     bounded nesting (E_PROTOCOL_002), at most the size limit
//     (E_VALIDATION_005, 1 MiB by default);
//   - shape: JSON Schemas of the envelope and of each core type's payload,
//     compiled once per Validator. A missing required field is
//     E_VALIDATION_001, a wrong JSON type E_VALIDATION_002, a value outside
//     an enumeration E_VALIDATION_003, any other rule (lengths, ranges,
//     formats, unknown or case-mismatched keys) E_VALIDATION_004; an
//     invalid requestId or correlationId is E_PROTOCOL_003;
//   - meaning: the version (E_PROTOCOL_001), agent ids (E_ROUTING_002),
//     message types and priorities (E_VALIDATION_003).
//
// Agent ids are used as path components on disk, so they are restricted
// to ASCII letters, digits, '.', '_' and '-', start with a letter or
// digit, are at most 64 bytes, and never contain "_to_" (nor start with
// "to_" or end with "_to"), which keeps "{sender}_to_{receiver}" channel
// names unambiguous. Ids differing only in case name different agents;
// on a case-insensitive file system they would share files, so avoid
// such pairs there.
//
// The package keeps no mutable state; a Validator is immutable once made
// and may be used by any number of goroutines.
package envelope
