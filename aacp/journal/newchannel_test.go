package journal

import (
	"fmt"
	"testing"
)

// A message this process appends into a channel that did not exist is
// seen by the receiver's next Read at once, not after a file notification
// or a poll tick (a receive right after a local send, or an ERROR_REPORT
// from the broker, was missed while the new channel went unnoticed).
// Many new channels in a row: one could be noticed in time by luck.
func TestAppendToNewChannelIsReadAtOnce(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		in, err := s.Inbox("rcv")
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		for i := range 50 {
			sender := fmt.Sprintf("snd%d", i)
			if _, err := s.Append(t.Context(), env(sender, "rcv", "m"+sender)); err != nil {
				t.Fatal(err)
			}
			got := readAll(t, in)
			if len(got) != 1 || got[0].Sender.AgentID != sender {
				t.Fatalf("read right after the first append from %s into a new channel: %d envelopes %v, want that one", sender, len(got), got)
			}
		}
	})
}
