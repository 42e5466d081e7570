package main

import (
	"fmt"
	"io"
)

// runUI is `mcprt ui`: the console alone over a data directory.
func runUI(args []string, stdout, stderr io.Writer, environ []string) int {
	fmt.Fprintln(stderr, "mcprt ui: not yet available")
	return exitUsage
}
