package envelope

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

var oddStrings = []string{"", "plain", `q"uote`, `back\slash`, "<html>&amp;", "tab\tnl\nret\rbs\bff\f", "\x00\x01\x1f\x7f",
	"é ü ∑ 😀", "\u2028\u2029", "bad \xff utf8 \xe2\x80", "mixed <\u2028> \xc3", "/slash/"}

func randomString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return oddStrings[r.IntN(len(oddStrings))]
	}
	b := make([]byte, r.IntN(12))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return string(b)
}

var payloads = []string{`{}`, `{"a":1}`, ` { "a" : [ 1 , 2 ] , "b" : "x y" } `, `{"h":"<b>&</b>"}`, "{\"l\":\"\u2028\"}",
	`{"e":"\u003c"}`, `{"n":null,"t":true,"f":false,"x":-1.5e3}`, ""}

func randomEnvelope(r *rand.Rand) Envelope {
	e := Envelope{Seq: r.Uint64N(1000), Version: randomString(r), MessageID: randomString(r), RequestID: randomString(r),
		Timestamp: randomString(r), Sender: Agent{AgentID: randomString(r), Type: AgentType(randomString(r))},
		Receiver: Agent{AgentID: randomString(r), Type: AgentType(randomString(r))}, MessageType: randomString(r),
		Priority: Priority(randomString(r)), Payload: json.RawMessage(payloads[r.IntN(len(payloads))]),
		Metadata: Metadata{RetryCount: r.IntN(5), TTL: r.Int64N(3) * 60}}
	if r.IntN(2) == 0 {
		e.Ack = r.Uint64N(10)
		e.CorrelationID = randomString(r)
	}
	for range r.IntN(3) {
		e.Metadata.Tags = append(e.Metadata.Tags, randomString(r))
	}
	if r.IntN(5) == 0 {
		e.Metadata.Tags = []string{}
	}
	return e
}

// AppendJSON writes exactly what json.Marshal writes.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20000; i++ {
		e := randomEnvelope(r)
		want, werr := json.Marshal(&e)
		got, gerr := AppendJSON(nil, &e)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%+v: errors differ: %v vs %v", e, werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON\n%s\nwant\n%s", got, want)
		}
	}
	if _, err := AppendJSON(nil, &Envelope{Payload: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("AppendJSON accepted an invalid payload")
	}
}
