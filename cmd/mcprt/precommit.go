package main

// `mcprt hook install-precommit` and `uninstall-precommit`: a git
// pre-commit hook that runs `mcprt guard check --staged`.

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// precommitMarker is in every hook this command writes: uninstall removes
// only a hook that has it, and install replaces only such a hook.
const precommitMarker = "# mcprt pre-commit hook"

// chainedName is where install --force keeps a hook that was there
// before; ours runs it first.
const chainedName = "pre-commit.pre-mcprt"

const precommitUsage = `mcprt hook install-precommit — make git refuse commits that break the guard.

Usage:
  mcprt hook install-precommit [--force] [--data-dir DIR] [--session ID]
  mcprt hook uninstall-precommit

Writes the pre-commit hook of the git repository of the working directory.
It runs 'mcprt guard check --staged': a commit whose staged paths another
live agent has reserved exclusively, or that the guard policies forbid,
is refused with the holder or rule named. 'git commit --no-verify' skips
it, as for every git hook. The committing agent is MCPRT_AACP_AGENT_ID in
the environment of the commit.

  --force          replace a pre-commit hook mcprt did not write; it is
                   kept as pre-commit.pre-mcprt and runs first
  --data-dir DIR   the data directory the sessions share (default: the
                   installing environment's MCPRT_AACP_DATA_DIR, else
                   .mcprt at the repository root)
  --session ID     also apply the policies applied to this session

uninstall-precommit removes the hook only if mcprt wrote it, and puts a
kept hook back.
`

// runPrecommit installs or removes the git pre-commit hook.
func runPrecommit(args []string, stdout, stderr io.Writer, environ []string) int {
	fs := flag.NewFlagSet("mcprt hook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	force := fs.Bool("force", false, "")
	dataDir := fs.String("data-dir", lookupEnv(environ, "MCPRT_AACP_DATA_DIR"), "")
	sessionID := fs.String("session", "", "")
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "mcprt hook %s: %v\n", args[0], err)
		if code == exitUsage {
			fmt.Fprint(stderr, "Run 'mcprt hook install-precommit --help' for usage.\n")
		}
		return code
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, precommitUsage)
			return exitOK
		}
		return fail(exitUsage, err)
	}
	if fs.NArg() > 0 {
		return fail(exitUsage, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	hooks, err := hooksDir()
	if err != nil {
		return fail(exitFatal, err)
	}
	hook, kept := filepath.Join(hooks, "pre-commit"), filepath.Join(hooks, chainedName)
	old, err := os.ReadFile(hook)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail(exitFatal, err)
	}
	ours := exists && bytes.Contains(old, []byte(precommitMarker))
	if args[0] == "uninstall-precommit" {
		if !exists || !ours {
			if exists {
				return fail(exitFatal, fmt.Errorf("%s was not written by mcprt; it is left as it is", hook))
			}
			fmt.Fprintf(stdout, "no mcprt pre-commit hook in %s\n", hooks)
			return exitOK
		}
		if err := os.Remove(hook); err != nil {
			return fail(exitFatal, err)
		}
		if _, err := os.Stat(kept); err == nil {
			if err := os.Rename(kept, hook); err != nil {
				return fail(exitFatal, fmt.Errorf("restoring the earlier hook %s: %w", kept, err))
			}
			fmt.Fprintf(stdout, "removed the mcprt pre-commit hook; the earlier hook is back in %s\n", hook)
			return exitOK
		}
		fmt.Fprintf(stdout, "removed the mcprt pre-commit hook %s\n", hook)
		return exitOK
	}
	if exists && !ours {
		if !*force {
			return fail(exitFatal, fmt.Errorf("%s exists and was not written by mcprt; pass --force to keep it as %s and run it before the mcprt check", hook, chainedName))
		}
		if err := os.Rename(hook, kept); err != nil {
			return fail(exitFatal, err)
		}
	}
	script, err := hookScript(*dataDir, *sessionID)
	if err != nil {
		return fail(exitFatal, err)
	}
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		return fail(exitFatal, err)
	}
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		return fail(exitFatal, err)
	}
	if err := os.Chmod(hook, 0o755); err != nil {
		return fail(exitFatal, err)
	}
	fmt.Fprintf(stdout, "installed the mcprt pre-commit hook in %s (git commit --no-verify skips it)\n", hook)
	return exitOK
}

// hooksDir asks git where the hooks of the working directory's
// repository live (core.hooksPath honoured).
func hooksDir() (string, error) {
	cmd := exec.Command("git", "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("not in a git repository (git rev-parse: %v: %s); run it inside the repository", err, strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// hookScript is the hook: run a kept earlier hook, then the check with
// this mcprt binary (by absolute path, so the hook works without PATH).
func hookScript(dataDir, sessionID string) (string, error) {
	bin, err := os.Executable()
	if err != nil {
		bin = "mcprt"
	}
	cmd := []string{shellQuote(bin), "guard", "check", "--staged"}
	if dataDir != "" {
		abs, err := filepath.Abs(dataDir)
		if err != nil {
			return "", err
		}
		cmd = append(cmd, "--data-dir", shellQuote(abs))
	}
	if sessionID != "" {
		cmd = append(cmd, "--session", shellQuote(sessionID))
	}
	return "#!/bin/sh\n" + precommitMarker + " (mcprt hook install-precommit; remove with mcprt hook uninstall-precommit).\n" +
		"# Refuses a commit touching paths another live agent reserved, or that the guard policies forbid.\n" +
		"# git commit --no-verify skips it.\n" +
		"kept=\"$(dirname \"$0\")/" + chainedName + "\"\n" +
		"if [ -x \"$kept\" ]; then \"$kept\" \"$@\" || exit $?; fi\n" +
		"exec " + strings.Join(cmd, " ") + "\n", nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
