package mcp

import (
	"bytes"
)

// listing returns the tool's tools/list entry for a protocol revision:
// title and outputSchema (unless hidden) from 2025-06-18, annotations from
// 2025-03-26.
// Schemas are listed exactly as registered (compacted).
func (rt *registeredTool) listing(version string) []byte {
	d := &rt.def
	var b bytes.Buffer
	b.WriteString(`{"name":`)
	b.Write(mustJSON(d.Name))
	if d.Title != "" && version >= Version20250618 {
		b.WriteString(`,"title":`)
		b.Write(mustJSON(d.Title))
	}
	if d.Description != "" {
		b.WriteString(`,"description":`)
		b.Write(mustJSON(d.Description))
	}
	b.WriteString(`,"inputSchema":`)
	b.Write(rt.inRaw)
	if rt.outRaw != nil && !d.HideOutputSchema && version >= Version20250618 {
		b.WriteString(`,"outputSchema":`)
		b.Write(rt.outRaw)
	}
	if d.Annotations != nil && version >= Version20250326 {
		b.WriteString(`,"annotations":`)
		b.Write(mustJSON(d.Annotations))
	}
	if d.Version != "" {
		b.WriteString(`,"version":`)
		b.Write(mustJSON(d.Version))
	}
	b.WriteByte('}')
	return b.Bytes()
}

// mustJSON encodes values that always encode (strings, plain structs).
func mustJSON(v any) []byte {
	out, err := marshalCompact(v)
	if err != nil {
		panic("mcp: encoding a listing value: " + err.Error())
	}
	return out
}
