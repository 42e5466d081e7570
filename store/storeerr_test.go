package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/internal/diskerr"
)

// A database file removed or replaced under an open DB is never written
// into: the write fails STORAGE_GONE and nothing is acknowledged.
func TestWriteRefusedWhenTheFileIsGone(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, path string)
	}{
		{"removed", func(t *testing.T, path string) {
			if err := os.RemoveAll(filepath.Dir(path)); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced", func(t *testing.T, path string) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, _ := newDB(t)
			putMem(t, db, "ns", "a")
			tc.do(t, db.Path())
			svc := memory.NewService(db.Memory(), nil)
			_, _, err := svc.Put(testCtx(t), "ns", "b", []byte(`1`))
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Code != diskerr.CodeGone || ce.Retryable {
				t.Fatalf("write after the file was %s: %v, want STORAGE_GONE", tc.name, err)
			}
		})
	}
}
