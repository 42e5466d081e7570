package store

import (
	"context"
	"database/sql"
	"unicode/utf8"

	"github.com/mcprt/mcprt/domain/memory"
)

// memoryKeysStep names the schema step of memoryKeysSchema.
const memoryKeysStep = "a trigram index of memory keys, for search by key substring"

// memoryKeysSchema adds memory_keys, an FTS5 index of every memory key
// under the trigram tokenizer (case-sensitive, as the key search is). It is an external-content table over memory_entries (same
// rowid; the key is not stored twice), filled from the existing rows when
// the step is applied and kept in step by triggers, so every write to
// memory_entries updates it in the write's own transaction.
var memoryKeysSchema = []string{
	`CREATE VIRTUAL TABLE memory_keys USING fts5(key, content = 'memory_entries', content_rowid = 'id',
		tokenize = 'trigram case_sensitive 1', detail = 'none', columnsize = 0)`,
	`INSERT INTO memory_keys (memory_keys) VALUES ('rebuild')`,
	`CREATE TRIGGER memory_keys_inserted AFTER INSERT ON memory_entries BEGIN
		INSERT INTO memory_keys (rowid, key) VALUES (NEW.id, NEW.key);
	END`,
	`CREATE TRIGGER memory_keys_deleted AFTER DELETE ON memory_entries BEGIN
		INSERT INTO memory_keys (memory_keys, rowid, key) VALUES ('delete', OLD.id, OLD.key);
	END`,
	`CREATE TRIGGER memory_keys_rekeyed AFTER UPDATE OF key ON memory_entries BEGIN
		INSERT INTO memory_keys (memory_keys, rowid, key) VALUES ('delete', OLD.id, OLD.key);
		INSERT INTO memory_keys (rowid, key) VALUES (NEW.id, NEW.key);
	END`,
}

const (
	// trigramMin is the shortest query, in characters, the trigram index
	// can answer: a shorter one holds no trigram to look up.
	trigramMin = 3
	// maxProbedTrigrams bounds the trigrams of one query whose key counts
	// are read (a query has up to 510).
	maxProbedTrigrams = 12
)

// keyTuning sets when a key search walks the newest entries rather than
// reading the index's candidates.
type keyTuning struct {
	// fewCandidates is the most keys the rarest trigram may select for the
	// search to read them at once: below it, reading the candidates is
	// cheaper than walking the newest entries.
	fewCandidates int
	// recentWindow is how many of the newest entries a search whose rarest
	// trigram is common walks first: matches that dense fill the limit
	// within it.
	recentWindow int
}

// defaultKeyTuning is measured at 100,000 entries (BenchmarkMemorySearch100k).
var defaultKeyTuning = keyTuning{fewCandidates: 1000, recentWindow: 2000}

// searchKeys finds the entries whose key contains q.Query (case-sensitive,
// no wildcards), in q.Namespace when set, newest first, at most q.Limit.
//
// Every key that contains the query holds each of the query's trigrams, so
// the keys indexed under one or all of them (at most maxProbedTrigrams of
// them, spread over the query) are a superset of the matches; instr then checks
// each candidate, so the result is the plain scan's by construction,
// whichever way it was found:
//
//   - a query of trigramMin characters or more counts its candidates in
//     the index (keyCandidates). When there are at most tune.fewCandidates,
//     they are read and sorted. Otherwise matches are likely dense: the
//     newest tune.recentWindow entries are walked first, and only when
//     they hold fewer than q.Limit matches are the candidates read (as many
//     rows as the plain scan reads, at worst);
//   - a shorter query (one or two characters) walks the entries newest
//     first and stops at the limit: such a query usually matches many
//     keys, so the walk ends early; one that matches few keys reads the
//     whole table, as before the index.
func searchKeys(ctx context.Context, tx *sql.Tx, q memory.SearchQuery, tune keyTuning) ([]memory.Entry, error) {
	where, nsArgs := nsFilter("namespace", q.Namespace)
	// instr is a case-sensitive, metacharacter-free substring test (LIKE
	// would fold ASCII case and treat % and _ as wildcards).
	walk := `SELECT namespace, key, value, stored_at FROM memory_entries
		WHERE instr(key, ?) > 0 AND ` + where + ` ORDER BY stored_at DESC, rev DESC LIMIT ?`
	if utf8.RuneCountInString(q.Query) < trigramMin {
		return queryEntries(ctx, tx, walk, append(append([]any{q.Query}, nsArgs...), q.Limit)...)
	}
	match, count, err := keyCandidates(ctx, tx, trigrams(q.Query, maxProbedTrigrams), tune.fewCandidates)
	if err != nil {
		return nil, err
	}
	if count > tune.fewCandidates {
		window := `SELECT namespace, key, value, stored_at FROM (SELECT namespace, key, value, stored_at, rev FROM memory_entries
			WHERE ` + where + ` ORDER BY stored_at DESC, rev DESC LIMIT ?) WHERE instr(key, ?) > 0 ORDER BY stored_at DESC, rev DESC LIMIT ?`
		out, err := queryEntries(ctx, tx, window, append(append([]any{}, nsArgs...), tune.recentWindow, q.Query, q.Limit)...)
		if err != nil || len(out) == q.Limit {
			return out, err
		}
	}
	where, _ = nsFilter("e.namespace", q.Namespace)
	// CROSS JOIN keeps the index lookup as the outer loop.
	candidates := `SELECT e.namespace, e.key, e.value, e.stored_at FROM memory_keys k CROSS JOIN memory_entries e ON e.id = k.rowid
		WHERE memory_keys MATCH ? AND instr(e.key, ?) > 0 AND ` + where + ` ORDER BY e.stored_at DESC, e.rev DESC LIMIT ?`
	return queryEntries(ctx, tx, candidates, append(append([]any{match, q.Query}, nsArgs...), q.Limit)...)
}

// trigrams returns the distinct three-character windows of s, at most max
// of them, spread over s.
func trigrams(s string, max int) []string {
	var starts []int
	for i := range s {
		starts = append(starts, i)
	}
	starts = append(starts, len(s))
	n := len(starts) - 3 // windows
	var out []string
	seen := map[string]bool{}
	for j := range min(n, max) {
		i := j
		if n > max {
			i = j * n / max
		}
		t := s[starts[i]:starts[i+3]]
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// keyCandidates chooses the index query that selects the candidates of a
// search by the trigrams ts: the rarest trigram when one is held by at
// most few keys, and its number of keys; else all of them together, and
// few+1. The index keeps no counts: counting reads a trigram's list of
// keys, so no count goes further than few+1.
func keyCandidates(ctx context.Context, tx *sql.Tx, ts []string, few int) (match string, count int, err error) {
	countKeys := func(match string) (int, error) {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT rowid FROM memory_keys WHERE memory_keys MATCH ? LIMIT ?)`,
			match, few+1).Scan(&n); err != nil {
			return 0, storeError(ctx, "searching the key index", err)
		}
		return n, nil
	}
	rarest, fewest := "", few+1
	// From the end: the last part of a hierarchical key is usually the
	// most specific. Stop at a trigram this rare: reading its keys costs
	// less than counting further.
	for i := len(ts) - 1; i >= 0 && fewest > few/2; i-- {
		t := ts[i]
		n, err := countKeys(ftsQuery([]string{t}))
		if err != nil {
			return "", 0, err
		}
		if n < fewest {
			rarest, fewest = t, n
		}
	}
	if rarest != "" {
		return ftsQuery([]string{rarest}), fewest, nil
	}
	// Every trigram is common; together they may still be rare, but
	// counting that costs as much as reading them.
	return ftsQuery(ts), few + 1, nil
}

// queryEntries runs a query whose rows are namespace, key, value and
// stored_at.
func queryEntries(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]memory.Entry, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, storeError(ctx, "searching", err)
	}
	defer rows.Close()
	out := []memory.Entry{}
	for rows.Next() {
		var e memory.Entry
		var value string
		var at int64
		if err := rows.Scan(&e.Namespace, &e.Key, &value, &at); err != nil {
			return nil, storeError(ctx, "searching", err)
		}
		e.Value, e.StoredAt = []byte(value), fromNanos(at)
		out = append(out, e)
	}
	return out, storeError2(ctx, "searching", rows.Err())
}
