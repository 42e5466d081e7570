package journal

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
)

func randomText(r *rand.Rand) string {
	odd := []string{"", "x", `q"<&>`, "\u2028", "bad\xff", "tab\t", "é😀"}
	return odd[r.IntN(len(odd))]
}

func randomTime(r *rand.Rand) time.Time {
	switch r.IntN(5) {
	case 0:
		return time.Time{}
	case 1:
		return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	case 2:
		return time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 3600))
	case 3:
		return time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Unix(0, r.Int64()).UTC()
}

func randomRecord(r *rand.Rand) Record {
	var err *core.Error
	if r.IntN(6) == 0 {
		err = core.Errorf("E_X", "boom")
	}
	switch r.IntN(5) {
	case 0:
		var at *LineRef
		if r.IntN(2) == 0 {
			at = &LineRef{Receiver: randomText(r), Seq: r.Uint64N(3), MessageID: randomText(r)}
		}
		return RequestRec(RequestRecord{RequestID: randomText(r), Sender: randomText(r), Receivers: []string{randomText(r)}[:r.IntN(2)],
			Envelope: envelope.Envelope{MessageID: randomText(r), Payload: json.RawMessage(`{"a": 1}`), Metadata: envelope.Metadata{TTL: 5}},
			Outcome:  Outcome(randomText(r)), CreatedAt: randomTime(r), ExpiresAt: randomTime(r), Error: err, CompletionRef: randomText(r), PayloadAt: at})
	case 1:
		return MessageRec(MessageRecord{MessageID: randomText(r), RequestID: randomText(r), Sender: randomText(r), Receiver: randomText(r),
			Seq: r.Uint64N(3), State: State(randomText(r)), RetryCount: r.IntN(3), RetryBase: r.IntN(2), At: randomTime(r),
			SentAt: randomTime(r), AckDeadline: randomTime(r), NextRetryAt: randomTime(r), ExpiresAt: randomTime(r),
			AckStatus: randomText(r), Reason: randomText(r), Code: core.Code(randomText(r))})
	case 2:
		return OutcomeRec(OutcomeRecord{RequestID: randomText(r), Outcome: Outcome(randomText(r)), Error: err, CompletionRef: randomText(r)})
	case 3:
		return InboundRec(InboundRecord{Sender: randomText(r), RequestID: randomText(r), MessageID: randomText(r), Seq: r.Uint64N(3),
			Status: randomText(r), CanRetry: r.IntN(2) == 0, Reason: randomText(r), ErrorCode: randomText(r), At: randomTime(r), ExpiresAt: randomTime(r)})
	}
	return Record{Kind: randomText(r)}
}

// Records are written exactly as json.Marshal writes them, a request
// whose payload is in a channel line (PayloadAt) with its payload null.
func TestAppendRecordMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	elided := 0
	for i := 0; i < 20000; i++ {
		rec := randomRecord(r)
		marshalled := rec
		if q := rec.Request; q != nil && q.PayloadAt != nil {
			c := *q
			c.Envelope.Payload = nil
			marshalled.Request = &c
			elided++
		}
		want, werr := json.Marshal(marshalled)
		got, gerr := appendRecord(nil, rec)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%+v: errors differ: %v vs %v", rec, werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, append(want, '\n')) {
			t.Fatalf("appendRecord\n%s\nwant\n%s", got, want)
		}
		if q := rec.Request; q != nil && q.PayloadAt != nil && bytes.Contains(got, []byte(`"a":1`)) {
			t.Fatalf("a request with PayloadAt was written with its payload: %s", got)
		}
	}
	if elided == 0 {
		t.Fatal("no request with PayloadAt was generated")
	}
}
