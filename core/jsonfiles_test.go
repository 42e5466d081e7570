//go:build unix

package core

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestJSONFilesRule(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.json", "a.json", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"sub.json", "real"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("real", filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	got, err := JSONFiles(dir)
	want := []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("JSONFiles = %v, %v; want %v", got, err, want)
	}
	if got, err := JSONFiles(filepath.Join(dir, "missing")); err != nil || got != nil {
		t.Fatalf("a missing directory: %v, %v; want none", got, err)
	}
	fifo := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{"JSONFiles": second(JSONFiles(dir)), "ReadRegularFile": second(ReadRegularFile(fifo, 10))} {
		if e := AsError(err); e == nil || e.Code != CodeInvalidArgument || !strings.Contains(e.Message, fifo) || !strings.Contains(e.Message, "named pipe") {
			t.Errorf("%s with a FIFO: %v; want INVALID_ARGUMENT naming it", name, err)
		}
	}
	if _, err := ReadRegularFile(filepath.Join(dir, "a.json"), 1); err == nil || !strings.Contains(err.Error(), "limit of 1 bytes") {
		t.Errorf("ReadRegularFile over the limit: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }
