package mcp

import (
	"strconv"
	"strings"

	"github.com/mcprt/mcprt/internal/jsontext"
)

// Content by revision: a block or field newer than the negotiated
// revision is never sent. Each content block is fitted to the revision
// before it goes out (tool results, sampling messages):
//
//   - audio (from 2025-03-26) becomes, under 2024-11-05, a text block
//     saying audio was omitted, with its MIME type and size;
//   - resource_link (from 2025-06-18) becomes, before that, a text block
//     naming the link: "[resource link] title-or-name: uri (mimeType),
//     N bytes — description";
//   - a block of a type no revision has becomes a text block saying it
//     was omitted;
//   - _meta on blocks and annotations.lastModified exist from 2025-06-18,
//     icons on resource links from 2025-11-25: dropped before;
//   - members a block's type does not have (a title on a text block, say)
//     are dropped in every revision.
//
// Annotations of a downgraded block are kept (fitted too). A block that
// already fits is sent as it is.

// Annotations tell a client how to use or show a content block, a
// resource or a resource template.
type Annotations struct {
	// Audience says who the data is for: RoleUser, RoleAssistant or both.
	Audience []Role `json:"audience,omitempty"`
	// Priority is how important the data is, from 0 (optional) to 1
	// (effectively required); nil leaves it unsaid.
	Priority *float64 `json:"priority,omitempty"`
	// LastModified is when the data last changed, an RFC 3339 time such
	// as "2025-01-12T15:00:58Z"; sent from revision 2025-06-18 on.
	LastModified string `json:"lastModified,omitempty"`
}

// Icon is an image a client may show for a resource link, a resource, a
// resource template or a prompt; icons are sent from revision 2025-11-25
// on.
type Icon struct {
	// Src is the icon's URI: an https: URL or a data: URI.
	Src string `json:"src"`
	// MIMEType is the image's type, e.g. "image/png" (optional).
	MIMEType string `json:"mimeType,omitempty"`
	// Sizes are the sizes the image fits, e.g. "48x48" or "any" (optional).
	Sizes []string `json:"sizes,omitempty"`
	// Theme is "light" or "dark" when the icon suits only that theme.
	Theme string `json:"theme,omitempty"`
}

// contentField is one member of a content block, as a bit.
type contentField uint16

const (
	fText contentField = 1 << iota
	fData
	fMIME
	fURI
	fName
	fTitle
	fDesc
	fSize
	fIcons
	fResource
	fAnnotations
	fMeta
	fLastModified // annotations.lastModified
)

// setFields returns the members c sets.
func setFields(c *Content) contentField {
	var f contentField
	add := func(bit contentField, set bool) {
		if set {
			f |= bit
		}
	}
	add(fText, c.Text != "")
	add(fData, c.Data != "")
	add(fMIME, c.MIMEType != "")
	add(fURI, c.URI != "")
	add(fName, c.Name != "")
	add(fTitle, c.Title != "")
	add(fDesc, c.Description != "")
	add(fSize, c.Size != 0)
	add(fIcons, len(c.Icons) > 0)
	add(fResource, c.Resource != nil)
	add(fAnnotations, c.Annotations != nil)
	add(fMeta, len(c.Meta) > 0)
	add(fLastModified, c.Annotations != nil && c.Annotations.LastModified != "")
	return f
}

// allowedFields returns the members a block of type typ may carry under
// version, and whether version has the type at all.
func allowedFields(typ, version string) (contentField, bool) {
	common := fAnnotations
	if version >= Version20250618 {
		common |= fMeta | fLastModified
	}
	switch typ {
	case "text":
		return common | fText, true
	case "image":
		return common | fData | fMIME, true
	case "audio":
		return common | fData | fMIME, version >= Version20250326
	case "resource":
		return common | fResource, true
	case "resource_link":
		f := common | fURI | fName | fTitle | fDesc | fMIME | fSize
		if version >= Version20251125 {
			f |= fIcons
		}
		return f, version >= Version20250618
	}
	return 0, false
}

// ContentForRevision returns c fitted to the protocol revision version:
// c itself when it fits, otherwise a copy without what the revision
// lacks, or a text block in place of a block the revision cannot carry
// (see the rules above).
func ContentForRevision(c Content, version string) Content {
	allowed, ok := allowedFields(c.Type, version)
	if ok && setFields(&c)&^allowed == 0 {
		return c
	}
	if !ok {
		allowed, _ = allowedFields("text", version)
		return keepFields(Content{Type: "text", Text: placeholderText(&c, version), Annotations: c.Annotations,
			Meta: c.Meta}, allowed)
	}
	return keepFields(c, allowed)
}

// contentForRevision fits every block of a result to version. It returns
// blocks itself when every block fits, else a new slice.
func contentForRevision(blocks []Content, version string) []Content {
	for i := range blocks {
		allowed, ok := allowedFields(blocks[i].Type, version)
		if ok && setFields(&blocks[i])&^allowed == 0 {
			continue
		}
		out := make([]Content, len(blocks))
		copy(out, blocks[:i])
		for j := i; j < len(blocks); j++ {
			out[j] = ContentForRevision(blocks[j], version)
		}
		return out
	}
	return blocks
}

// keepFields returns a copy of c with only the allowed members.
func keepFields(c Content, allowed contentField) Content {
	out := Content{Type: c.Type}
	if allowed&fText != 0 {
		out.Text = c.Text
	}
	if allowed&fData != 0 {
		out.Data = c.Data
	}
	if allowed&fMIME != 0 {
		out.MIMEType = c.MIMEType
	}
	if allowed&fURI != 0 {
		out.URI = c.URI
	}
	if allowed&fName != 0 {
		out.Name = c.Name
	}
	if allowed&fTitle != 0 {
		out.Title = c.Title
	}
	if allowed&fDesc != 0 {
		out.Description = c.Description
	}
	if allowed&fSize != 0 {
		out.Size = c.Size
	}
	if allowed&fIcons != 0 {
		out.Icons = c.Icons
	}
	if allowed&fResource != 0 {
		out.Resource = c.Resource
	}
	if allowed&fMeta != 0 {
		out.Meta = c.Meta
	}
	if a := c.Annotations; a != nil && allowed&fAnnotations != 0 {
		fitted := *a
		if allowed&fLastModified == 0 {
			fitted.LastModified = ""
		}
		if len(fitted.Audience) > 0 || fitted.Priority != nil || fitted.LastModified != "" {
			out.Annotations = &fitted
		}
	}
	return out
}

// placeholderText is the text that replaces a block the revision cannot
// carry.
func placeholderText(c *Content, version string) string {
	var b strings.Builder
	switch c.Type {
	case "resource_link":
		b.WriteString("[resource link] ")
		name := c.Title
		if name == "" {
			name = c.Name
		}
		if name != "" {
			b.WriteString(name + ": ")
		}
		b.WriteString(c.URI)
		if c.MIMEType != "" {
			b.WriteString(" (" + c.MIMEType + ")")
		}
		if c.Size > 0 {
			b.WriteString(", " + strconv.FormatInt(c.Size, 10) + " bytes")
		}
		if c.Description != "" {
			b.WriteString(" — " + c.Description)
		}
	case "audio":
		b.WriteString("[audio omitted: protocol revision " + version + " has no audio content")
		if c.MIMEType != "" {
			b.WriteString("; " + c.MIMEType)
		}
		b.WriteString(", " + strconv.Itoa(base64Len(c.Data)) + " bytes]")
	default:
		b.WriteString("[content of type " + strconv.Quote(jsontext.Clip(c.Type, jsontext.MaxEcho)) + " omitted: protocol revision " +
			version + " has no such content]")
	}
	return b.String()
}

// base64Len is the number of bytes base64 data decodes to (about, when it
// is not valid base64).
func base64Len(data string) int {
	n := len(data) * 3 / 4
	for i := len(data) - 1; i >= 0 && i >= len(data)-2 && data[i] == '='; i-- {
		n--
	}
	return max(n, 0)
}
