package envelope

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcprt/mcprt/core"
)

// CheckAgentID returns an E_ROUTING_002 error when id cannot name an
// agent. Agent ids become path components ("channels/{sender}_to_{receiver}",
// "locks/{id}.lock"), so the rule is strict: 1 to MaxAgentIDBytes bytes of
// ASCII letters, digits, '.', '_' and '-', starting with a letter or a
// digit. So that a channel name splits back into exactly one pair, an id
// must not contain "_to_", start with "to_" or end with "_to".
func CheckAgentID(id string) *core.Error {
	if msg := agentIDProblem(id); msg != "" {
		return Errorf(CodeInvalidReceiver, "agent id %s %s; want 1 to %d bytes of ASCII letters, digits, '.', '_' and '-', starting with a letter or digit, without \"_to_\" (e.g. \"impl_001\")",
			quoteClip(id), msg, MaxAgentIDBytes)
	}
	return nil
}

// agentIDProblem says what is wrong with id, or "" when nothing is.
func agentIDProblem(id string) string {
	switch {
	case id == "":
		return "is empty"
	case len(id) > MaxAgentIDBytes:
		return fmt.Sprintf("is %d bytes long", len(id))
	case !isAlnum(id[0]):
		return fmt.Sprintf("starts with %q", id[:1])
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			switch {
			case c == 0:
				return fmt.Sprintf("contains a NUL byte at offset %d", i)
			case c < 0x20 || c == 0x7f:
				return fmt.Sprintf("contains the control character %#02x at offset %d", c, i)
			case c == '/' || c == '\\':
				return fmt.Sprintf("contains a path separator %q", string(c))
			case c >= utf8.RuneSelf:
				return "contains a non-ASCII character"
			}
			return fmt.Sprintf("contains %q", string(c))
		}
	}
	switch {
	case strings.Contains(id, "_to_"):
		return `contains "_to_", the channel separator`
	case strings.HasPrefix(id, "to_"):
		return `starts with "to_", which makes channel names ambiguous`
	case strings.HasSuffix(id, "_to"):
		return `ends with "_to", which makes channel names ambiguous`
	}
	return ""
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// CheckID returns an E_PROTOCOL_003 error when id (named what, e.g.
// "requestId") is not a usable identifier: 1 to MaxIDBytes bytes of
// printable ASCII without spaces.
func CheckID(what, id string) *core.Error {
	if id == "" {
		return Errorf(CodeInvalidCorrelationID, "%s is empty; want 1 to %d printable ASCII characters without spaces (a UUID, say)", what, MaxIDBytes)
	}
	if len(id) > MaxIDBytes {
		return Errorf(CodeInvalidCorrelationID, "%s %s is %d bytes long; want at most %d", what, quoteClip(id), len(id), MaxIDBytes)
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] >= 0x7f {
			return Errorf(CodeInvalidCorrelationID, "%s %s has a space, control or non-ASCII byte at offset %d; want printable ASCII without spaces", what, quoteClip(id), i)
		}
	}
	return nil
}

// quoteClip quotes s, cut to 80 bytes.
func quoteClip(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q…", s[:80])
	}
	return fmt.Sprintf("%q", s)
}
