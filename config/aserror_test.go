package config

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mcprt/mcprt/internal/setting"
)

func TestAsError(t *testing.T) {
	own := &Error{Key: "tools.pageSize", Env: "MCPRT_TOOLS_PAGE_SIZE", Value: "0", Allowed: "an integer >= 1", Source: sourceEnv}
	for _, tc := range []struct {
		name string
		err  error
		want *Error // nil: no setting named
	}{
		{"a *Error as it is", fmt.Errorf("loading: %w", own), own},
		{"a *setting.Error with its variable", fmt.Errorf("messaging: %w",
			&setting.Error{Key: "aacp.agentId", Value: "../x", Reason: "not an agent id", Allowed: "an agent id"}),
			&Error{Key: "aacp.agentId", Env: "MCPRT_AACP_AGENT_ID", Value: "../x", Reason: "not an agent id", Allowed: "an agent id"}},
		{"another error", errors.New("disk full"), nil},
		{"nil", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := AsError(tc.err)
			if ok != (tc.want != nil) || (ok && *got != *tc.want) {
				t.Errorf("AsError(%v) = %+v, %v; want %+v", tc.err, got, ok, tc.want)
			}
		})
	}
}
