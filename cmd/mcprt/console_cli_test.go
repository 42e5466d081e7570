package main

import (
	"bytes"
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// runUICommand runs `mcprt ui ARGS` that must end by itself (bad usage,
// no data directory) and returns its stderr and exit code.
func runUICommand(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	bin := wiretest.Build(t) // outside the run's limit: building is not what is measured
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"ui"}, args...)...)
	cmd.Env = wiretest.CleanEnv(env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run mcprt ui %v: %v", args, err)
	}
	if args[0] != "--help" && out.Len() > 0 {
		t.Errorf("mcprt ui %v wrote to stdout: %q", args, out.String())
	}
	return errOut.String(), code
}

func TestConsoleUICommandErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		env  []string
		code int
		want string
	}{
		{[]string{"--help"}, nil, exitOK, ""},
		{[]string{"extra"}, nil, exitUsage, `unexpected argument "extra"`},
		{[]string{"--bogus"}, nil, exitUsage, "bogus"},
		{[]string{"--addr", "nonsense"}, nil, exitUsage, "host:port"},
		{[]string{"--data-dir", dir + "/missing"}, nil, exitFatal, "pass --data-dir"},
		{[]string{"--data-dir", dir}, []string{"MCPRT_CONSOLE_PAGE_SIZE=1"}, exitConfig, "console.pageSize"},
		{[]string{"--data-dir", dir}, []string{"MCPRT_CONSOLE_HUMAN_AGENT_TYPE=Boss"}, exitConfig, "console.humanAgentType"},
		{[]string{"--data-dir", dir}, []string{"MCPRT_TRANSPORT_HTTP_AUTH_TOKEN_ENV_VAR=MCPRT_UNSET_TOKEN"}, exitConfig, "MCPRT_UNSET_TOKEN"},
	} {
		stderr, code := runUICommand(t, tc.env, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("mcprt ui %v %v: exit %d (want %d), stderr %q lacks %q", tc.env, tc.args, code, tc.code, stderr, tc.want)
		}
	}
}

// TestConsoleConfigKeys: the console's variables are known to every
// command (an unknown MCPRT_* variable is fatal), and console.enabled
// false leaves /ui/ unserved.
func TestConsoleConfigKeys(t *testing.T) {
	dir := t.TempDir()
	env := []string{"MCPRT_AACP_DATA_DIR=" + dir, "MCPRT_CONSOLE_PAGE_SIZE=10", "MCPRT_CONSOLE_HUMAN_AGENT_ID=boss"}
	if _, stderr, code := runOperator(t, env, "agents"); code != exitOK {
		t.Errorf("mcprt aacp with MCPRT_CONSOLE_* set: exit %d\n%s", code, stderr)
	}
	_, mcpURL := startHTTPServer(t, wiretest.Build(t), "", "MCPRT_AACP_DATA_DIR="+dir, "MCPRT_CONSOLE_ENABLED=false")
	resp, err := http.Get(strings.TrimSuffix(mcpURL, "/mcp") + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/ui/ with console.enabled false: %d, want 404", resp.StatusCode)
	}
}
