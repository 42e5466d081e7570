package streamable

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// The standard and custom headers of a stateless request. Header names
// match case-insensitively (net/http canonicalises them); values are
// compared case-sensitively after the optional whitespace around them is
// removed.
//
//   - Mcp-Method is required and names the body's method.
//   - Mcp-Name is required for tools/call and prompts/get (the name) and
//     resources/read (the uri), and must name the body's; on tasks/get,
//     tasks/update and tasks/cancel it is optional and, when sent, names the
//     task id; other methods must not send it.
//   - A tools/call of a tool whose input schema marks a property with
//     "x-mcp-header": NAME carries the argument's value in Mcp-Param-NAME
//     whenever the argument is present and not null, and only then. The
//     value is the string itself, true or false, or the integer in decimal;
//     a value wrapped as =?base64?...?= is the standard (padded) Base64 of
//     the value's UTF-8 text, and must decode. Only string, integer and
//     boolean arguments can be mirrored.
//
// Any disagreement is -32020 (HeaderMismatch) with HTTP 400.

// headerParamPrefix starts the name of a custom parameter header.
const headerParamPrefix = "Mcp-Param-"

// headerParam is one x-mcp-header annotation: the argument at path is
// mirrored into Mcp-Param-<header>.
type headerParam struct {
	path   []string
	header string
}

// headerParams caches each tool's x-mcp-header annotations, keyed by tool
// name; an entry holds the input schema it was read from, so a tool
// registered again under the same name is read again.
type headerParams struct {
	m sync.Map // tool name -> *toolHeaderParams
}

type toolHeaderParams struct {
	schema json.RawMessage
	params []headerParam
}

// of returns the annotations of t's input schema.
func (c *headerParams) of(t mcp.Tool) []headerParam {
	if v, ok := c.m.Load(t.Name); ok {
		e := v.(*toolHeaderParams)
		if sameBytes(e.schema, t.InputSchema) {
			return e.params
		}
	}
	var params []headerParam
	collectHeaderParams(t.InputSchema, nil, &params)
	c.m.Store(t.Name, &toolHeaderParams{schema: t.InputSchema, params: params})
	return params
}

// sameBytes reports whether a and b are the same slice (not merely equal).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// collectHeaderParams appends the x-mcp-header annotations of schema's
// properties, nested object properties included, to out.
func collectHeaderParams(schema json.RawMessage, path []string, out *[]headerParam) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return
	}
	for name, prop := range s.Properties {
		p := append(append([]string(nil), path...), name)
		var ann struct {
			Header *string `json:"x-mcp-header"`
		}
		if json.Unmarshal(prop, &ann) == nil && ann.Header != nil && *ann.Header != "" {
			*out = append(*out, headerParam{path: p, header: *ann.Header})
		}
		collectHeaderParams(prop, p, out)
	}
}

// nameRequired reports whether a stateless request of method must send
// Mcp-Name.
func nameRequired(method string) bool {
	switch method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet, mcp.MethodResourcesRead:
		return true
	}
	return false
}

// headerValue returns the one value of header name in r, trimmed, and
// whether it was sent; ok is false (with many true) when it was sent more
// than once.
func headerValue(r *http.Request, name string) (v string, sent, many bool) {
	vs := r.Header.Values(name)
	switch len(vs) {
	case 0:
		return "", false, false
	case 1:
		return trimHeader(vs[0]), true, false
	}
	return "", true, true
}

// checkStandardHeaders checks Mcp-Method and Mcp-Name against the body; it
// returns what is wrong, or "".
func checkStandardHeaders(r *http.Request, req *jsonrpc.Request) string {
	m, sent, many := headerValue(r, headerMethod)
	switch {
	case many:
		return "the " + headerMethod + " header is sent more than once; send it once, with the body's method " + clipText(req.Method)
	case !sent || m == "":
		return "no " + headerMethod + " header. A stateless request names its method in " + headerMethod +
			" (here " + clipText(req.Method) + ")"
	case m != req.Method:
		return "the " + headerMethod + " header says " + clipText(m) + " but the body's method is " +
			clipText(req.Method) + "; send the body's method (values are case-sensitive)"
	}
	name, sent, many := headerValue(r, headerName)
	target, named := targetOf(req)
	_, isString := jsontext.String(jsontext.Member(req.Params, targetKey(req.Method)))
	switch {
	case many:
		return "the " + headerName + " header is sent more than once; send it once"
	case sent && !named:
		return "the " + headerName + " header is set, but " + clipText(req.Method) + " names no tool, " +
			"prompt, resource or task; leave it out"
	case !sent && nameRequired(req.Method) && isString: // a body without the name is the server's -32602
		return "no " + headerName + " header. A stateless " + req.Method + " names its target in " + headerName +
			" (here " + clipText(target) + ")"
	case sent && name != target:
		return "the " + headerName + " header says " + clipText(name) + " but the body names " +
			clipText(target) + "; send the body's name"
	}
	return ""
}

// checkParamHeaders checks the Mcp-Param-* headers of a tools/call against
// its arguments, by the tool's x-mcp-header annotations; it returns what is
// wrong, or "". An unknown tool is left to the server.
func (h *Handler) checkParamHeaders(r *http.Request, req *jsonrpc.Request) string {
	if req.Method != mcp.MethodToolsCall {
		return ""
	}
	name, _ := jsontext.String(jsontext.Member(req.Params, "name"))
	t, ok := h.srv.LookupTool(name)
	if !ok {
		return ""
	}
	params := h.headerParams.of(t)
	if len(params) == 0 {
		return ""
	}
	args := jsontext.Member(req.Params, "arguments")
	for _, p := range params {
		hname := headerParamPrefix + p.header
		v, sent, many := headerValue(r, hname)
		raw := args
		for _, key := range p.path {
			raw = jsontext.Member(raw, key)
		}
		arg := strings.Join(p.path, ".")
		present := len(raw) > 0 && string(raw) != "null"
		switch {
		case many:
			return "the " + hname + " header is sent more than once; send it once"
		case !present && sent:
			return "the " + hname + " header is set but the argument " + clipText(arg) + " is absent; leave the header out"
		case !present:
			continue
		case !sent:
			return "no " + hname + " header: the tool " + clipText(name) + " mirrors its argument " + clipText(arg) +
				" into it (x-mcp-header); send the argument's value there"
		}
		decoded, ok := decodeHeaderParam(v)
		if !ok {
			return "the " + hname + " header is not valid Base64 inside =?base64?...?=; send standard, padded " +
				"Base64 of the value, or the plain value"
		}
		want, ok := primitiveText(raw)
		if !ok {
			return "the argument " + clipText(arg) + " is not a string, an integer or a boolean, so " + hname +
				" cannot mirror it; leave the header out"
		}
		if !sameParam(decoded, want, raw) {
			return "the " + hname + " header says " + clipText(decoded) + " but the argument " + clipText(arg) +
				" is " + clipText(want) + "; send the argument's value"
		}
	}
	return ""
}

// decodeHeaderParam returns the value a Mcp-Param-* header carries: the
// decoded text of =?base64?...?= (ok false when it does not decode), or
// the value itself.
func decodeHeaderParam(v string) (string, bool) {
	const pre, suf = "=?base64?", "?="
	if len(v) < len(pre)+len(suf) || !strings.HasPrefix(v, pre) || !strings.HasSuffix(v, suf) {
		return v, true
	}
	b, err := base64.StdEncoding.Strict().DecodeString(v[len(pre) : len(v)-len(suf)])
	if err != nil {
		return "", false
	}
	return string(b), true
}

// primitiveText is the header text of a JSON string, boolean or integer
// (within ±2^53-1), and false for anything else.
func primitiveText(raw []byte) (string, bool) {
	switch {
	case len(raw) == 0:
		return "", false
	case raw[0] == '"':
		return jsontext.String(raw)
	case bytes.Equal(raw, []byte("true")), bytes.Equal(raw, []byte("false")):
		return string(raw), true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
		return "", false
	}
	return strconv.FormatInt(int64(f), 10), true
}

// sameParam reports whether the header text got mirrors the argument whose
// header text is want: equal text, or for an integer the same number.
func sameParam(got, want string, raw []byte) bool {
	if got == want {
		return true
	}
	if raw[0] == '"' || raw[0] == 't' || raw[0] == 'f' {
		return false
	}
	g, err := strconv.ParseFloat(got, 64)
	return err == nil && g == math.Trunc(g) && strconv.FormatInt(int64(g), 10) == want
}

// acceptsAnswers reports whether the Accept header allows both forms of
// a POST's answer, application/json and text/event-stream. The header
// every client sends, the two types and nothing else, is recognised
// without parsing it.
func acceptsAnswers(r *http.Request) bool {
	if vs := r.Header["Accept"]; len(vs) == 1 {
		switch vs[0] {
		case "application/json, text/event-stream", "text/event-stream, application/json":
			return true
		}
	}
	return acceptable(r, "application/json") && acceptable(r, "text/event-stream")
}

// acceptable reports whether the Accept header allows the media type
// (type/subtype, */* and type/* count). No Accept header allows anything.
func acceptable(r *http.Request, mediaType string) bool {
	values := r.Header.Values("Accept")
	if len(values) == 0 {
		return true
	}
	major, _, _ := strings.Cut(mediaType, "/")
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			part = strings.TrimSpace(part)
			if strings.EqualFold(part, mediaType) || part == "*/*" || strings.EqualFold(part, major+"/*") {
				return true // what mime.ParseMediaType would find, without its map
			}
			mt, params, err := mime.ParseMediaType(part)
			if err != nil || params["q"] == "0" {
				continue
			}
			if mt == mediaType || mt == "*/*" || mt == major+"/*" {
				return true
			}
		}
	}
	return false
}
