package main

// `mcprt guard check`: the guard_check rules for git hooks and scripts —
// changed paths against the guard policies (of a session, or one named)
// and against other agents' exclusive file reservations.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/domain/guard"
	"github.com/mcprt/mcprt/tools/domain"
	"github.com/mcprt/mcprt/tools/messaging"
)

const guardUsage = `mcprt guard — check changed paths before they are committed.

Usage:
  mcprt guard check [flags] [PATHS...]

Checks each path (relative to the project root) against the guard
policies — those applied to --session, and --policy; with neither, the
"default" policy — and against other agents' exclusive file
reservations. Prints every violation; exit 1 when there is one.

Flags (before or after the paths):
  --staged         also check the paths staged in git (git diff --cached)
  --session ID     apply the policies applied to this session (guard_apply)
  --policy ID      apply this policy too
  --agent ID       your agent id: your own reservations do not block you
                   (default: MCPRT_AACP_AGENT_ID)
  --data-dir DIR   the data directory (default: aacp.dataDir from --config,
                   MCPRT_CONFIG or MCPRT_AACP_DATA_DIR, else .mcprt)
  --config FILE    the configuration file

Exit codes: 0 no violation, 1 violations, 2 bad usage or the check could
not run, 78 invalid configuration.
`

// runGuard is `mcprt guard check ...`.
func runGuard(args []string, stdout, stderr io.Writer, environ []string) int {
	fs := flag.NewFlagSet("mcprt guard", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	staged := fs.Bool("staged", false, "")
	sessionID := fs.String("session", "", "")
	policyID := fs.String("policy", "", "")
	agentID := fs.String("agent", lookupEnv(environ, "MCPRT_AACP_AGENT_ID"), "")
	dataDir := fs.String("data-dir", "", "")
	configPath := fs.String("config", lookupEnv(environ, "MCPRT_CONFIG"), "")
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "mcprt guard: %v\n", err)
		if code == exitUsage {
			fmt.Fprint(stderr, "Run 'mcprt guard --help' for usage.\n")
		}
		return code
	}
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, guardUsage)
				return exitOK
			}
			return fail(exitUsage, err)
		}
		if rest = fs.Args(); len(rest) == 0 {
			break
		}
		pos, rest = append(pos, rest[0]), rest[1:]
	}
	if len(pos) == 0 || pos[0] != "check" {
		return fail(exitUsage, errors.New("want the command check: mcprt guard check [--staged] [PATHS...]"))
	}
	paths := pos[1:]
	if *staged {
		s, err := stagedPaths()
		if err != nil {
			return fail(exitUsage, err)
		}
		paths = append(paths, s...)
	}
	if len(paths) == 0 {
		fmt.Fprintln(stdout, "mcprt guard: no changed paths to check")
		return exitOK
	}
	all, err := config.Load(*configPath, environ, version)
	cfg, dom := all.Base, all.Domain
	if err != nil {
		return fail(exitConfig, err)
	}
	if *dataDir != "" {
		cfg.AACP.DataDir = *dataDir
	}
	d, err := domain.New(domain.Options{Config: dom, Base: cfg})
	if err != nil {
		return fail(exitConfig, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer d.Close(ctx)
	// Presence only: the check never registers an agent.
	m, err := messaging.New(messaging.Options{Config: cfg.AACP})
	if err != nil {
		return fail(exitConfig, err)
	}
	defer m.Close()
	d.ConnectMessaging(m)
	res, err := d.CheckPaths(ctx, *policyID, *sessionID, *agentID, paths)
	if err != nil {
		return fail(exitUsage, err)
	}
	printGuard(stdout, res, *agentID)
	if !res.Passed {
		fmt.Fprintln(stderr, "mcprt guard: refused. Resolve the violations above (git commit --no-verify skips this check).")
		return exitFatal
	}
	return exitOK
}

// printGuard prints a result for people: one line per violation, then the
// summary.
func printGuard(w io.Writer, r guard.Result, agentID string) {
	for _, g := range r.Gates {
		for _, v := range g.Violations {
			where := g.Gate
			if g.PolicyID != "" {
				where += " of policy " + g.PolicyID
			}
			fmt.Fprintf(w, "  ✗ %s [%s]: %s\n", v.Type, where, v.Message)
		}
	}
	who := ""
	if agentID == "" {
		who = " (no agent id: every live agent's exclusive reservation counts; set MCPRT_AACP_AGENT_ID or --agent)"
	}
	fmt.Fprintf(w, "mcprt guard: %s%s\n", r.Summary, who)
}

// stagedPaths lists the paths staged in the git repository of the
// working directory.
func stagedPaths() ([]string, error) {
	cmd := exec.Command("git", "diff", "--cached", "--name-only", "-z")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("--staged: git diff --cached failed (%v): %s; run it inside a git repository", err, strings.TrimSpace(errOut.String()))
	}
	var paths []string
	for p := range strings.SplitSeq(out.String(), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}
