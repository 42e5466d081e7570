package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/memory"
)

// memBackends runs f against the SQLite store and the in-memory one, so
// both keep the same contract.
func memBackends(t *testing.T, f func(t *testing.T, svc *memory.Service, clock *core.ManualClock)) {
	t.Run("sqlite", func(t *testing.T) {
		db, clock := newDB(t)
		f(t, memory.NewService(db.Memory(), clock), clock)
	})
	t.Run("mem", func(t *testing.T) {
		clock := core.NewManualClock(t0)
		f(t, memory.NewService(memory.NewMemStore(), clock), clock)
	})
}

// wantCode fails unless err is a *core.Error with the code.
func wantCode(t *testing.T, err error, code core.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
	if ce.Message == "" {
		t.Fatalf("error %s has no message", code)
	}
}

func TestMemoryPutGet(t *testing.T) {
	memBackends(t, func(t *testing.T, svc *memory.Service, clock *core.ManualClock) {
		ctx := testCtx(t)
		e, replaced, err := svc.Put(ctx, "", "k", json.RawMessage(`{ "a" : [1, 2] }`))
		if err != nil || replaced {
			t.Fatalf("Put = %v, %v", replaced, err)
		}
		if e.Namespace != "default" || string(e.Value) != `{"a":[1,2]}` || !e.StoredAt.Equal(t0) {
			t.Fatalf("Put entry = %+v", e)
		}
		got, found, err := svc.Get(ctx, "default", "k")
		if err != nil || !found || string(got.Value) != `{"a":[1,2]}` || !got.StoredAt.Equal(t0) {
			t.Fatalf("Get = %+v, %v, %v", got, found, err)
		}
		clock.Advance(time.Second)
		if _, replaced, err = svc.Put(ctx, "default", "k", json.RawMessage(`"new"`)); err != nil || !replaced {
			t.Fatalf("overwrite: replaced=%v err=%v", replaced, err)
		}
		got, _, _ = svc.Get(ctx, "", "k")
		if string(got.Value) != `"new"` || !got.StoredAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("after overwrite: %+v", got)
		}
		if _, found, err := svc.Get(ctx, "other", "k"); err != nil || found {
			t.Fatalf("namespaces leak: found=%v err=%v", found, err)
		}
		if _, found, _ := svc.Get(ctx, "default", "K"); found {
			t.Fatal("keys must be case-sensitive")
		}
	})
}

func TestMemoryErrors(t *testing.T) {
	deep := strings.Repeat("[", memory.MaxValueDepth+1) + strings.Repeat("]", memory.MaxValueDepth+1)
	big := `"` + strings.Repeat("x", memory.MaxValueBytes) + `"`
	cases := []struct {
		name, ns, key, value string
		code                 core.Code
	}{
		{"empty key", "", "", `1`, core.CodeInvalidArgument},
		{"long key", "", strings.Repeat("k", memory.MaxKeyBytes+1), `1`, core.CodeInvalidArgument},
		{"control char in key", "", "a\nb", `1`, core.CodeInvalidArgument},
		{"NUL in key", "", "a\x00b", `1`, core.CodeInvalidArgument},
		{"invalid UTF-8 key", "", "a\xffb", `1`, core.CodeInvalidArgument},
		{"colon in namespace", "a:b", "k", `1`, core.CodeInvalidArgument},
		{"space in namespace", "a b", "k", `1`, core.CodeInvalidArgument},
		{"long namespace", strings.Repeat("n", memory.MaxNamespaceBytes+1), "k", `1`, core.CodeInvalidArgument},
		{"missing value", "", "k", ``, core.CodeInvalidArgument},
		{"null value", "", "k", `null`, core.CodeInvalidArgument},
		{"bad JSON", "", "k", `{"a":`, core.CodeInvalidArgument},
		{"two values", "", "k", `1 2`, core.CodeInvalidArgument},
		{"deep value", "", "k", deep, core.CodeInvalidArgument},
		{"value over 100 KiB", "", "k", big, core.CodeResourceExhausted},
	}
	memBackends(t, func(t *testing.T, svc *memory.Service, _ *core.ManualClock) {
		ctx := testCtx(t)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, _, err := svc.Put(ctx, c.ns, c.key, json.RawMessage(c.value))
				wantCode(t, err, c.code)
			})
		}
		st, err := svc.Stats(ctx, "")
		if err != nil || st.Entries != 0 {
			t.Fatalf("failed puts stored something: %+v, %v", st, err)
		}
		_, _, err = svc.Put(ctx, "", "k", json.RawMessage(big))
		ce := core.AsError(err)
		if ce.Retryable || ce.Details["limit"] != memory.MaxValueBytes || !strings.Contains(ce.Message, "102400") {
			t.Errorf("oversized value error = %+v; want a non-retryable error naming the limit", ce)
		}
		// Exactly at the limit is fine.
		exact := `"` + strings.Repeat("x", memory.MaxValueBytes-2) + `"`
		if _, _, err := svc.Put(ctx, "", "k", json.RawMessage(exact)); err != nil {
			t.Errorf("value of exactly %d bytes: %v", memory.MaxValueBytes, err)
		}
		for _, q := range []struct {
			name string
			q    memory.SearchQuery
		}{
			{"empty query", memory.SearchQuery{}},
			{"negative limit", memory.SearchQuery{Query: "a", Limit: -1}},
			{"limit over max", memory.SearchQuery{Query: "a", Limit: memory.MaxSearchLimit + 1}},
			{"bad namespace", memory.SearchQuery{Query: "a", Namespace: "x:y"}},
			{"full text without words", memory.SearchQuery{Query: `"*" - ! ()`, FullText: true}},
		} {
			t.Run(q.name, func(t *testing.T) {
				_, err := svc.Search(ctx, q.q)
				wantCode(t, err, core.CodeInvalidArgument)
			})
		}
		_, err = svc.List(ctx, memory.ListQuery{Offset: -1})
		wantCode(t, err, core.CodeInvalidArgument)
		_, err = svc.List(ctx, memory.ListQuery{Limit: memory.MaxListLimit + 1})
		wantCode(t, err, core.CodeInvalidArgument)
		_, err = svc.Delete(ctx, "", "")
		wantCode(t, err, core.CodeInvalidArgument)
		_, _, err = svc.Get(ctx, "bad ns", "k")
		wantCode(t, err, core.CodeInvalidArgument)
	})
}

func TestMemoryDelete(t *testing.T) {
	memBackends(t, func(t *testing.T, svc *memory.Service, _ *core.ManualClock) {
		ctx := testCtx(t)
		svc.Put(ctx, "n", "k", json.RawMessage(`"hello world"`))
		if ok, err := svc.Delete(ctx, "n", "k"); err != nil || !ok {
			t.Fatalf("Delete = %v, %v", ok, err)
		}
		if ok, err := svc.Delete(ctx, "n", "k"); err != nil || ok {
			t.Fatalf("second Delete = %v, %v; want false, nil", ok, err)
		}
		if hits, _ := svc.Search(ctx, memory.SearchQuery{Query: "hello", FullText: true}); len(hits) != 0 {
			t.Fatalf("deleted entry still in the full-text index: %v", hits)
		}
	})
}

func keys(es []memory.Entry) string {
	var s []string
	for _, e := range es {
		s = append(s, e.Address())
	}
	return strings.Join(s, " ")
}

func TestMemorySearch(t *testing.T) {
	memBackends(t, func(t *testing.T, svc *memory.Service, clock *core.ManualClock) {
		ctx := testCtx(t)
		put := func(ns, key, value string) {
			t.Helper()
			if _, _, err := svc.Put(ctx, ns, key, json.RawMessage(value)); err != nil {
				t.Fatal(err)
			}
		}
		put("a", "user-1", `{"note":"The quick brown fox"}`)
		clock.Advance(time.Second)
		put("b", "user-2", `"a lazy Dog and a FOX"`)
		put("a", "User-3", `["café", 42]`) // same time as user-2: write order breaks the tie
		clock.Advance(time.Second)
		put("a", "100%_off", `"percent"`)
		cases := []struct {
			name string
			q    memory.SearchQuery
			want string
		}{
			{"substring newest first", memory.SearchQuery{Query: "user"}, "b:user-2 a:user-1"},
			{"case-sensitive", memory.SearchQuery{Query: "User"}, "a:User-3"},
			{"namespace filter", memory.SearchQuery{Query: "user", Namespace: "a"}, "a:user-1"},
			{"limit", memory.SearchQuery{Query: "-", Limit: 2}, "a:User-3 b:user-2"},
			{"LIKE metacharacters are literal", memory.SearchQuery{Query: "%_"}, "a:100%_off"},
			{"underscore is literal", memory.SearchQuery{Query: "_"}, "a:100%_off"},
			{"no match", memory.SearchQuery{Query: "zzz"}, ""},
			{"full text, case-insensitive", memory.SearchQuery{Query: "fox", FullText: true}, ""},
			{"full text, every word", memory.SearchQuery{Query: "LAZY fox", FullText: true}, "b:user-2"},
			{"full text, member names and numbers", memory.SearchQuery{Query: "note 42", FullText: true}, ""},
			{"full text, unicode", memory.SearchQuery{Query: "Café", FullText: true}, "a:User-3"},
			{"full text, FTS syntax is inert", memory.SearchQuery{Query: `fox OR NEAR(dog) "*"`, FullText: true}, ""},
			{"full text, namespace", memory.SearchQuery{Query: "fox", Namespace: "a", FullText: true}, "a:user-1"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				hits, err := svc.Search(ctx, c.q)
				if err != nil {
					t.Fatal(err)
				}
				got := keys(hits)
				if c.name == "full text, case-insensitive" { // rank order differs by backend
					if !strings.Contains(got, "a:user-1") || !strings.Contains(got, "b:user-2") || len(hits) != 2 {
						t.Fatalf("got %q, want user-1 and user-2", got)
					}
					return
				}
				if got != c.want {
					t.Fatalf("got %q, want %q", got, c.want)
				}
			})
		}
	})
}

func TestMemoryListAndStats(t *testing.T) {
	memBackends(t, func(t *testing.T, svc *memory.Service, clock *core.ManualClock) {
		ctx := testCtx(t)
		for i := range 5 {
			svc.Put(ctx, "x", fmt.Sprintf("k%d", i), json.RawMessage(`"abc"`))
			clock.Advance(time.Minute)
		}
		svc.Put(ctx, "a", "z", json.RawMessage(`[1,2,3]`))
		page, err := svc.List(ctx, memory.ListQuery{Limit: 2, Offset: 1})
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != 6 || len(page.Entries) != 2 || page.Entries[0].Key != "k0" || page.Entries[1].Key != "k1" || page.Entries[0].Size != 5 {
			t.Fatalf("page = %+v", page)
		}
		page, _ = svc.List(ctx, memory.ListQuery{Namespace: "x", Offset: 4})
		if page.Total != 5 || len(page.Entries) != 1 || page.Entries[0].Key != "k4" {
			t.Fatalf("last page = %+v", page)
		}
		st, err := svc.Stats(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if st.Entries != 6 || st.Bytes != 5*5+7 || len(st.Namespaces) != 2 || st.Namespaces[0].Namespace != "a" {
			t.Fatalf("stats = %+v", st)
		}
		x := st.Namespaces[1]
		if x.Entries != 5 || !x.Oldest.Equal(t0) || !x.Newest.Equal(t0.Add(4*time.Minute)) {
			t.Fatalf("namespace x = %+v", x)
		}
		if st, _ := svc.Stats(ctx, "a"); st.Entries != 1 || len(st.Namespaces) != 1 {
			t.Fatalf("stats of a = %+v", st)
		}
	})
}

// Every string field carries SQL metacharacters: stored and found
// verbatim, and the tables survive.
func TestMemorySQLMetacharacters(t *testing.T) {
	memBackends(t, func(t *testing.T, svc *memory.Service, _ *core.ManualClock) {
		ctx := testCtx(t)
		evil := []string{`'; DROP TABLE memory_entries; --`, `" OR 1=1 --`, `%`, `_`, `\`, `'')--`, `x' UNION SELECT * FROM sessions --`}
		for i, s := range evil {
			v, _ := json.Marshal(s)
			if _, _, err := svc.Put(ctx, "", s, v); err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			got, found, err := svc.Get(ctx, "", s)
			if err != nil || !found || string(got.Value) != string(v) {
				t.Fatalf("%q: got %+v %v %v", s, got, found, err)
			}
			hits, err := svc.Search(ctx, memory.SearchQuery{Query: s, Limit: 50})
			if err != nil || len(hits) == 0 {
				t.Fatalf("search %q: %v, %v", s, hits, err)
			}
			if _, err := svc.Search(ctx, memory.SearchQuery{Query: s + " x", FullText: true}); err != nil && core.AsError(err).Code != core.CodeInvalidArgument {
				t.Fatalf("full-text search %q: %v", s, err)
			}
			if st, _ := svc.Stats(ctx, ""); st.Entries != i+1 {
				t.Fatalf("after %d evil keys: %d entries", i+1, st.Entries)
			}
		}
		// Path-like keys are opaque keys: they never touch the file system.
		for _, k := range []string{"../../etc/passwd", "/abs/path", `C:\x`, "a/../b"} {
			if _, _, err := svc.Put(ctx, "", k, json.RawMessage(`1`)); err != nil {
				t.Fatalf("%q: %v", k, err)
			}
			if _, found, _ := svc.Get(ctx, "", k); !found {
				t.Fatalf("%q not found", k)
			}
		}
		if _, found, _ := svc.Get(ctx, "", "b"); found {
			t.Fatal(`"a/../b" was cleaned to "b": keys must be kept verbatim`)
		}
	})
}
