package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/domain/trace"
)

// benchMessages and benchEvents are the sizes the render budget (20 ms
// p95 per page) is measured at.
const (
	benchMessages = 100_000
	benchEvents   = 100_000
	benchAgents   = 10
)

// benchConsole fills a data directory with benchMessages messages among
// benchAgents agents and benchEvents trace events, and returns a console
// over it with a signed-in cookie.
func benchConsole(b *testing.B) (*Console, *http.Cookie, string) {
	b.Helper()
	dir := b.TempDir()
	ctx := context.Background()
	st, err := journal.OpenFile(journal.FileOptions{Dir: dir, Fsync: journal.FsyncNever})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	agent := func(i int) string { return "agent-" + strconv.Itoa(i%benchAgents) }
	for i := range benchAgents {
		if err := st.PutAgent(ctx, journal.AgentRecord{AgentID: agent(i), Type: envelope.Implementation, ProtocolVersion: "1.0.0", RegisteredAt: now}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range benchMessages {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		env := &envelope.Envelope{Version: "1.0.0", MessageID: id, RequestID: id, Timestamp: envelope.FormatTime(now.Add(time.Duration(i-benchMessages) * time.Second)),
			Sender: envelope.Agent{AgentID: agent(i), Type: envelope.Implementation}, Receiver: envelope.Agent{AgentID: agent(i + 1 + i%3), Type: envelope.Implementation},
			MessageType: "CUSTOM_NOTE", Priority: envelope.Normal, Payload: json.RawMessage(`{"note":"message ` + strconv.Itoa(i) + `"}`),
			Metadata: envelope.Metadata{TTL: 86400 * 365}}
		if _, err := st.Append(ctx, env); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	c, err := New(Options{DataDir: dir, StoreDir: dir + "/store", PoliciesDir: dir + "/policies"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	var traceID string
	for batch := range benchEvents / 1000 {
		evs := make([]trace.Event, 0, 1000)
		for i := range 1000 {
			n := batch*1000 + i
			tid := fmt.Sprintf("11111111-0000-4000-8000-%012d", n/4)
			corr := tid
			if n%4 != 0 {
				corr = tid + "/step" + strconv.Itoa(n%4)
			}
			evs = append(evs, trace.Event{RunID: fmt.Sprintf("22222222-0000-4000-8000-%012d", n), TraceID: tid, CorrelationID: corr,
				Tool: "memory_store", Start: now.Add(time.Duration(n-benchEvents) * 30 * time.Millisecond), Duration: time.Millisecond,
				Outcome: "success", Success: n%50 != 0, ServerID: "bench"})
			traceID = tid
		}
		if err := c.db.Traces().Append(ctx, evs); err != nil {
			b.Fatal(err)
		}
	}
	sid := c.sessions.create(c.clock.Now())
	return c, &http.Cookie{Name: cookieName, Value: sid}, traceID
}

// BenchmarkPages renders each page over 100k messages and 100k trace
// events and reports the 95th percentile of the render time (ms-p95).
// The first render after a change reads the journal; the figures are of
// the renders between changes, which is what a person browsing sees.
func BenchmarkPages(b *testing.B) {
	c, cookie, traceID := benchConsole(b)
	for _, path := range []string{"", "messages", "messages?agent=agent-3&state=open", "messages?page=40", "traces",
		"traces/" + traceID, "memory", "sessions", "guard", "compose"} {
		b.Run(fmt.Sprintf("page=/ui/%s", path), func(b *testing.B) {
			render := func() time.Duration {
				req := httptest.NewRequest(http.MethodGet, "http://localhost/ui/"+path, nil)
				req.AddCookie(cookie)
				w := httptest.NewRecorder()
				start := time.Now()
				c.ServeHTTP(w, req)
				d := time.Since(start)
				if w.Code != http.StatusOK {
					b.Fatalf("GET /ui/%s: %d %s", path, w.Code, w.Body.String())
				}
				if w.Body.Len() > 100<<10 {
					b.Fatalf("GET /ui/%s: %d bytes, over 100 KB", path, w.Body.Len())
				}
				return d
			}
			render() // the cold read
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				times = append(times, render())
			}
			b.StopTimer()
			slices.Sort(times)
			p95 := times[(len(times)*95+99)/100-1]
			b.ReportMetric(float64(p95)/float64(time.Millisecond), "ms-p95")
		})
	}
}
