package store

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/memory"
)

func TestMemoryExportImportRoundTrip(t *testing.T) {
	memBackends(t, func(t *testing.T, svc *memory.Service, _ *core.ManualClock) {
		ctx := testCtx(t)
		svc.Put(ctx, "b", "k:1", json.RawMessage(`{"x": "y"}`))
		svc.Put(ctx, "a", "k2", json.RawMessage(`"line\nbreak"`))
		var buf bytes.Buffer
		n, err := svc.Export(ctx, &buf, "", 0)
		if err != nil || n != 2 {
			t.Fatalf("Export = %d, %v", n, err)
		}
		want := `{"namespace":"a","key":"k2","value":"line\nbreak","storedAt":"2026-03-01T12:00:00Z"}` + "\n" +
			`{"namespace":"b","key":"k:1","value":{"x":"y"},"storedAt":"2026-03-01T12:00:00Z"}` + "\n"
		if buf.String() != want {
			t.Fatalf("export:\n%s\nwant:\n%s", buf.String(), want)
		}
		if _, err := svc.Export(ctx, &bytes.Buffer{}, "", 10); core.AsError(err).Code != core.CodeResourceExhausted {
			t.Fatalf("export over its limit: %v", err)
		}

		// Into a fresh store: same entries, same times.
		fresh := memory.NewService(memory.NewMemStore(), core.NewManualClock(t0.Add(99)))
		res, err := fresh.Import(ctx, strings.NewReader(buf.String()), memory.ImportOptions{})
		if err != nil || res.Entries != 2 || res.Created != 2 {
			t.Fatalf("Import = %+v, %v", res, err)
		}
		var again bytes.Buffer
		fresh.Export(ctx, &again, "", 0)
		if again.String() != want {
			t.Fatalf("round trip changed the data:\n%s", again.String())
		}

		// Back into the original: overwrite, then skip.
		res, err = svc.Import(ctx, strings.NewReader(buf.String()), memory.ImportOptions{})
		if err != nil || res.Replaced != 2 {
			t.Fatalf("re-import = %+v, %v", res, err)
		}
		res, err = svc.Import(ctx, strings.NewReader(buf.String()+`{"key":"new","value":1}`), memory.ImportOptions{SkipExisting: true})
		if err != nil || res.Skipped != 2 || res.Created != 1 || res.Entries != 3 {
			t.Fatalf("skip-existing import = %+v, %v", res, err)
		}
		got, found, _ := svc.Get(ctx, "default", "new")
		if !found || !got.StoredAt.Equal(t0) {
			t.Fatalf("record without namespace/storedAt: %+v %v", got, found)
		}
	})
}

// A file with bad lines imports nothing and names every bad line.
func TestMemoryImportAllOrNothing(t *testing.T) {
	lines := []string{
		`{"namespace":"n","key":"good1","value":1}`,
		``,
		`not json`,
		`{"namespace":"n","key":"good2","value":{"a":1}}`,
		`{"namespace":"n","key":"","value":1}`,
		`{"namespace":"bad ns","key":"k","value":1}`,
		`{"namespace":"n","key":"k","value":null}`,
		`{"namespace":"n","key":"k"}`,
		`{"namespace":"n","key":"k","value":1,"extra":true}`,
		`{"namespace":"n","Key":"k","value":1}`,
		`{"namespace":"n","key":"k","key":"k2","value":1}`,
		`{"namespace":"n","key":"k","value":1,"storedAt":"yesterday"}`,
		`{"namespace":"n","key":"k","value":1} {"x":1}`,
		`[1,2]`,
		`{"namespace":"n","key":"k","value":"` + strings.Repeat("x", memory.MaxValueBytes) + `"}`,
		`{"namespace":"n","key":"deep","value":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`,
		strings.Repeat("y", memory.MaxLineBytes+10),
		`{"namespace":"n","key":"good3","value":"still good"}`,
	}
	wantBad := []int{3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}
	memBackends(t, func(t *testing.T, svc *memory.Service, _ *core.ManualClock) {
		ctx := testCtx(t)
		svc.Put(ctx, "n", "good1", json.RawMessage(`"before"`))
		_, err := svc.Import(ctx, strings.NewReader(strings.Join(lines, "\n")), memory.ImportOptions{})
		wantCode(t, err, core.CodeInvalidArgument)
		ce := core.AsError(err)
		bad, _ := ce.Details["errors"].([]memory.LineError)
		var got []int
		for _, b := range bad {
			got = append(got, b.Line)
			if b.Message == "" {
				t.Errorf("line %d: no message", b.Line)
			}
		}
		if len(got) != len(wantBad) {
			t.Fatalf("bad lines %v, want %v\n%+v", got, wantBad, bad)
		}
		for i := range got {
			if got[i] != wantBad[i] {
				t.Fatalf("bad lines %v, want %v\n%+v", got, wantBad, bad)
			}
		}
		if ce.Details["badLines"] != len(wantBad) {
			t.Errorf("badLines = %v", ce.Details["badLines"])
		}
		st, _ := svc.Stats(ctx, "")
		e, _, _ := svc.Get(ctx, "n", "good1")
		if st.Entries != 1 || string(e.Value) != `"before"` {
			t.Fatalf("a failed import changed the store: %+v, good1=%s", st, e.Value)
		}
	})
}
