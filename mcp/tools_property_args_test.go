package mcp

// Property 3: handlers see only objects, exactly as sent, without _meta.

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/core"
)

// ---------------------------------------------------------------------------
// 3. Handlers only ever see objects, exactly as sent, without _meta.

const (
	tpArgsSeed  = 7003
	tpArgsCalls = 2500
	tpArgsLimit = 2048
	tpMarker    = "MARKER-of-meta"
)

// tpArgsCall is one generated tools/call.
type tpArgsCall struct {
	params string // raw params text, "" for none
	want   string // "handler", "-32602", "-32600", NOT_FOUND, RESOURCE_EXHAUSTED
	args   string // what the handler must see
	cid    string // the client's correlation id, "" when it sent none readable
}

// tpMember is one member of a generated params object.
type tpMember struct{ key, value string }

func tpArgsGen(ac *tpArgsCall, c *propRand) {
	*ac = tpArgsCall{want: "handler"}
	switch c.Intn(25) {
	case 0: // no params: no name
		ac.want = "-32602"
		return
	case 1: // params neither object nor array: the envelope is invalid
		ac.params, ac.want = []string{"null", "1", `"rec"`, "true", "-0.5"}[c.Intn(5)], "-32600"
		return
	case 2: // params an array
		ac.params, ac.want = "["+tpWS(c)+`"rec"`+tpWS(c)+","+tpWS(c)+"{}"+tpWS(c)+"]", "-32602"
		return
	}
	var members []tpMember
	bad, missing, oversize := false, false, false
	name := ""
	switch r := c.Intn(20); {
	case r < 13:
		name = `"rec"`
	case r < 15:
		name = []string{`"r\u0065c"`, `"\u0072ec"`}[c.Intn(2)] // still rec
	case r < 17:
		name = quoteString([]string{"nope", "Rec", "rec ", "REC", "rec2"}[c.Intn(5)])
		ac.want = string(core.CodeNotFound)
	case r < 19:
		name, bad = tpNonObject(c), true
		if name[0] == '"' { // a string after all: an unknown tool
			bad, ac.want = false, string(core.CodeNotFound)
		}
	default:
		missing = true
	}
	if !missing {
		members = append(members, tpMember{"name", name})
	}
	switch r := c.Intn(20); {
	case r < 3: // absent: the handler sees {}
		ac.args = "{}"
	case r < 12:
		ac.args = tpJSONObject(c, 4)
		members = append(members, tpMember{"arguments", ac.args})
	case r < 13: // over the payload limit
		ac.args = `{"pad":` + tpWS(c) + `"` + strings.Repeat("ab", tpArgsLimit/2) + `"}`
		members = append(members, tpMember{"arguments", ac.args})
		oversize = true
	default: // every other JSON type
		members = append(members, tpMember{"arguments", tpNonObject(c)})
		bad = true
	}
	switch r := c.Intn(20); {
	case r < 6:
	case r < 16:
		ac.cid = "cid-" + strconv.Itoa(c.Intn(1<<30))
		members = append(members, tpMember{"_meta", "{" + tpWS(c) + `"correlationId":` + tpWS(c) + quoteString(ac.cid) +
			"," + tpWS(c) + `"marker":"` + tpMarker + `"` + tpWS(c) + "," + `"progressToken":` + tpJSON(c, 1) + "}"})
	case r < 18: // an object without a usable correlation id
		members = append(members, tpMember{"_meta", `{"marker":"` + tpMarker + `","correlationId":` +
			[]string{`""`, `7`, `null`, `{"a":1}`, quoteString(strings.Repeat("c", maxCorrelationBytes+1))}[c.Intn(5)] + "}"})
	default:
		members = append(members, tpMember{"_meta", tpNonObject(c)})
		bad = true
	}
	for range c.Intn(3) { // members tools/call ignores
		key := []string{"extra", "meta", "argument", "_metadata", "names"}[c.Intn(5)]
		members = append(members, tpMember{key, tpJSON(c, 2)})
	}
	c.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	// Later members with the same name (extra keys) are ignored by tools/call
	// anyway; keep the first of each.
	var b strings.Builder
	b.WriteString("{" + tpWS(c))
	seen := map[string]bool{}
	for _, m := range members {
		if seen[m.key] {
			continue
		}
		if len(seen) > 0 {
			b.WriteString(tpWS(c) + "," + tpWS(c))
		}
		seen[m.key] = true
		b.WriteString(quoteString(m.key) + tpWS(c) + ":" + tpWS(c) + m.value)
	}
	b.WriteString(tpWS(c) + "}")
	ac.params = b.String()
	switch {
	case bad || missing:
		ac.want = "-32602"
	case oversize:
		ac.want = string(core.CodeResourceExhausted)
	}
}

// tpSeen is what the recording handler saw of one call.
type tpSeen struct {
	args     string
	cid, run string
}

func TestPropertyArgumentsReachHandlerUnchanged(t *testing.T) {
	forEachTransport(t, testPropertyArgumentsReachHandlerUnchanged)
}

func testPropertyArgumentsReachHandlerUnchanged(t *testing.T, tr transportKind) {
	var (
		mu   sync.Mutex
		seen []tpSeen
	)
	record := func(ctx context.Context, req *CallToolRequest) (any, error) {
		mu.Lock()
		seen = append(seen, tpSeen{args: string(req.Arguments), cid: CorrelationID(ctx), run: RunID(ctx)})
		mu.Unlock()
		return map[string]any{"ok": true}, nil
	}
	cfg := testConfig()
	cfg.Limits.MaxPayloadBytes = tpArgsLimit
	r := newPropRand(propSeed(tpArgsSeed, tr))
	counts := map[string]int{}
	perVersion := propShare(tpArgsCalls) / len(SupportedVersions())
	for _, version := range SupportedVersions() {
		p := newTPConn(t, tr, cfg, Options{}, func(srv *Server) {
			if err := srv.AddTool(Tool{Name: "rec", Handler: record}); err != nil {
				t.Fatal(err)
			}
		}, version)
		for range perVersion {
			var ac tpArgsCall
			tpArgsGen(&ac, r)
			mu.Lock()
			before := len(seen)
			mu.Unlock()
			resp := p.call(ac.params)
			what := version + " params " + clip(ac.params, 300)
			o := tpDecode(t, what, resp)
			mu.Lock()
			calls := seen[before:]
			mu.Unlock()
			got := "handler"
			switch {
			case o.rpcCode != 0:
				got = strconv.FormatInt(o.rpcCode, 10)
			case o.isError:
				got = o.code
			}
			if got != ac.want {
				t.Fatalf("%s: got %s, want %s: %s", what, got, ac.want, tpString(resp))
			}
			counts[got]++
			if got != "handler" {
				if len(calls) != 0 {
					t.Fatalf("%s: answered %s, yet the handler ran with %q", what, got, calls[0].args)
				}
				// Error data and tool errors carry the client's correlation
				// id when it sent one; protocol errors without
				// one carry the connection's.
				wantCID := ac.cid
				if wantCID == "" && o.rpcCode != 0 {
					wantCID = p.sess.CorrelationID()
				}
				if gotCID := o.rpcCID + o.cid; wantCID != "" && gotCID != wantCID {
					t.Fatalf("%s: correlationId %q, want %q: %s", what, gotCID, wantCID, tpString(resp))
				}
				continue
			}
			if len(calls) != 1 {
				t.Fatalf("%s: the handler ran %d times", what, len(calls))
			}
			h := calls[0]
			if h.args != ac.args {
				t.Fatalf("%s: the handler saw %q, want the arguments exactly as sent, %q", what, h.args, ac.args)
			}
			var obj map[string]json.RawMessage
			if !isObject(json.RawMessage(h.args)) || json.Unmarshal([]byte(h.args), &obj) != nil {
				t.Fatalf("%s: the handler saw a non-object %q", what, h.args)
			}
			if strings.Contains(h.args, tpMarker) {
				t.Fatalf("%s: the handler saw params._meta: %q", what, h.args)
			}
			if h.run == "" || h.cid == "" || ac.cid != "" && h.cid != ac.cid {
				t.Fatalf("%s: the handler's runId %q, correlationId %q (client sent %q)", what, h.run, h.cid, ac.cid)
			}
		}
		p.finish()
	}
	t.Logf("%d calls by outcome: %v", perVersion*len(SupportedVersions()), counts)
}
