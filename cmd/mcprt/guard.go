package main

import (
	"fmt"
	"io"
)

// runGuard is `mcprt guard check ...`.
func runGuard(args []string, stdout, stderr io.Writer, environ []string) int {
	fmt.Fprintln(stderr, "mcprt guard: not yet available")
	return exitUsage
}
