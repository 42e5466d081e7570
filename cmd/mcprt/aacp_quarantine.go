package main

// mcprt aacp quarantine: the damaged channel lines that readers refused.

import (
	"context"
	"fmt"

	"github.com/mcprt/mcprt/aacp/journal"
)

// quarantine lists the lines readers set aside (quarantine/lines.ndjson
// in the data directory), oldest first.
func (c *aacpCmd) quarantine(ctx context.Context) error {
	fs, ok := c.store.(*journal.FileStore)
	if !ok {
		return fmt.Errorf("quarantine lists damaged lines of the files backend's channel files; aacp.backend=nats keeps messages in JetStream, which has none")
	}
	all, err := fs.Quarantined(ctx)
	if err != nil {
		return err
	}
	out := struct {
		Lines []journal.QuarantinedLine `json:"lines"`
	}{append([]journal.QuarantinedLine{}, all...)}
	var rows [][]string
	for _, q := range all {
		seq := ""
		if q.Seq > 0 {
			seq = fmt.Sprint(q.Seq)
		}
		rows = append(rows, []string{stamp(q.At), q.Channel, q.File, fmt.Sprint(q.Offset), seq, printable(q.Reason)})
	}
	if !c.json {
		fmt.Fprintf(c.stdout, "%d quarantined line(s) (copies in %s/quarantine/lines.ndjson; the originals stay in place, skipped)\n", len(all), fs.Dir())
	}
	return c.emit(out, []string{"FOUND", "CHANNEL", "FILE", "OFFSET", "SEQ", "REASON"}, rows)
}
