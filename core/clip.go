package core

import "github.com/mcprt/mcprt/internal/jsontext"

// Clip returns s when it is at most max bytes long. Otherwise it returns the
// longest prefix of s that ends on a character boundary and, with "…"
// (U+2026, three bytes in UTF-8) appended, is at most max bytes long. So
// the result is never longer than max bytes and never ends in part of a
// multi-byte character. When max is smaller than the ellipsis itself, the
// result is the longest whole-character prefix of at most max bytes, without
// the ellipsis; for max <= 0 it is "".
//
// Lengths are in bytes because the limits Clip serves (log fields, error
// values, wire sizes) are in bytes. "Character" means a Unicode code point:
// a combining mark may be separated from the character before it. In a
// string that is not valid UTF-8, an invalid byte counts as one character.
func Clip(s string, max int) string { return jsontext.Clip(s, max) }
