package setting

import "testing"

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  Error
		want string
	}{
		{Error{Key: "path", Reason: "the path must start with /", Allowed: "a URL path such as /mcp"},
			"path is invalid: the path must start with /; allowed: a URL path such as /mcp"},
		{Error{Key: "aacp.agentId", Value: "../x", Reason: "bad", Allowed: "an agent id"},
			`aacp.agentId = "../x" is invalid: bad; allowed: an agent id`},
		{Error{Key: "k", Allowed: "anything"}, "k is invalid; allowed: anything"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
