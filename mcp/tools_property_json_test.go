package mcp

// Random JSON for the tool runtime properties of tools_property_test.go.

import (
	"slices"
	"strings"
)

// ---------------------------------------------------------------------------
// Random JSON.

// tpWS returns random insignificant whitespace (mostly none). Never "\n":
// a message is one line.
func tpWS(c *propRand) string {
	if c.Intn(3) != 0 {
		return ""
	}
	return []string{" ", "\t", "  ", " \t ", "\r", "\r\t"}[c.Intn(6)]
}

var tpStringPieces = []string{"a", "b", "Z", "9", " ", "_meta", "name", "arguments", `\"`, `\\`, `\/`, `\n`,
	`\t`, `\u00e9`, `\ud83d\ude00`, `\u0000`, "é", "日本", "😀", "<>&", "{", "]", ",", ":", "null"}

// tpJSONString returns a JSON string literal (escapes and raw UTF-8).
func tpJSONString(c *propRand) string {
	var b strings.Builder
	b.WriteByte('"')
	for range c.Intn(6) {
		b.WriteString(tpStringPieces[c.Intn(len(tpStringPieces))])
	}
	b.WriteByte('"')
	return b.String()
}

var tpNumbers = []string{"0", "-0", "1", "-17", "3.25", "1e3", "-2.5E-3", "1E+2", "9007199254740993",
	"0.0000001", "1e300", "123456789012345678901234567890", "-1.0"}

// tpKeys are object member names; tpJSON never writes one twice in an
// object, and none decodes like another.
var tpKeys = []string{"a", "b", "message", "ms", "_meta", "name", "arguments", "x y", "é", "日本", "", "A", "n"}

// tpJSON returns a random JSON value, nested at most depth levels, with
// random whitespace between tokens. Member names are unique per object.
func tpJSON(c *propRand, depth int) string {
	k := c.Intn(8)
	if depth <= 0 && k >= 6 {
		k = c.Intn(6)
	}
	switch k {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[c.Intn(2)]
	case 2, 3:
		return tpNumbers[c.Intn(len(tpNumbers))]
	case 4, 5:
		return tpJSONString(c)
	case 6:
		return tpJSONArray(c, depth)
	}
	return tpJSONObject(c, depth)
}

func tpJSONArray(c *propRand, depth int) string {
	var b strings.Builder
	b.WriteString("[" + tpWS(c))
	for i := range c.Intn(4) {
		if i > 0 {
			b.WriteString(tpWS(c) + "," + tpWS(c))
		}
		b.WriteString(tpJSON(c, depth-1))
	}
	b.WriteString(tpWS(c) + "]")
	return b.String()
}

func tpJSONObject(c *propRand, depth int) string {
	var b strings.Builder
	b.WriteString("{" + tpWS(c))
	keys := slices.Clone(tpKeys)
	c.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for i, key := range keys[:c.Intn(5)] {
		if i > 0 {
			b.WriteString(tpWS(c) + "," + tpWS(c))
		}
		b.WriteString(quoteString(key) + tpWS(c) + ":" + tpWS(c) + tpJSON(c, depth-1))
	}
	b.WriteString(tpWS(c) + "}")
	return b.String()
}

// tpNonObject returns a JSON value that is not an object.
func tpNonObject(c *propRand) string {
	for {
		if v := tpJSON(c, 3); v[0] != '{' {
			return v
		}
	}
}
