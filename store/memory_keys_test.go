package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcprt/mcprt/domain/memory"
)

// plainScan is the key search without the index: the query every key
// search ran before memory_keys.
func (m *Memory) plainScan(ctx context.Context, q memory.SearchQuery) (out []memory.Entry, err error) {
	where, nsArgs := nsFilter("namespace", q.Namespace)
	err = m.db.read(ctx, func(tx *sql.Tx) error {
		out, err = queryEntries(ctx, tx, `SELECT namespace, key, value, stored_at FROM memory_entries
			WHERE instr(key, ?) > 0 AND `+where+` ORDER BY stored_at DESC, rev DESC LIMIT ?`, append(append([]any{q.Query}, nsArgs...), q.Limit)...)
		return err
	})
	return out, err
}

// scanSearch is plainScan, the reference the indexed search must agree
// with.
func scanSearch(t *testing.T, db *DB, q memory.SearchQuery) []memory.Entry {
	t.Helper()
	out, err := db.Memory().plainScan(testCtx(t), q)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// keyAlphabet mixes cases, multi-byte characters, FTS5 and LIKE/GLOB
// syntax and spaces, so the index's quoting and case rules are exercised.
var keyAlphabet = []rune(`aAbBcCÉé/-_.%*?"' :[]日本ß`)

func randKey(r *rand.Rand, maxLen int) string {
	var b strings.Builder
	for range 1 + r.IntN(maxLen) {
		b.WriteRune(keyAlphabet[r.IntN(len(keyAlphabet))])
	}
	return b.String()
}

// randQuery is a piece of a stored key (so it often matches), the same
// piece in the other case (which must not match unless a key holds it) or
// random text, of 1 to 6 characters: short queries included.
func randQuery(r *rand.Rand, keys []string) string {
	mode := r.IntN(3)
	if len(keys) == 0 || mode == 0 {
		return randKey(r, 6)
	}
	k := []rune(keys[r.IntN(len(keys))])
	i := r.IntN(len(k))
	piece := string(k[i:min(len(k), i+1+r.IntN(6))])
	if mode == 2 {
		return swapCase(piece)
	}
	return piece
}

func swapCase(s string) string {
	return strings.Map(func(c rune) rune {
		if u := unicode.ToUpper(c); u != c {
			return u
		}
		return unicode.ToLower(c)
	}, s)
}

func sameEntries(a, b []memory.Entry) bool {
	return slices.EqualFunc(a, b, func(x, y memory.Entry) bool {
		return x.Namespace == y.Namespace && x.Key == y.Key && string(x.Value) == string(y.Value) && x.StoredAt.Equal(y.StoredAt)
	})
}

func showEntries(es []memory.Entry) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s:%q@%d ", e.Namespace, e.Key, e.StoredAt.UnixNano())
	}
	return b.String()
}

// The indexed key search returns what the plain scan returns (and what the
// in-memory store returns) for random keys, writes (overwrites, deletes,
// equal times) and queries, short ones included, with and without a
// namespace and at every limit.
func TestKeySearchMatchesScan(t *testing.T) {
	tunings := []keyTuning{
		defaultKeyTuning,
		{fewCandidates: 0, recentWindow: 0}, // always the window, then the candidates
		{fewCandidates: 3, recentWindow: 8},
	}
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 17))
			db, _ := newDB(t)
			sql := &Memory{db: db, keys: tunings[seed]}
			mem := memory.NewMemStore()
			ctx := testCtx(t)
			at := t0
			var keys []string
			// Rounds of writes (one transaction each: new keys, overwrites,
			// equal times, which write order breaks) and a delete, then
			// queries.
			for round := range 4 {
				var batch []memory.Entry
				for i := range 60 {
					var key string
					if len(keys) > 0 && r.IntN(4) == 0 {
						key = keys[r.IntN(len(keys))]
					} else {
						key = randKey(r, 10)
						keys = append(keys, key)
					}
					if r.IntN(3) > 0 {
						at = at.Add(time.Duration(r.IntN(3)) * time.Millisecond)
					}
					ns := []string{"a", "b", "c/d"}[r.IntN(3)]
					batch = append(batch, memory.Entry{Namespace: ns, Key: key, Value: []byte(fmt.Sprint(round*100 + i)), StoredAt: at})
				}
				if _, err := sql.PutAll(ctx, batch, false); err != nil {
					t.Fatal(err)
				}
				_, _ = mem.PutAll(ctx, batch, false)
				for _, e := range batch[:3] {
					if _, err := sql.Delete(ctx, e.Namespace, e.Key); err != nil {
						t.Fatal(err)
					}
					_, _ = mem.Delete(ctx, e.Namespace, e.Key)
				}
				for range 60 {
					q := memory.SearchQuery{Query: randQuery(r, keys), Limit: 1 + r.IntN(memory.MaxSearchLimit)}
					if r.IntN(2) == 0 {
						q.Namespace = []string{"a", "b", "c/d", "none"}[r.IntN(4)]
					}
					got, err := sql.Search(ctx, q)
					if err != nil {
						t.Fatalf("Search(%+v): %v", q, err)
					}
					want := scanSearch(t, db, q)
					if !sameEntries(got, want) {
						t.Fatalf("Search(%+v)\n got  %s\n want %s", q, showEntries(got), showEntries(want))
					}
					fromMem, _ := mem.Search(ctx, q)
					if !sameEntries(got, fromMem) {
						t.Fatalf("Search(%+v)\n sqlite %s\n mem    %s", q, showEntries(got), showEntries(fromMem))
					}
				}
			}
			checkKeyIndex(t, db)
		})
	}
}

// checkKeyIndex fails unless memory_keys agrees with memory_entries
// (FTS5's integrity check compares the index with its content table).
func checkKeyIndex(t *testing.T, db *DB) {
	t.Helper()
	h, err := db.handle(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ExecContext(testCtx(t), `INSERT INTO memory_keys (memory_keys, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("memory_keys is out of step with memory_entries: %v", err)
	}
}

// A database from before the key index gets it filled from the entries it
// holds when it is opened.
func TestKeyIndexMigrationBackfills(t *testing.T) {
	db, clock := newDB(t)
	svc := memory.NewService(db.Memory(), clock)
	ctx := testCtx(t)
	for i := range 50 {
		if _, _, err := svc.Put(ctx, "ns", fmt.Sprintf("Item-%02d/notes", i), []byte(`1`)); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}
	version := 0
	for _, m := range migrations {
		if m.name == memoryKeysStep {
			version = m.version
		}
	}
	// Turn the database back into one from before the step.
	h, err := db.handle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`DROP TRIGGER memory_keys_inserted`, `DROP TRIGGER memory_keys_deleted`, `DROP TRIGGER memory_keys_rekeyed`,
		`DROP TABLE memory_keys`, fmt.Sprintf(`DELETE FROM schema_version WHERE version >= %d`, version),
	} {
		if _, err := h.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	db.Close()
	if err := db.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if got := schemaRows(t, db); got[version] != 1 {
		t.Fatalf("step %d applied %d times on reopening, want once", version, got[version])
	}
	checkKeyIndex(t, db)
	q := memory.SearchQuery{Query: "em-1", Limit: 50}
	got, err := db.Memory().Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || got[0].Key != "Item-19/notes" || !sameEntries(got, scanSearch(t, db, q)) {
		t.Fatalf("after the back-fill, Search(%q) = %s", q.Query, showEntries(got))
	}
}

// trigrams returns distinct three-character windows of its input, every
// one when there are at most max, else max of them spread over the input
// (first one first).
func TestTrigrams(t *testing.T) {
	long := strings.Repeat("abcdefghij", 60) // 598 windows, 10 distinct
	cases := []struct {
		in   string
		max  int
		want []string
	}{
		{"ab", 12, nil},
		{"abc", 12, []string{"abc"}},
		{"aaaa", 12, []string{"aaa"}},
		{"日本ßé", 12, []string{"日本ß", "本ßé"}},
		{"abcdef", 2, []string{"abc", "cde"}},
		{long, 12, nil}, // checked below
	}
	for _, c := range cases {
		got := trigrams(c.in, c.max)
		if c.in == long {
			if len(got) == 0 || len(got) > c.max || got[0] != "abc" {
				t.Errorf("trigrams(long) = %q", got)
			}
			for _, g := range got {
				if utf8.RuneCountInString(g) != 3 || !strings.Contains(c.in, g) || strings.Count(strings.Join(got, "|"), g) != 1 {
					t.Errorf("trigrams(long) returned %q: not a distinct window of the input", g)
				}
			}
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("trigrams(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}
