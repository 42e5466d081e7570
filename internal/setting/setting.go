package setting

import "strconv"

// Error says which setting is invalid. Key is the key path: relative to
// the section when a section's Validate returns it ("path" of
// transport.http), the full path otherwise ("aacp.agentId").
type Error struct {
	Key     string // the key at fault
	Value   string // the offending value as text; "" when the loader knows it
	Reason  string // what is wrong, e.g. "not host:port"
	Allowed string // what would be accepted
}

// Error implements the error interface, e.g.
// `aacp.agentId = "../x" is invalid: not an agent id; allowed: an agent id`.
func (e *Error) Error() string {
	s := e.Key
	if e.Value != "" {
		s += " = " + strconv.Quote(e.Value)
	}
	s += " is invalid"
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s + "; allowed: " + e.Allowed
}
