package main

import (
	"testing"
)

// lookup20Full is a valid record for the lookup20 fixture with every
// property set.
const lookup20Full = `{"id":"u-1","name":"Ada Lovelace","email":"ada@example.org","age":36,"role":"dev","active":true,` +
	`"score":99.5,"tags":["math","engines"],"address":{"street":"1 Main St","city":"London","zip":"10115"},` +
	`"phone":"+44 20 1234","team":"core","manager":"babbage","level":7,"locale":"en","timezone":"Europe/London",` +
	`"created":"2026-01-01T00:00:00Z","notes":"first programmer","quota":10,"flags":[true,false],"project":"engine"}`

// TestLookup20ThroughTheBinary: in mode TEST the binary serves lookup20;
// valid arguments answer {ok: true, id}, and each way of breaking the
// schema is INVALID_ARGUMENT with a problem at the argument's path (the
// problems come from the reference validator whichever validator decided).
func TestLookup20ThroughTheBinary(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode)
	for _, args := range []string{lookup20Full, `{"id":"x","name":"N","email":"a@b","age":1.0,"role":"guest"}`,
		`{"id":"\u0078","name":"\ud83d\ude00","email":"a@b","age":0,"role":"ops","address":{"city":"B"}}`} {
		got, _ := c.success(c.send("lookup20", args)).(map[string]any)
		if got["ok"] != true || got["id"] == nil || len(got) != 2 {
			t.Errorf("lookup20 %s = %v, want {ok: true, id}", args, got)
		}
	}
	for _, row := range []struct{ name, args, path string }{
		{"missing role", `{"id":"x","name":"N","email":"a@b","age":1}`, ""},
		{"extra property", `{"id":"x","name":"N","email":"a@b","age":1,"role":"dev","x":1}`, "/x"},
		{"email pattern", `{"id":"x","name":"N","email":"ab","age":1,"role":"dev"}`, "/email"},
		{"age range", `{"id":"x","name":"N","email":"a@b","age":151,"role":"dev"}`, "/age"},
		{"zip pattern", `{"id":"x","name":"N","email":"a@b","age":1,"role":"dev","address":{"city":"B","zip":"1"}}`, "/address/zip"},
		{"flag type", `{"id":"x","name":"N","email":"a@b","age":1,"role":"dev","flags":[1]}`, "/flags/0"},
	} {
		e := c.toolError(c.send("lookup20", row.args), "INVALID_ARGUMENT")
		wantProblemAt(t, e, row.path)
	}
	c.ping()
	c.close()
}
