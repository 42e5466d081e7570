package journal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/aacp/envelope"
)

// A durable mark vouches only for the file it names, and anything that
// does not verify (torn, zeroed, short, altered, an empty lock file of an
// older build) vouches for nothing.
func TestDurableMarkCodec(t *testing.T) {
	id := [2]uint64{2049, 1234567}
	var good [markSize]byte
	encodeMark(&good, id, 4096)
	flip := func(i int) []byte { b := good; b[i] ^= 1; return b[:] }
	half := good
	copy(half[16:], make([]byte, 16)) // a read torn by a concurrent write
	for _, tc := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"as written", good[:], true},
		{"empty lock file", nil, false},
		{"short", good[:markSize-1], false},
		{"zeros", make([]byte, markSize), false},
		{"torn", half[:], false},
		{"device altered", flip(0), false},
		{"inode altered", flip(8), false},
		{"end altered", flip(16), false},
		{"check altered", flip(24), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotID, end, ok := decodeMark(tc.b)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if ok && (gotID != id || end != 4096) {
				t.Fatalf("decoded (%v, %d), want (%v, 4096)", gotID, end, id)
			}
		})
	}
	lock := filepath.Join(t.TempDir(), "messages.lock")
	f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	writeMark(f, id, 4096)
	if got := readMark(f, id); got != 4096 {
		t.Fatalf("readMark of the named file = %d, want 4096", got)
	}
	if got := readMark(f, [2]uint64{2049, 7}); got != 0 {
		t.Fatalf("readMark of another file = %d, want 0", got)
	}
	writeMark(f, [2]uint64{}, 4096) // no identity: never vouch
	if got := readMark(f, id); got != 4096 {
		t.Fatalf("a mark without identity replaced the mark: readMark = %d", got)
	}
}

// fsyncCounter counts the fsyncs of active segments made through hooks.
type fsyncCounter struct {
	mu sync.Mutex
	n  int
}

func (c *fsyncCounter) hooks() *ioHooks {
	return &ioHooks{sync: func(f *os.File) error {
		if strings.HasSuffix(f.Name(), activeName) {
			c.mu.Lock()
			c.n++
			c.mu.Unlock()
		}
		return f.Sync()
	}}
}

func (c *fsyncCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// readIDs reads what in has now and returns the messageIds passed.
func readIDs(t *testing.T, in Inbox) []string {
	t.Helper()
	var ids []string
	if err := in.Read(context.Background(), func(e *envelope.Envelope) error {
		ids = append(ids, e.MessageID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// Under fsync=always a reader in another process (another store on the
// directory) passes lines that their writer has fsynced, as its durable
// mark says, without an fsync of its own; lines the mark does not cover
// (written by a writer that was killed before its fsync, or behind a
// mark that names another file) it fsyncs itself before passing them.
func TestReaderTrustsTheDurableMark(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	w := openFile(t, dir, FileOptions{Fsync: FsyncAlways})
	defer w.Close()
	r := openFile(t, dir, FileOptions{Fsync: FsyncAlways})
	defer r.Close()
	var rc fsyncCounter
	r.setHooks(rc.hooks())
	in, err := r.Inbox("y")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()

	for _, id := range []string{"m1", "m2"} {
		if _, err := w.Append(ctx, env("x", "y", id)); err != nil {
			t.Fatal(err)
		}
	}
	if got := readIDs(t, in); strings.Join(got, ",") != "m1,m2" {
		t.Fatalf("passed %v, want m1,m2", got)
	}
	if n := rc.count(); n != 0 {
		t.Fatalf("the reader fsynced %d times lines their writer had fsynced and marked", n)
	}

	// A line written but never fsynced by its writer (killed before its
	// fsync): beyond the mark, so the reader makes it durable itself.
	active := filepath.Join(dir, "channels", envelope.Channel("x", "y"), activeName)
	line, err := envelope.AppendJSON(nil, env("x", "y", "m3"))
	if err != nil {
		t.Fatal(err)
	}
	line = append([]byte(`{"seq":3,`), append(line[len(`{"seq":0,`):], '\n')...)
	appendRaw(t, active, line)
	if got := readIDs(t, in); strings.Join(got, ",") != "m3" {
		t.Fatalf("passed %v, want m3", got)
	}
	if n := rc.count(); n != 1 {
		t.Fatalf("the reader fsynced %d times before passing an unmarked line, want 1", n)
	}

	// A mark that names another file vouches for nothing here.
	lock, err := os.OpenFile(lockPathFor(active), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	writeMark(lock, [2]uint64{1, 1}, 1<<40)
	if _, err := w.Append(ctx, env("x", "y", "m4")); err != nil {
		t.Fatal(err)
	}
	writeMark(lock, [2]uint64{1, 1}, 1<<40) // after the writer's own mark
	if got := readIDs(t, in); strings.Join(got, ",") != "m4" {
		t.Fatalf("passed %v, want m4", got)
	}
	if n := rc.count(); n != 2 {
		t.Fatalf("the reader fsynced %d times in all, want 2: a mark of another file must not vouch", n)
	}
}

// Whoever creates an active segment (the first append, a rotation)
// writes the mark (its inode, 0) before the segment holds a byte, so a
// mark left by an earlier file with the same inode number never vouches
// for the new one.
func TestNewSegmentResetsTheMark(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openFile(t, dir, FileOptions{Fsync: FsyncAlways, MaxSegmentBytes: 600})
	defer s.Close()
	active := filepath.Join(dir, "channels", envelope.Channel("x", "y"), activeName)
	var checked, empty int
	var failures []string
	s.setHooks(&ioHooks{beforeWrite: func(path string) error {
		if path != active {
			return nil
		}
		fi, err := os.Stat(active)
		if err != nil {
			failures = append(failures, err.Error())
			return nil
		}
		if fi.Size() != 0 {
			return nil
		}
		empty++
		b, err := os.ReadFile(lockPathFor(active))
		if err != nil {
			failures = append(failures, err.Error())
			return nil
		}
		id, end, ok := decodeMark(b)
		if !ok || id != inode(fi) || end != 0 {
			failures = append(failures, "an empty new segment is not marked (its inode, 0)")
		}
		checked++
		return nil
	}})
	for i := range 6 { // ~300-byte lines: rotations on the way
		if _, err := s.Append(ctx, env("x", "y", "m"+string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	if len(failures) > 0 {
		t.Fatal(failures)
	}
	segs, err := listSealed(filepath.Dir(active))
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) < 2 || checked != len(segs)+1 || empty != checked {
		t.Fatalf("%d sealed segments, %d new segments checked; want ≥ 2 rotations, each new segment checked", len(segs), checked)
	}
}

func appendRaw(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// A one-shot reader (mcprt aacp inbox) of lines that no writer marked
// (an older build's, a writer under another policy, or one killed before
// its fsync) fsyncs them itself and passes them in its first Read.
func TestOneShotReaderOfAnUnmarkedSegment(t *testing.T) {
	dir := t.TempDir()
	w := openFile(t, dir, FileOptions{Fsync: FsyncNever}) // writes, never marks
	defer w.Close()
	for _, id := range []string{"m1", "m2"} {
		if _, err := w.Append(context.Background(), env("x", "y", id)); err != nil {
			t.Fatal(err)
		}
	}
	r := openFile(t, dir, FileOptions{Fsync: FsyncAlways})
	defer r.Close()
	var rc fsyncCounter
	r.setHooks(rc.hooks())
	in, err := r.Inbox("y")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if got := readIDs(t, in); strings.Join(got, ",") != "m1,m2" {
		t.Fatalf("one Read passed %v, want m1,m2", got)
	}
	if n := rc.count(); n != 1 {
		t.Fatalf("the reader fsynced %d times, want 1", n)
	}
}
