package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
)

// BenchmarkMessageSearch100k fills a message index with 100,000 messages
// (a vocabulary of 2,000 words, 12 words each, over 50 threads) and then
// searches it; it reports p50 and p95 per search in milliseconds.
func BenchmarkMessageSearch100k(b *testing.B) {
	ctx := context.Background()
	db, err := New(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	x := NewMessageIndex(db)
	words := make([]string, 2000)
	for i := range words {
		words[i] = fmt.Sprintf("w%dx", i*7919%100003)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := fixtureSize(100_000)
	batch := make([]*envelope.Envelope, 0, 1000)
	for i := range n {
		text := ""
		for j := range 12 {
			text += words[(i*31+j*17)%len(words)] + " "
		}
		p, _ := json.Marshal(map[string]string{"subject": "item " + words[i%len(words)], "text": text})
		batch = append(batch, &envelope.Envelope{Seq: uint64(i + 1), Version: envelope.Version, MessageID: fmt.Sprintf("m%d", i),
			RequestID: fmt.Sprintf("r%d", i), CorrelationID: fmt.Sprintf("t%d", i%50), Timestamp: envelope.FormatTime(t0.Add(time.Duration(i) * time.Second)),
			Sender: envelope.Agent{AgentID: "a", Type: envelope.Manager}, Receiver: envelope.Agent{AgentID: "b", Type: envelope.Implementation},
			MessageType: "CUSTOM_NOTE", Priority: envelope.Normal, Payload: p, Metadata: envelope.Metadata{TTL: 86400}})
		if len(batch) == cap(batch) {
			if err := x.Index(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		q := MessageQuery{Query: words[i%len(words)] + " " + words[(i*13+5)%len(words)], Limit: 20}
		if i%3 == 0 {
			q.AgentID = "b"
		}
		start := time.Now()
		if _, err := x.Search(ctx, q); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
}
