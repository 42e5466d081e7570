package core

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestJSONSize(t *testing.T) {
	tests := []any{
		nil,
		"",
		"héllo <b> & 🎉",
		42,
		map[string]any{"a": []any{1, "two", nil}, "b": true},
		testCreds{User: "u", Headers: map[string]string{"x": "y"}},
		json.RawMessage(`{ "spaced" : 1 }`),
	}
	for _, v := range tests {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if err := e.Encode(v); err != nil {
			t.Fatal(err)
		}
		enc := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		got, err := JSONSize(v)
		if err != nil || got != len(enc) {
			t.Errorf("JSONSize(%#v) = %d, %v; want %d", v, got, err, len(enc))
		}
	}
	for _, bad := range []any{make(chan int), math.NaN(), map[string]any{"f": func() {}}} {
		if n, err := JSONSize(bad); err == nil || !strings.Contains(err.Error(), "measure JSON size") {
			t.Errorf("JSONSize(%T) = %d, %v; want a wrapped error", bad, n, err)
		}
	}
}
