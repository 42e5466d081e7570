package main

import (
	"fmt"
	"io"
)

// runPrecommit installs or removes the git pre-commit hook.
func runPrecommit(args []string, stdout, stderr io.Writer, environ []string) int {
	fmt.Fprintln(stderr, "mcprt hook: not yet available")
	return exitUsage
}
