package journal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/diskerr"
)

// With fsync=always, a transmission is never visible to a receiver
// before it is durable: while the writer's fsync is held, a reader (of
// this store or of another one on the same directory, as another process
// would be) does not pass the line; once the fsync finishes it does.
func TestAppendVisibleOnlyOnceDurable(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("sameStore=%v", shared), func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			entered := make(chan string, 16)
			release := make(chan struct{})
			var hold sync.Once
			var holding bool
			hooks := &ioHooks{sync: func(f *os.File) error {
				if strings.HasSuffix(f.Name(), activeName) {
					hold.Do(func() { holding = true })
					entered <- f.Name()
					<-release
				}
				return f.Sync()
			}}
			w := openFile(t, dir, FileOptions{Fsync: FsyncAlways})
			defer w.Close()
			w.setHooks(hooks)
			r := w
			if !shared {
				r = openFile(t, dir, FileOptions{Fsync: FsyncAlways})
				defer r.Close()
				r.setHooks(hooks)
			}
			in, err := r.Inbox("y")
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			appended := make(chan error, 1)
			go func() {
				_, err := w.Append(ctx, env("x", "y", "m1"))
				appended <- err
			}()
			<-entered // the writer is in its fsync: the line is written, not durable
			if !holding {
				t.Fatal("the hook did not hold the writer")
			}
			got := make(chan string, 1)
			readErr := make(chan error, 1)
			go func() {
				readErr <- in.Read(ctx, func(e *envelope.Envelope) error { got <- e.MessageID; return nil })
			}()
			select {
			case id := <-got:
				t.Fatalf("%s was passed to the receiver before its fsync finished", id)
			case <-entered: // the reader waits for durability too
			case err := <-readErr:
				// Nothing passed, nothing failed: the line was not seen.
				if err != nil {
					t.Fatal(err)
				}
				if len(got) > 0 {
					t.Fatal("passed before durable")
				}
			}
			close(release)
			if err := <-appended; err != nil {
				t.Fatal(err)
			}
			deadline := time.After(10 * time.Second)
			for {
				select {
				case id := <-got:
					if id != "m1" {
						t.Fatalf("got %s", id)
					}
					// The Read that passed it returns before the deferred
					// Close: an Inbox is not closed under a running Read.
					if err := <-readErr; err != nil {
						t.Fatal(err)
					}
					return
				case err := <-readErr:
					if err != nil {
						t.Fatal(err)
					}
					go func() {
						readErr <- in.Read(ctx, func(e *envelope.Envelope) error { got <- e.MessageID; return nil })
					}()
				case <-deadline:
					t.Fatal("the durable line was never passed")
				}
			}
		})
	}
}

// Write failures injected through the persistence hooks are storage
// errors of the call (retryable where space can return), cost no seq and
// leave the channel appendable once the fault is gone.
func TestAppendWriteFaults(t *testing.T) {
	for _, tc := range []struct {
		errno     syscall.Errno
		code      core.Code
		retryable bool
	}{
		{syscall.ENOSPC, diskerr.CodeFull, true},
		{syscall.EDQUOT, diskerr.CodeFull, true},
		{syscall.EFBIG, diskerr.CodeFull, true},
		{syscall.EIO, diskerr.CodeIO, true},
		{syscall.EROFS, diskerr.CodeReadOnly, false},
	} {
		t.Run(tc.errno.Error(), func(t *testing.T) {
			ctx := context.Background()
			s := openFile(t, t.TempDir(), FileOptions{Fsync: FsyncAlways})
			defer s.Close()
			var fail error
			s.setHooks(&ioHooks{beforeWrite: func(string) error { return fail }})
			if seq, err := s.Append(ctx, env("x", "y", "m1")); err != nil || seq != 1 {
				t.Fatalf("append: %d %v", seq, err)
			}
			fail = tc.errno
			_, err := s.Append(ctx, env("x", "y", "m2"))
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Code != tc.code || ce.Retryable != tc.retryable || !errors.Is(err, tc.errno) {
				t.Fatalf("append under %v: %v, want %s retryable %v", tc.errno, err, tc.code, tc.retryable)
			}
			if err := s.PutAgent(ctx, AgentRecord{AgentID: "z"}); !errors.As(err, &ce) || ce.Code != tc.code {
				t.Fatalf("registry write under %v: %v", tc.errno, err)
			}
			fail = nil
			if seq, err := s.Append(ctx, env("x", "y", "m3")); err != nil || seq != 2 {
				t.Fatalf("append after the fault: %d %v, want seq 2", seq, err)
			}
		})
	}
}

// A channel whose directory was removed refuses appends (STORAGE_GONE)
// rather than writing into an unlinked file.
func TestAppendIntoRemovedChannel(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openFile(t, dir, FileOptions{Fsync: FsyncNever})
	defer s.Close()
	if _, err := s.Append(ctx, env("x", "y", "m1")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "channels")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Append(ctx, env("x", "y", "m2"))
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != diskerr.CodeGone {
		t.Fatalf("append into a removed channel: %v, want STORAGE_GONE", err)
	}
}
