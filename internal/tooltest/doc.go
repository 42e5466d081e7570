// Package tooltest holds the checks that tests of tool packages make on a
// tools/call result decoded as a JSON object: a success carries
// structuredContent and the same object as JSON text in its first content
// block; a tool error carries, as JSON text, its code, message, retryable
// flag, correlationId and runId. It is imported only by tests.
package tooltest
