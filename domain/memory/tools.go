package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/mcprt/mcprt/domain/internal/check"
	"strings"
	"time"

	"github.com/mcprt/mcprt/domain/toolspec"
)

// MaxExportBytes bounds one memory_export page: its NDJSON text as a JSON
// string (escapes counted), which the result carries twice (text and
// structured content), so a page fits the default tools.maxResultBytes
// (10 MiB).
const MaxExportBytes = 4 << 20

// Tools holds the typed handlers of the memory_* MCP tools, each a
// func(ctx, In) (Out, error) ready for mcp.AddTypedTool. Errors are
// *core.Error values.
type Tools struct{ svc *Service }

// NewTools returns the tool handlers over svc.
func NewTools(svc *Service) *Tools { return &Tools{svc: svc} }

// ToolSpecs returns the names, descriptions and annotations of the memory
// tools, in the order of the Tools methods.
func ToolSpecs() []toolspec.Spec {
	return []toolspec.Spec{
		{Name: "memory_store", Title: "Store a memory", Description: "Store a JSON value under {namespace}:{key}, replacing any value there.",
			Destructive: true}, // may overwrite; a repeat refreshes storedAt, so not idempotent
		{Name: "memory_retrieve", Title: "Retrieve a memory", Description: "Read the value stored under {namespace}:{key}.",
			ReadOnly: true, Idempotent: true},
		{Name: "memory_search", Title: "Search memories", Description: "Find entries whose key contains the query (newest first), or with fullText whose value has every word of it.",
			ReadOnly: true, Idempotent: true},
		{Name: "memory_list", Title: "List memories", Description: "List entries (without values) by namespace and key, a page at a time.",
			ReadOnly: true, Idempotent: true},
		{Name: "memory_delete", Title: "Delete a memory", Description: "Delete the entry at {namespace}:{key} (deleted=false when there was none).",
			Destructive: true, Idempotent: true},
		{Name: "memory_stats", Title: "Memory statistics", Description: "Count entries and bytes, per namespace.",
			ReadOnly: true, Idempotent: true},
		{Name: "memory_export", Title: "Export memories", Description: "Export entries as NDJSON, one {namespace, key, value, storedAt} per line, up to 4 MiB per call: while hasMore, call again with cursor=nextCursor.",
			ReadOnly: true, Idempotent: true},
		{Name: "memory_import", Title: "Import memories", Description: "Import NDJSON as memory_export writes it, all or nothing.",
			Destructive: true}, // overwrites unless skipExisting; records without storedAt get the current time
	}
}

func stamp(t time.Time) string { return check.Stamp(t) }

// StoreInput is the input of memory_store.
type StoreInput struct {
	Key       string          `json:"key" jsonschema:"1-512 bytes"`
	Value     json.RawMessage `json:"value" jsonschema:"Any JSON but null, at most 100 KiB"`
	Namespace string          `json:"namespace,omitempty" jsonschema:"Letters, digits, . _ - / (default \"default\")"`
}

// StoreOutput is the result of memory_store.
type StoreOutput struct {
	Success   bool   `json:"success" jsonschema:"Always true: failures are tool errors"`
	Key       string `json:"key" jsonschema:"The key written"`
	Namespace string `json:"namespace" jsonschema:"The namespace written"`
	Message   string `json:"message" jsonschema:"What happened, for people"`
	StoredAt  string `json:"storedAt" jsonschema:"When the value was stored (RFC 3339, UTC)"`
	Replaced  bool   `json:"replaced" jsonschema:"Whether an earlier value was overwritten"`
	Size      int    `json:"size" jsonschema:"Size in bytes of the stored compact JSON"`
}

// Store is the memory_store handler.
func (t *Tools) Store(ctx context.Context, in StoreInput) (StoreOutput, error) {
	e, replaced, err := t.svc.Put(ctx, in.Namespace, in.Key, in.Value)
	if err != nil {
		return StoreOutput{}, err
	}
	msg := "stored " + e.Address()
	if replaced {
		msg += ", replacing the earlier value"
	}
	return StoreOutput{Success: true, Key: e.Key, Namespace: e.Namespace, Message: msg,
		StoredAt: stamp(e.StoredAt), Replaced: replaced, Size: len(e.Value)}, nil
}

// KeyInput is the input of memory_retrieve and memory_delete.
type KeyInput struct {
	Key       string `json:"key"`
	Namespace string `json:"namespace,omitempty" jsonschema:"Default \"default\""`
}

// RetrieveOutput is the result of memory_retrieve.
type RetrieveOutput struct {
	Found     bool            `json:"found" jsonschema:"Whether an entry exists at the address"`
	Key       string          `json:"key" jsonschema:"The key asked for"`
	Namespace string          `json:"namespace" jsonschema:"The namespace asked for"`
	Value     json.RawMessage `json:"value,omitempty" jsonschema:"The stored value, when found"`
	StoredAt  string          `json:"storedAt,omitempty" jsonschema:"When the value was stored (RFC 3339, UTC), when found"`
	Message   string          `json:"message,omitempty" jsonschema:"Why nothing was returned, when not found"`
}

// Retrieve is the memory_retrieve handler. A missing entry is a result
// with found=false, not an error.
func (t *Tools) Retrieve(ctx context.Context, in KeyInput) (RetrieveOutput, error) {
	e, found, err := t.svc.Get(ctx, in.Namespace, in.Key)
	if err != nil {
		return RetrieveOutput{}, err
	}
	ns, _ := normNamespace(in.Namespace) // valid: Get checked it
	if !found {
		return RetrieveOutput{Key: in.Key, Namespace: ns,
			Message: fmt.Sprintf("nothing is stored at %s:%s; memory_search or memory_list show what is", ns, in.Key)}, nil
	}
	return RetrieveOutput{Found: true, Key: e.Key, Namespace: e.Namespace, Value: e.Value, StoredAt: stamp(e.StoredAt)}, nil
}

// SearchInput is the input of memory_search.
type SearchInput struct {
	Query     string `json:"query"`
	Namespace string `json:"namespace,omitempty" jsonschema:"Default: all"`
	Limit     int    `json:"limit,omitempty" jsonschema:"1-50, default 10"`
	FullText  bool   `json:"fullText,omitempty" jsonschema:"Search values' words, best match first"`
}

// SearchResult is one hit of memory_search.
type SearchResult struct {
	Key       string          `json:"key" jsonschema:"The entry's key"`
	Namespace string          `json:"namespace" jsonschema:"The entry's namespace"`
	Value     json.RawMessage `json:"value" jsonschema:"The stored value"`
	StoredAt  string          `json:"storedAt" jsonschema:"When the value was stored (RFC 3339, UTC)"`
}

// SearchOutput is the result of memory_search.
type SearchOutput struct {
	Query     string         `json:"query" jsonschema:"The query"`
	Namespace string         `json:"namespace" jsonschema:"The namespace searched, or \"all\""`
	Count     int            `json:"count" jsonschema:"Number of results"`
	Results   []SearchResult `json:"results" jsonschema:"The matching entries"`
}

// Search is the memory_search handler.
func (t *Tools) Search(ctx context.Context, in SearchInput) (SearchOutput, error) {
	hits, err := t.svc.Search(ctx, SearchQuery(in))
	if err != nil {
		return SearchOutput{}, err
	}
	out := SearchOutput{Query: in.Query, Namespace: in.Namespace, Count: len(hits), Results: make([]SearchResult, len(hits))}
	if out.Namespace == "" {
		out.Namespace = "all"
	}
	for i, e := range hits {
		out.Results[i] = SearchResult{Key: e.Key, Namespace: e.Namespace, Value: e.Value, StoredAt: stamp(e.StoredAt)}
	}
	return out, nil
}

// ListInput is the input of memory_list.
type ListInput struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"Default: all"`
	Limit     int    `json:"limit,omitempty" jsonschema:"1-1000, default 100"`
	Offset    int    `json:"offset,omitempty"`
}

// ListEntry is one entry of memory_list.
type ListEntry struct {
	Key       string `json:"key" jsonschema:"The entry's key"`
	Namespace string `json:"namespace" jsonschema:"The entry's namespace"`
	StoredAt  string `json:"storedAt" jsonschema:"When the value was stored (RFC 3339, UTC)"`
	Size      int    `json:"size" jsonschema:"Value size in bytes (compact JSON)"`
}

// ListOutput is the result of memory_list.
type ListOutput struct {
	Entries []ListEntry `json:"entries" jsonschema:"The page of entries, by namespace then key"`
	Total   int         `json:"total" jsonschema:"Number of entries that match, on all pages"`
	HasMore bool        `json:"hasMore" jsonschema:"Whether entries follow this page"`
}

// List is the memory_list handler.
func (t *Tools) List(ctx context.Context, in ListInput) (ListOutput, error) {
	return t.list(ctx, ListQuery{Namespace: in.Namespace, Limit: in.Limit, Offset: in.Offset})
}

// Recent is memory_list's output for the limit most recently stored
// entries, newest first (the memory://entries resource).
func (t *Tools) Recent(ctx context.Context, limit int) (ListOutput, error) {
	return t.list(ctx, ListQuery{Limit: limit, Recent: true})
}

func (t *Tools) list(ctx context.Context, in ListQuery) (ListOutput, error) {
	page, err := t.svc.List(ctx, in)
	if err != nil {
		return ListOutput{}, err
	}
	out := ListOutput{Entries: make([]ListEntry, len(page.Entries)), Total: page.Total,
		HasMore: in.Offset+len(page.Entries) < page.Total}
	for i, e := range page.Entries {
		out.Entries[i] = ListEntry{Key: e.Key, Namespace: e.Namespace, StoredAt: stamp(e.StoredAt), Size: e.Size}
	}
	return out, nil
}

// DeleteOutput is the result of memory_delete.
type DeleteOutput struct {
	Deleted   bool   `json:"deleted" jsonschema:"Whether an entry was removed"`
	Key       string `json:"key" jsonschema:"The key asked for"`
	Namespace string `json:"namespace" jsonschema:"The namespace asked for"`
	Message   string `json:"message" jsonschema:"What happened, for people"`
}

// Delete is the memory_delete handler.
func (t *Tools) Delete(ctx context.Context, in KeyInput) (DeleteOutput, error) {
	deleted, err := t.svc.Delete(ctx, in.Namespace, in.Key)
	if err != nil {
		return DeleteOutput{}, err
	}
	ns, _ := normNamespace(in.Namespace)
	msg := "deleted " + ns + ":" + in.Key
	if !deleted {
		msg = "nothing was stored at " + ns + ":" + in.Key + "; nothing to delete"
	}
	return DeleteOutput{Deleted: deleted, Key: in.Key, Namespace: ns, Message: msg}, nil
}

// StatsInput is the input of memory_stats.
type StatsInput struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"Default: all"`
}

// NamespaceOutput summarises one namespace in memory_stats.
type NamespaceOutput struct {
	Namespace string `json:"namespace" jsonschema:"The namespace"`
	Entries   int    `json:"entries" jsonschema:"Number of entries"`
	Bytes     int64  `json:"bytes" jsonschema:"Total value bytes"`
	Oldest    string `json:"oldest" jsonschema:"Oldest storedAt (RFC 3339, UTC)"`
	Newest    string `json:"newest" jsonschema:"Newest storedAt (RFC 3339, UTC)"`
}

// StatsOutput is the result of memory_stats.
type StatsOutput struct {
	Entries    int               `json:"entries" jsonschema:"Number of entries"`
	Bytes      int64             `json:"bytes" jsonschema:"Total value bytes"`
	Namespaces []NamespaceOutput `json:"namespaces" jsonschema:"Per-namespace figures, by name (at most 1000)"`
	Truncated  bool              `json:"truncated" jsonschema:"Whether more namespaces exist than are listed"`
}

// Stats is the memory_stats handler.
func (t *Tools) Stats(ctx context.Context, in StatsInput) (StatsOutput, error) {
	st, err := t.svc.Stats(ctx, in.Namespace)
	if err != nil {
		return StatsOutput{}, err
	}
	out := StatsOutput{Entries: st.Entries, Bytes: st.Bytes, Truncated: st.Truncated, Namespaces: make([]NamespaceOutput, len(st.Namespaces))}
	for i, n := range st.Namespaces {
		out.Namespaces[i] = NamespaceOutput{Namespace: n.Namespace, Entries: n.Entries, Bytes: n.Bytes, Oldest: stamp(n.Oldest), Newest: stamp(n.Newest)}
	}
	return out, nil
}

// ExportInput is the input of memory_export.
type ExportInput struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"Default: all"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page"`
}

// ExportOutput is the result of memory_export.
type ExportOutput struct {
	Data       string `json:"data" jsonschema:"NDJSON: one {namespace, key, value, storedAt} record per line"`
	Count      int    `json:"count" jsonschema:"Number of records"`
	Bytes      int    `json:"bytes" jsonschema:"Length of data in bytes"`
	HasMore    bool   `json:"hasMore" jsonschema:"More entries follow: call again with cursor=nextCursor"`
	NextCursor string `json:"nextCursor,omitempty" jsonschema:"Cursor of the next page"`
}

// Export is the memory_export handler: one page of at most
// MaxExportBytes, with the cursor of the next.
func (t *Tools) Export(ctx context.Context, in ExportInput) (ExportOutput, error) {
	var b bytes.Buffer
	n, next, err := t.svc.ExportPage(ctx, &b, in.Namespace, in.Cursor, MaxExportBytes)
	if err != nil {
		return ExportOutput{}, err
	}
	return ExportOutput{Data: b.String(), Count: n, Bytes: b.Len(), HasMore: next != "", NextCursor: next}, nil
}

// ImportInput is the input of memory_import.
type ImportInput struct {
	Data         string `json:"data"`
	SkipExisting bool   `json:"skipExisting,omitempty" jsonschema:"Keep existing entries"`
}

// ImportOutput is the result of memory_import.
type ImportOutput struct {
	Imported int    `json:"imported" jsonschema:"Number of records read"`
	Created  int    `json:"created" jsonschema:"Entries that did not exist before"`
	Replaced int    `json:"replaced" jsonschema:"Entries overwritten"`
	Skipped  int    `json:"skipped" jsonschema:"Entries kept because they existed (skipExisting)"`
	Message  string `json:"message" jsonschema:"What happened, for people"`
}

// Import is the memory_import handler: all or nothing; a bad line is an
// INVALID_ARGUMENT error listing every bad line number in details.errors.
func (t *Tools) Import(ctx context.Context, in ImportInput) (ImportOutput, error) {
	res, err := t.svc.Import(ctx, strings.NewReader(in.Data), ImportOptions{SkipExisting: in.SkipExisting})
	if err != nil {
		return ImportOutput{}, err
	}
	return ImportOutput{Imported: res.Entries, Created: res.Created, Replaced: res.Replaced, Skipped: res.Skipped,
		Message: fmt.Sprintf("imported %d record(s): %d created, %d replaced, %d skipped", res.Entries, res.Created, res.Replaced, res.Skipped)}, nil
}
