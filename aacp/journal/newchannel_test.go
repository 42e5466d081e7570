package journal

import (
	"context"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
)

// TestNewChannelVisibleToTheNextRead: a message appended by another
// process on a channel new to the receiver is passed by the receiver's
// very next Read, without a file notification or a poll tick (both are
// off here): the writer grows locks/channels.gen before the channel's
// first line, and Read lists the channels again when it grew.
func TestNewChannelVisibleToTheNextRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *FileStore {
		s, err := OpenFile(FileOptions{Dir: dir, Fsync: FsyncNever, PollInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	writer, reader := open(), open()
	inbox, err := reader.Inbox("bob")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inbox.Close() })
	in := inbox.(*fileInbox)
	if in.w != nil { // no notifications: only the generation file can tell
		in.w.close()
		in.w = nil
	}
	count := func() int {
		n := 0
		if err := in.Read(ctx, func(*envelope.Envelope) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("empty journal: read %d", n)
	}
	for i, sender := range []string{"alice", "carol"} {
		if _, err := writer.Append(ctx, env(sender, "bob", "m-"+sender)); err != nil {
			t.Fatal(err)
		}
		if n := count(); n != 1 {
			t.Fatalf("after the first message on channel %d (%s→bob) the next Read passed %d messages, want 1", i+1, sender, n)
		}
	}
}
