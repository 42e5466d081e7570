package main

// The operator commands' usage rules: bad usage exits 2 with a message
// saying what is wrong, a missing data directory 1, an invalid
// configuration 78; help and an empty journal 0.

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestAACPOperatorUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"MCPRT_AACP_DATA_DIR=" + dir}
	for _, tc := range []struct {
		env      []string
		args     []string
		code     int
		out, err string
	}{
		{env, []string{"--help"}, 0, "mcprt aacp [flags] agents", ""},
		{env, nil, 2, "", "no command given"},
		{env, []string{"gossip"}, 2, "", `unknown command "gossip"`},
		{env, []string{"channel", "a"}, 2, "", "channel takes 2 argument(s), got 1"},
		{env, []string{"inbox", "../x"}, 2, "", `agent id "../x"`},
		{env, []string{"inbox", "a_to_b"}, 2, "", `"_to_"`},
		{env, []string{"--bogus", "agents"}, 2, "", "flag provided but not defined: -bogus"},
		{env, []string{"agents"}, 0, "(none)", ""},
		{env, []string{"agents", "--json"}, 0, `"agents": []`, ""},
		{env, []string{"dead-letters"}, 0, "(none)", ""},
		{env, []string{"requeue", "nope"}, 1, "", `no dead letter "nope"`},
		{nil, []string{"--data-dir", filepath.Join(dir, "missing"), "agents"}, 1, "", "not a directory; pass --data-dir"},
		{[]string{"MCPRT_AACP_FSYNC=sometimes"}, []string{"--data-dir", dir, "agents"}, 78, "", "aacp.fsync"},
	} {
		out, errOut, code := runOperator(t, tc.env, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.err) {
			t.Errorf("mcprt aacp %v: exit %d, want %d\nstdout: %s\nstderr: %s\nwant %q / %q", tc.args, code, tc.code, out, errOut, tc.out, tc.err)
		}
		if tc.code == 2 && !strings.Contains(errOut, "mcprt aacp --help") {
			t.Errorf("mcprt aacp %v: the usage error does not point to --help: %s", tc.args, errOut)
		}
	}
}
