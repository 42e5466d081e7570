package journal

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// Two stores on one directory (two processes, in effect) append to one
// channel in turns, across rotations: each notices the other's appends
// and rotations (each append looks at the path under the lock), so seq
// stays dense. A holder that dies half-way through its line leaves a torn
// tail the next writer cuts off.
func TestFileAppendsAcrossStores(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	a := openFile(t, dir, FileOptions{MaxSegmentBytes: 2048, Fsync: FsyncNever})
	defer a.Close()
	b := openFile(t, dir, FileOptions{MaxSegmentBytes: 2048, Fsync: FsyncNever})
	defer b.Close()
	r := rand.New(rand.NewPCG(9, 10))
	n := 0
	appendOne := func(s *FileStore) {
		t.Helper()
		n++
		seq, err := s.Append(ctx, env("x", "y", fmt.Sprint("m", n)))
		if err != nil || seq != uint64(n) {
			t.Fatalf("append %d: seq %d, %v", n, seq, err)
		}
	}
	for range 200 {
		if r.IntN(2) == 0 {
			appendOne(a)
		} else {
			appendOne(b)
		}
	}
	// A holder that dies mid-line leaves a torn tail.
	f, err := os.OpenFile(filepath.Join(dir, "channels", "x_to_y", activeName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":999,"version":"1.0.0","messageId":"torn`)
	f.Close()
	appendOne(a)
	appendOne(b)
	in, err := b.Inbox("y")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	got := readAll(t, in)
	if len(got) != n {
		t.Fatalf("read %d, want %d", len(got), n)
	}
	for i, e := range got {
		if e.Seq != uint64(i+1) || e.MessageID != fmt.Sprint("m", i+1) {
			t.Fatalf("line %d: seq %d id %s", i, e.Seq, e.MessageID)
		}
	}
	if segs, _ := listSealed(filepath.Join(dir, "channels", "x_to_y")); len(segs) < 5 {
		t.Errorf("%d sealed segments; the test wants many rotations", len(segs))
	}
	if _, err := os.Stat(filepath.Join(dir, "channels", "x_to_y", "messages.lock")); errors.Is(err, os.ErrNotExist) {
		t.Error("no lock file")
	}
}
