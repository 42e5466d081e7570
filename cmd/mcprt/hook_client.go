package main

import (
	"fmt"
	"io"
)

// runClientHook is the hook an AI client runs (Claude Code, Gemini CLI, Codex).
func runClientHook(args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	fmt.Fprintln(stderr, "mcprt hook: not yet available")
	return exitUsage
}
