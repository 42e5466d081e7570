package memory

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"

	"github.com/mcprt/mcprt/domain/internal/check"
)

// normNamespace applies the default and checks a namespace.
func normNamespace(ns string) (string, error) {
	if ns == "" {
		return DefaultNamespace, nil
	}
	return ns, checkNamespace(ns)
}

// checkNamespace accepts 1 to MaxNamespaceBytes characters of A-Z a-z 0-9
// . _ - / (never ':', which separates namespace and key in an address),
// whose '/'-separated segments are neither empty nor "." or "..": a
// namespace looks like a path ("proj/team") but never walks one.
func checkNamespace(ns string) error {
	if len(ns) > MaxNamespaceBytes {
		return check.Invalid("namespace", "is %d bytes long; the limit is %d", len(ns), MaxNamespaceBytes)
	}
	for i := 0; i < len(ns); i++ {
		c := ns[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/') {
			return check.Invalid("namespace", "%q has %q at byte %d; use only letters A-Z a-z, digits and . _ - / (no ':', which separates namespace and key)", ns, rune(c), i)
		}
	}
	for _, seg := range strings.Split(ns, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return check.Invalid("namespace", "%q has an empty, \".\" or \"..\" segment; use segments like \"proj/team\" (no leading, trailing or doubled '/')", ns)
		}
	}
	return nil
}

// checkKey accepts any 1 to MaxKeyBytes of UTF-8 text without control
// characters. Keys are opaque: "a/../b" is just a key, never a file path.
func checkKey(key string) error { return check.Text("key", key, MaxKeyBytes, true) }

// normValue checks a value and returns its compact form.
func normValue(raw json.RawMessage) (json.RawMessage, error) {
	return check.JSON("value", raw, MaxValueBytes, MaxValueDepth, false)
}

// IndexText returns the text a full-text index should hold for a value:
// its strings, object member names and numbers, separated by spaces.
// Backends index this rather than the JSON so that punctuation and escapes
// do not become words.
func IndexText(value json.RawMessage) string {
	var sb strings.Builder
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			// io.EOF at the end; any other error means unvalidated
			// JSON was passed: index what was read.
			break
		}
		switch t := tok.(type) {
		case string:
			sb.WriteString(t)
			sb.WriteByte(' ')
		case json.Number:
			sb.WriteString(t.String())
			sb.WriteByte(' ')
		}
	}
	return sb.String()
}

// Terms splits a full-text query into its words: runs of letters, digits
// and combining marks, lower-cased. Backends match entries that hold every
// word.
func Terms(query string) []string {
	fields := strings.FieldsFunc(query, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
	for i, f := range fields {
		fields[i] = strings.ToLower(f)
	}
	return fields
}
