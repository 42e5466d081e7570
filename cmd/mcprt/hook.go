package main

import "io"

// runHook is `mcprt hook ...`: the git pre-commit hook's installer
// (precommit.go) and the AI clients' hooks (hook_client.go).
func runHook(args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "install-precommit", "uninstall-precommit":
			return runPrecommit(args, stdout, stderr, environ)
		}
	}
	return runClientHook(args, stdin, stdout, stderr, environ)
}
