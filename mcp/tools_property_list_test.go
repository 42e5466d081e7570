package mcp

// Property 1: tools/list pages list every tool once, in strictly increasing byte order.

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
)

// ---------------------------------------------------------------------------
// 1. tools/list ordering.

const (
	tpListSeed  = 7001
	tpListCases = 300
)

// tpNameChars are the characters of tool names; the first few are the
// ones generated most, so that names collide and share prefixes.
const tpNameChars = "a-.0A_zZ9bcdefghijklmnopqrstuvwxyBCDEFGHIJKLMNOPQRSTUVWXY12345678"

// tpToolName returns a valid tool name: mostly short names over a few
// characters, sometimes long ones up to 128 characters.
func tpToolName(c *propRand) string {
	n, alpha := 1+c.Intn(4), 8
	switch c.Intn(10) {
	case 0:
		n = 100 + c.Intn(maxToolNameLen-99)
		alpha = len(tpNameChars)
	case 1, 2:
		n = 1 + c.Intn(12)
		alpha = len(tpNameChars)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = tpNameChars[c.Intn(alpha)]
	}
	return string(b)
}

var tpBadNames = []string{"", "sp ace", "é", "a/b", "tab\t", strings.Repeat("x", maxToolNameLen+1), "a\u0000", "semi;"}

// tpListOp adds or removes a tool.
type tpListOp struct {
	add  bool
	name string
}

// tpListCase is one tools/list scenario.
type tpListCase struct {
	pageSize int
	version  string
	rounds   [][]tpListOp // applied, then the list is walked
	midWalk  []tpListOp   // applied between the pages of one more walk
}

func tpListGen(lc *tpListCase, c *propRand) {
	pool := make([]string, 1+c.Intn(40))
	for i := range pool {
		pool[i] = tpToolName(c)
	}
	op := func() tpListOp {
		if c.Intn(25) == 0 {
			return tpListOp{add: c.RandBool(), name: tpBadNames[c.Intn(len(tpBadNames))]}
		}
		return tpListOp{add: c.Intn(3) != 0, name: pool[c.Intn(len(pool))]}
	}
	*lc = tpListCase{pageSize: 1 + c.Intn(10), version: SupportedVersions()[c.Intn(len(SupportedVersions()))]}
	for range 1 + c.Intn(4) {
		ops := make([]tpListOp, c.Intn(30))
		for i := range ops {
			ops[i] = op()
		}
		lc.rounds = append(lc.rounds, ops)
	}
	lc.midWalk = make([]tpListOp, c.Intn(20))
	for i := range lc.midWalk {
		lc.midWalk[i] = op()
	}
}

// tpListPage is one tools/list page.
type tpListPage struct {
	names  []string
	titles []bool // whether each entry has a title
	next   string
	more   bool // nextCursor present
}

func (p *tpConn) listPage(cursor string, first bool) tpListPage {
	p.t.Helper()
	params := ""
	if !first {
		params = `{"cursor":` + quoteString(cursor) + `}`
	}
	resp := p.await(p.request(MethodToolsList, params))
	var r struct {
		Tools []struct {
			Name        *string         `json:"name"`
			Title       *string         `json:"title"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
		NextCursor *string `json:"nextCursor"`
	}
	if json.Unmarshal(resp["result"], &r) != nil || r.Tools == nil {
		p.t.Fatalf("tools/list cursor %q: %s", cursor, tpString(resp))
	}
	var page tpListPage
	for _, tl := range r.Tools {
		if tl.Name == nil || !isObject(tl.InputSchema) {
			p.t.Fatalf("tools/list entry without name or inputSchema: %s", tpString(resp))
		}
		page.names = append(page.names, *tl.Name)
		page.titles = append(page.titles, tl.Title != nil)
	}
	if r.NextCursor != nil {
		page.next, page.more = *r.NextCursor, true
	}
	return page
}

func TestPropertyToolsListOrder(t *testing.T) {
	forEachTransport(t, testPropertyToolsListOrder)
}

func testPropertyToolsListOrder(t *testing.T, tr transportKind) {
	r := newPropRand(propSeed(tpListSeed, tr))
	walks, mutations, pages := 0, 0, 0
	for i := range propShare(tpListCases) {
		var lc tpListCase
		tpListGen(&lc, r)
		cfg := testConfig()
		cfg.Limits.PageSize = lc.pageSize
		p := newTPConn(t, tr, cfg, Options{}, nil, lc.version)
		model := map[string]bool{}
		apply := func(op tpListOp) {
			t.Helper()
			var err error
			if op.add {
				// Titled tools check the revision's listing rules too.
				err = p.srv.AddTool(Tool{Name: op.name, Title: "T " + op.name, Handler: tpNoop})
			} else {
				err = p.srv.RemoveTool(op.name)
			}
			var ce *core.Error
			switch {
			case !validToolName(op.name):
				if !errors.As(err, &ce) || ce.Code != core.CodeInvalidArgument && ce.Code != core.CodeNotFound {
					t.Fatalf("case %d: %+v with an invalid name: %v", i, op, err)
				}
			case op.add == model[op.name]: // duplicate add, or removal of an absent tool
				want := core.CodeInvalidArgument
				if !op.add {
					want = core.CodeNotFound
				}
				if !errors.As(err, &ce) || ce.Code != want {
					t.Fatalf("case %d: %+v: got %v, want %s", i, op, err, want)
				}
			case err != nil:
				t.Fatalf("case %d: %+v: %v", i, op, err)
			default:
				model[op.name] = op.add
				if !op.add {
					delete(model, op.name)
				}
				mutations++
			}
		}
		walk := func(between []tpListOp) []string {
			t.Helper()
			walks++
			var all []string
			present := maps.Clone(model) // listed unless removed during the walk
			removed := map[string]bool{}
			cursor := ""
			for n := 0; ; n++ {
				if n > len(model)+len(between)+2 {
					t.Fatalf("case %d: tools/list did not end after %d pages", i, n)
				}
				page := p.listPage(cursor, n == 0)
				pages++
				for k, name := range page.names {
					if !model[name] {
						t.Fatalf("case %d: tools/list lists %q, which is not registered", i, name)
					}
					if wantTitle := lc.version >= Version20250618; page.titles[k] != wantTitle {
						t.Fatalf("case %d (%s): title listed %v", i, lc.version, page.titles[k])
					}
				}
				if len(page.names) > lc.pageSize || page.more && len(page.names) != lc.pageSize {
					t.Fatalf("case %d: page of %d with page size %d (more %v)", i, len(page.names), lc.pageSize, page.more)
				}
				all = append(all, page.names...)
				if !page.more {
					break
				}
				cursor = page.next
				if len(between) > 0 {
					for _, op := range between[:min(len(between), 1+len(between)/3)] {
						apply(op)
						if !op.add {
							removed[op.name] = true
						}
					}
					between = between[min(len(between), 1+len(between)/3):]
				}
			}
			for k := 1; k < len(all); k++ {
				if all[k-1] >= all[k] {
					t.Fatalf("case %d: tools/list not in strictly increasing byte order: %q then %q (page size %d)",
						i, all[k-1], all[k], lc.pageSize)
				}
			}
			for name := range present {
				if !removed[name] && !slices.Contains(all, name) {
					t.Fatalf("case %d: %q, registered throughout the walk, was not listed", i, name)
				}
			}
			return all
		}
		for _, ops := range lc.rounds {
			for _, op := range ops {
				apply(op)
			}
			got := walk(nil)
			want := slices.Sorted(maps.Keys(model))
			if !slices.Equal(got, want) {
				t.Fatalf("case %d (%s, page size %d): walked %q, registered %q", i, lc.version, lc.pageSize, got, want)
			}
		}
		walk(lc.midWalk)
		if got := slices.Sorted(maps.Keys(model)); !slices.Equal(walk(nil), got) {
			t.Fatalf("case %d: after the mid-walk changes the list is not the registered set %q", i, got)
		}
		// The running session heard of the changes: at least one
		// notifications/tools/list_changed, written before the last
		// tools/list response, and no more than one per change.
		if n := p.notifications(); n > mutations || mutations > 0 && n == 0 {
			t.Fatalf("case %d: %d notifications/tools/list_changed for %d changes", i, n, mutations)
		}
		p.finish()
		mutations = 0
	}
	t.Logf("%d cases, %d walks, %d pages", propShare(tpListCases), walks, pages)
}
