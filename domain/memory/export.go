package memory

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mcprt/mcprt/core"
)

// errPageFull stops a scan once a page is full.
var errPageFull = errors.New("export page full")

// ExportPage writes the entries of namespace (all when "") that come
// after the position cursor names ("" : from the start), in namespace,
// key order, as NDJSON to w, stopping before the output, written as a
// JSON string (escapes counted), would pass maxBytes. It returns how many records it wrote and the cursor of the
// next page ("" when this page ends the export). Each page is one
// consistent snapshot; entries changed between pages are exported as
// the later page finds them.
func (s *Service) ExportPage(ctx context.Context, w io.Writer, namespace, cursor string, maxBytes int) (count int, next string, err error) {
	if namespace != "" {
		if err := checkNamespace(namespace); err != nil {
			return 0, "", err
		}
	}
	var after [2]string
	if cursor != "" {
		if after, err = decodeCursor(cursor); err != nil {
			return 0, "", err
		}
	}
	written := 0
	var last [2]string
	err = s.store.Scan(ctx, namespace, func(e Entry) error {
		if cursor != "" && (e.Namespace < after[0] || e.Namespace == after[0] && e.Key <= after[1]) {
			return nil
		}
		line, err := json.Marshal(Record{Namespace: e.Namespace, Key: e.Key, Value: e.Value, StoredAt: e.StoredAt.UTC().Format(TimeFormat)})
		if err != nil {
			return core.Errorf(core.CodeInternal, "export: encoding %s: %w", e.Address(), err)
		}
		line = append(line, '\n')
		size := encodedLen(line)
		if written+size > maxBytes {
			if count == 0 {
				return core.Errorf(core.CodeInternal, "export: the record of %s (%d bytes) does not fit in a page of %d bytes", e.Address(), len(line), maxBytes)
			}
			next = encodeCursor(last)
			return errPageFull
		}
		if _, err := w.Write(line); err != nil {
			return core.Errorf(core.CodeInternal, "export: writing: %w", err)
		}
		written += size
		count++
		last = [2]string{e.Namespace, e.Key}
		return nil
	})
	if errors.Is(err, errPageFull) {
		err = nil
	}
	return count, next, err
}

// encodedLen is the length of b as the inside of a JSON string.
func encodedLen(b []byte) int {
	enc, _ := json.Marshal(string(b))
	return len(enc) - 2
}

func encodeCursor(pos [2]string) string {
	b, _ := json.Marshal(pos)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(c string) ([2]string, error) {
	var pos [2]string
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		err = json.Unmarshal(b, &pos)
	}
	if err != nil {
		return pos, core.NewError(core.CodeInvalidArgument,
			fmt.Sprintf("cursor %q is not a cursor memory_export returned: pass the nextCursor of the previous page, or none to start", c)).
			WithDetail("field", "cursor")
	}
	return pos, nil
}
