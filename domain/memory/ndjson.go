package memory

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/internal/check"
)

// Limits of Import.
const (
	// MaxLineBytes bounds one NDJSON line (a value may be written with
	// spaces, so this is twice MaxValueBytes plus room for the rest).
	MaxLineBytes = 2*MaxValueBytes + 4096
	// MaxImportEntries bounds the entries of one import.
	MaxImportEntries = 100_000
	// MaxReportedLines bounds the bad lines an import error lists.
	MaxReportedLines = 100
)

// Record is one NDJSON line of an export: the JSON form of an Entry.
type Record struct {
	Namespace string          `json:"namespace"`
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	StoredAt  string          `json:"storedAt"`
}

// TimeFormat is how times are written: RFC 3339, UTC, nanoseconds.
const TimeFormat = time.RFC3339Nano

// Export writes every entry of namespace (all when "") to w as NDJSON, one
// Record per line, in namespace, key order, from one consistent snapshot.
// When maxBytes > 0 and the output would exceed it, Export stops and fails
// with RESOURCE_EXHAUSTED (what was written so far is incomplete).
func (s *Service) Export(ctx context.Context, w io.Writer, namespace string, maxBytes int) (count int, err error) {
	if namespace != "" {
		if err := checkNamespace(namespace); err != nil {
			return 0, err
		}
	}
	written := 0
	err = s.store.Scan(ctx, namespace, func(e Entry) error {
		line, err := json.Marshal(Record{Namespace: e.Namespace, Key: e.Key, Value: e.Value, StoredAt: e.StoredAt.UTC().Format(TimeFormat)})
		if err != nil {
			return core.Errorf(core.CodeInternal, "export: encoding %s: %w", e.Address(), err)
		}
		line = append(line, '\n')
		if maxBytes > 0 && written+len(line) > maxBytes {
			e := core.NewError(core.CodeResourceExhausted,
				fmt.Sprintf("export: the entries do not fit in %d bytes; export one namespace at a time", maxBytes)).
				WithDetail("reason", "export_too_large").WithDetail("limit", maxBytes)
			e.Retryable = false
			return e
		}
		if _, err := w.Write(line); err != nil {
			return core.Errorf(core.CodeInternal, "export: writing: %w", err)
		}
		written += len(line)
		count++
		return nil
	})
	return count, err
}

// ImportOptions control Import.
type ImportOptions struct {
	// SkipExisting keeps entries that already exist instead of
	// overwriting them.
	SkipExisting bool
}

// ImportResult tells what Import did.
type ImportResult struct {
	// Entries is the number of records read (blank lines are ignored).
	Entries int
	ImportCounts
}

// LineError is one bad line of an import.
type LineError struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// Import reads NDJSON Records from r and stores them all in one
// transaction. Every line is checked first; if any is bad nothing is
// stored and the INVALID_ARGUMENT error lists the bad lines (1-based, at
// most MaxReportedLines) in details.errors. A record's namespace defaults
// to DefaultNamespace and its storedAt to now. Blank lines are ignored.
func (s *Service) Import(ctx context.Context, r io.Reader, opts ImportOptions) (ImportResult, error) {
	now := s.clock.Now().UTC()
	br := bufio.NewReaderSize(r, 64*1024)
	var (
		entries []Entry
		bad     []LineError
		nBad    int
	)
	report := func(line int, msg string) {
		nBad++
		if len(bad) < MaxReportedLines {
			bad = append(bad, LineError{Line: line, Message: msg})
		}
	}
	for lineNo := 1; ; lineNo++ {
		if err := ctx.Err(); err != nil {
			return ImportResult{}, core.Errorf(core.CodeTimeout, "import: stopped at line %d: %w", lineNo, context.Cause(ctx))
		}
		line, tooLong, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return ImportResult{}, core.Errorf(core.CodeInternal, "import: reading line %d: %w", lineNo, err)
		}
		eof := err != nil
		line = bytes.TrimSpace(line)
		switch {
		case tooLong:
			report(lineNo, fmt.Sprintf("the line is longer than %d bytes", MaxLineBytes))
		case len(line) == 0:
		case len(entries) >= MaxImportEntries:
			report(lineNo, fmt.Sprintf("an import holds at most %d entries; split the file", MaxImportEntries))
		default:
			e, err := parseRecord(line, now)
			if err != nil {
				report(lineNo, messageOf(err))
			} else {
				entries = append(entries, e)
			}
		}
		if eof {
			break
		}
	}
	if nBad > 0 {
		return ImportResult{}, core.NewError(core.CodeInvalidArgument,
			fmt.Sprintf("import: %d line(s) are not valid records (first: line %d: %s); nothing was imported: fix them and import the whole file again", nBad, bad[0].Line, bad[0].Message)).
			WithDetail("errors", bad).WithDetail("badLines", nBad)
	}
	counts, err := s.store.PutAll(ctx, entries, opts.SkipExisting)
	if err != nil {
		return ImportResult{}, err
	}
	return ImportResult{Entries: len(entries), ImportCounts: counts}, nil
}

// readLine returns the next line without its '\n'. A line over
// MaxLineBytes is consumed in bounded chunks and reported as tooLong.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > MaxLineBytes+1 {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(buf, []byte("\n")), tooLong, err
	}
}

// parseRecord decodes and validates one line. Member names must match
// exactly (encoding/json alone would accept "Key" for "key") and may not
// repeat.
func parseRecord(line []byte, now time.Time) (Entry, error) {
	if check.Depth(line, MaxValueDepth+1) > MaxValueDepth+1 {
		return Entry{}, fmt.Errorf("the value nests arrays and objects more than %d deep", MaxValueDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return Entry{}, errors.New(`not a JSON object: each line must be {"namespace", "key", "value", "storedAt"}`)
	}
	var rec Record
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Entry{}, fmt.Errorf("not valid JSON: %v", err)
		}
		name, _ := tok.(string)
		if seen[name] {
			return Entry{}, fmt.Errorf("member %q appears twice", name)
		}
		seen[name] = true
		var target any
		switch name {
		case "namespace":
			target = &rec.Namespace
		case "key":
			target = &rec.Key
		case "value":
			target = &rec.Value
		case "storedAt":
			target = &rec.StoredAt
		default:
			return Entry{}, fmt.Errorf("unknown member %q: a record has only namespace, key, value and storedAt", name)
		}
		if err := dec.Decode(target); err != nil {
			return Entry{}, fmt.Errorf("member %q: %v", name, err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return Entry{}, fmt.Errorf("not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Entry{}, errors.New("text follows the record; put one record per line")
	}
	ns, err := normNamespace(rec.Namespace)
	if err != nil {
		return Entry{}, err
	}
	if err := checkKey(rec.Key); err != nil {
		return Entry{}, err
	}
	value, err := normValue(rec.Value)
	if err != nil {
		return Entry{}, err
	}
	at := now
	if seen["storedAt"] {
		if at, err = time.Parse(time.RFC3339Nano, rec.StoredAt); err != nil {
			return Entry{}, fmt.Errorf("storedAt %q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", rec.StoredAt)
		}
		at = at.UTC()
	}
	return Entry{Namespace: ns, Key: rec.Key, Value: value, StoredAt: at}, nil
}

// messageOf returns an error's message without the code prefix of a
// *core.Error.
func messageOf(err error) string {
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce.Message
	}
	return err.Error()
}
