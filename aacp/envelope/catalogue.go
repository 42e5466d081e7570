package envelope

import (
	"github.com/mcprt/mcprt/core"
)

// The error catalogue of the messaging protocol. Every rejection by this
// package and by the broker carries one of these codes in a *core.Error.
const (
	// CodeMissingField: a required field (of the envelope or of the
	// payload) is absent.
	CodeMissingField core.Code = "E_VALIDATION_001"
	// CodeInvalidType: a field has the wrong JSON type.
	CodeInvalidType core.Code = "E_VALIDATION_002"
	// CodeInvalidEnum: a field's value is not one of those allowed.
	CodeInvalidEnum core.Code = "E_VALIDATION_003"
	// CodeSchema: any other schema rule is broken (lengths, ranges,
	// formats, unknown fields, case-mismatched keys).
	CodeSchema core.Code = "E_VALIDATION_004"
	// CodeTooLarge: the message is larger than the size limit.
	CodeTooLarge core.Code = "E_VALIDATION_005"

	// CodeAgentNotFound: no registered agent matches the receiver.
	CodeAgentNotFound core.Code = "E_ROUTING_001"
	// CodeInvalidReceiver: an agent id or receiver specification is not
	// acceptable (unsafe as a path component, reserved, malformed).
	CodeInvalidReceiver core.Code = "E_ROUTING_002"
	// CodeChannelUnavailable: a channel could not be written.
	CodeChannelUnavailable core.Code = "E_ROUTING_003"
	// CodeBroadcastPartial: a broadcast reached some receivers only.
	CodeBroadcastPartial core.Code = "E_ROUTING_004"

	// CodeUnsupportedVersion: no protocol version in common.
	CodeUnsupportedVersion core.Code = "E_PROTOCOL_001"
	// CodeMalformedJSON: the bytes are not one well-formed JSON object
	// (including duplicate keys and invalid UTF-8).
	CodeMalformedJSON core.Code = "E_PROTOCOL_002"
	// CodeInvalidCorrelationID: a correlationId or requestId is not a
	// non-empty string of at most MaxIDBytes bytes.
	CodeInvalidCorrelationID core.Code = "E_PROTOCOL_003"
	// CodeTimeout: a message was not acknowledged in time (after its
	// retries), or it expired.
	CodeTimeout core.Code = "E_PROTOCOL_004"

	// CodeTaskNotFound: the task is unknown to the receiver.
	CodeTaskNotFound core.Code = "E_TASK_001"
	// CodeTaskAlreadyAssigned: the task is already assigned.
	CodeTaskAlreadyAssigned core.Code = "E_TASK_002"
	// CodeTaskFailed: the task's execution failed.
	CodeTaskFailed core.Code = "E_TASK_003"
	// CodeTaskDependencyMissing: a task dependency is missing.
	CodeTaskDependencyMissing core.Code = "E_TASK_004"
)

// CodeInfo describes one catalogue code.
type CodeInfo struct {
	Code        core.Code `json:"code"`
	Description string    `json:"description"`
	Severity    string    `json:"severity"` // critical, high, medium or low
	// Recoverable tells whether the sender can succeed after changing
	// something (fixing the message, waiting, retrying).
	Recoverable bool `json:"recoverable"`
	// Retryable tells whether sending the same thing again can succeed.
	Retryable bool `json:"retryable"`
}

// catalogue is the table of codes, in catalogue order. It is never
// modified.
var catalogue = [...]CodeInfo{
	{CodeMissingField, "Missing required field", "medium", true, false},
	{CodeInvalidType, "Invalid field type", "medium", true, false},
	{CodeInvalidEnum, "Invalid enum value", "medium", true, false},
	{CodeSchema, "Schema validation failed", "medium", true, false},
	{CodeTooLarge, "Message size exceeded limit", "high", false, false},
	{CodeAgentNotFound, "Agent not found", "medium", false, false},
	{CodeInvalidReceiver, "Invalid receiver specification", "medium", true, false},
	{CodeChannelUnavailable, "Channel unavailable", "high", true, true},
	{CodeBroadcastPartial, "Broadcast failed (partial)", "medium", true, true},
	{CodeUnsupportedVersion, "Unsupported protocol version", "high", false, false},
	{CodeMalformedJSON, "Malformed JSON", "critical", false, false},
	{CodeInvalidCorrelationID, "Invalid correlation ID", "medium", true, false},
	{CodeTimeout, "Message timeout", "medium", true, true},
	{CodeTaskNotFound, "Task not found", "medium", false, false},
	{CodeTaskAlreadyAssigned, "Task already assigned", "low", false, false},
	{CodeTaskFailed, "Task execution failed", "high", true, true},
	{CodeTaskDependencyMissing, "Task dependency missing", "high", true, true},
}

// Catalogue returns a copy of the error catalogue, in catalogue order.
func Catalogue() []CodeInfo {
	out := make([]CodeInfo, len(catalogue))
	copy(out, catalogue[:])
	return out
}

// LookupCode returns the catalogue entry of code.
func LookupCode(code core.Code) (CodeInfo, bool) {
	for _, c := range catalogue {
		if c.Code == code {
			return c, true
		}
	}
	return CodeInfo{}, false
}

// Errorf returns a *core.Error with a catalogue code, a formatted message
// and the code's Retryable flag. A %w verb sets the cause.
func Errorf(code core.Code, format string, args ...any) *core.Error {
	e := core.Errorf(code, format, args...)
	if info, ok := LookupCode(code); ok {
		e.Retryable = info.Retryable
	}
	return e
}

// ErrorType is the ERROR_REPORT errorType that fits a catalogue code.
func ErrorType(code core.Code) string {
	switch code {
	case CodeMissingField, CodeInvalidType, CodeInvalidEnum, CodeSchema, CodeTooLarge, CodeMalformedJSON, CodeInvalidCorrelationID:
		return "ValidationError"
	case CodeTaskNotFound, CodeTaskAlreadyAssigned, CodeTaskFailed:
		return "TaskFailure"
	case CodeTaskDependencyMissing:
		return "DependencyError"
	}
	return "SystemError"
}
