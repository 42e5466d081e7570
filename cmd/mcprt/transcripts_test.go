package main

// The testdata/transcripts played through the binary.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// --- transcripts -------------------------------------------------------------

// TestTranscripts plays every testdata/transcripts/*.txt through the binary.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			script := string(b)
			p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Env: wiretest.ScriptEnv(script)})
			wiretest.Run(t, p, script)
			if !p.Exited() {
				finish(t, p)
			} else {
				checkLogs(t, p)
			}
		})
	}
}
