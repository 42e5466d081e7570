package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
)

// What resources, prompts and completion share: annotations, icons, the
// capability gate of their methods, and the exact reading of their params.

// Annotations and Icon are declared with the content blocks (content.go).

// validate checks the annotations at registration.
func (a *Annotations) validate() error {
	if a == nil {
		return nil
	}
	for _, r := range a.Audience {
		if r != RoleUser && r != RoleAssistant {
			return fmt.Errorf("annotations.audience holds %q; use %q and/or %q", r, RoleUser, RoleAssistant)
		}
	}
	if p := a.Priority; p != nil && (math.IsNaN(*p) || *p < 0 || *p > 1) {
		return fmt.Errorf("annotations.priority is %v; use a number from 0 to 1", *p)
	}
	if a.LastModified != "" {
		if _, err := time.Parse(time.RFC3339, a.LastModified); err != nil {
			return fmt.Errorf("annotations.lastModified %q is not an RFC 3339 time such as 2025-01-12T15:00:58Z",
				a.LastModified)
		}
	}
	return nil
}

// forVersion returns the annotations as revision version has them (nil
// when nothing is left).
func (a *Annotations) forVersion(version string) *Annotations {
	if a == nil {
		return nil
	}
	out := *a
	if version < Version20250618 {
		out.LastModified = ""
	}
	if len(out.Audience) == 0 && out.Priority == nil && out.LastModified == "" {
		return nil
	}
	return &out
}

func validateIcons(icons []Icon) error {
	for i, ic := range icons {
		if err := validateURI(ic.Src); err != nil {
			return fmt.Errorf("icons[%d].src: %v", i, err)
		}
		if ic.Theme != "" && ic.Theme != "light" && ic.Theme != "dark" {
			return fmt.Errorf(`icons[%d].theme is %q; use "light", "dark" or leave it empty`, i, ic.Theme)
		}
	}
	return nil
}

// maxURIBytes bounds a URI a client sends to resources/read and
// resources/subscribe, so that subscriptions cannot grow without bound and
// errors never echo more than this.
const maxURIBytes = 8192

// validateURI checks that u is an absolute URI (it has a scheme) without
// spaces or control characters.
func validateURI(u string) error {
	if u == "" {
		return fmt.Errorf("the URI is empty; use an absolute URI such as file:///notes.txt")
	}
	if len(u) > maxURIBytes {
		return fmt.Errorf("the URI is %d bytes, over the limit of %d", len(u), maxURIBytes)
	}
	if strings.ContainsFunc(u, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("the URI %q holds a space or a control character; percent-encode it", jsontext.Clip(u, jsontext.MaxEcho))
	}
	p, err := url.Parse(u)
	if err != nil || p.Scheme == "" {
		return fmt.Errorf("%q is not an absolute URI; use one with a scheme, such as file:///notes.txt",
			jsontext.Clip(u, jsontext.MaxEcho))
	}
	return nil
}

// checkMeta checks at registration that a _meta map encodes as JSON.
func checkMeta(meta map[string]any) error {
	if meta == nil {
		return nil
	}
	if _, err := marshalCompact(meta); err != nil {
		return fmt.Errorf("_meta cannot be encoded as JSON: %v", err)
	}
	return nil
}

// The capabilities that resources, prompts and completion imply.
const (
	capResources   = "resources"
	capPrompts     = "prompts"
	capCompletions = "completions"
)

// serves reports whether the server serves a capability. Resources,
// prompts and completion are served from the first registration of one
// (for completion: of a prompt or template with a Complete function) for
// the rest of the server's life: removing them all later empties the
// lists but keeps the methods, since clients were told they exist.
func (s *Server) serves(capability string) bool {
	switch capability {
	case capResources:
		return s.resources.served.Load()
	case capPrompts:
		return s.prompts.served.Load()
	case capCompletions:
		return s.resources.completes.Load() || s.prompts.completes.Load()
	}
	return true
}

// gated wraps a method handler so that it answers -32601, like a method
// the server does not have, while the server does not serve the
// capability: a method whose capability was not advertised is not there.
func gated(capability string, h func(*Session, context.Context, *jsonrpc.Request) (any, error)) func(*Session, context.Context, *jsonrpc.Request) (any, error) {
	return func(sess *Session, ctx context.Context, req *jsonrpc.Request) (any, error) {
		if !sess.srv.serves(capability) {
			what := map[string]string{capResources: "no resources", capPrompts: "no prompts",
				capCompletions: "no completions"}[capability]
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found: "+jsontext.Quote(req.Method)+
				" is not a method this server provides (it serves "+what+", so initialize did not advertise "+
				capability+")")
		}
		return h(sess, ctx, req)
	}
}

// readParams reads the members of a request's params object whose names
// are the keys of slots, matched exactly (case-sensitively); a member
// whose value is null reads as absent. Absent params read as {}. Params
// that are not an object, or that hold a member twice, are -32602; shape
// describes the params in that message.
func readParams(method, shape string, params json.RawMessage, slots map[string]*json.RawMessage) error {
	if len(params) == 0 {
		return nil
	}
	dup := ""
	isObj := jsontext.EachMember(params, func(key, value []byte) bool {
		for name, slot := range slots {
			if !jsontext.KeyIs(key, name) {
				continue
			}
			if *slot != nil {
				dup = name
				return false
			}
			if string(value) != "null" {
				*slot = value
			} else {
				*slot = json.RawMessage{} // seen, absent
			}
			return true
		}
		return true
	})
	for _, slot := range slots {
		if *slot != nil && len(*slot) == 0 {
			*slot = nil
		}
	}
	switch {
	case !isObj:
		return invalidParams(method + " params must be an object " + shape)
	case dup != "":
		return invalidParams(method + " params has the member " + dup + " twice; send each member once")
	}
	return nil
}

// stringMember decodes a member that must be a string. It reports false
// when the member is absent.
func stringMember(method, path string, raw json.RawMessage) (string, bool, error) {
	if raw == nil {
		return "", false, nil
	}
	s, ok := jsontext.String(raw)
	if !ok {
		return "", false, invalidParams(method + " params." + path + " must be a string, got " + jsontext.ClipBytes(raw, 40))
	}
	return s, true, nil
}

// metaMember checks an optional _meta member: an object when present.
func metaMember(method string, raw json.RawMessage) (Meta, error) {
	if raw != nil && !isObject(raw) {
		return nil, invalidParams(method + " params._meta must be an object, got " + jsontext.ClipBytes(raw, 40))
	}
	return Meta(raw), nil
}

// stringMap decodes an object whose members are all strings (prompt
// arguments, completion context): -32602 naming the first member that is
// not, or that appears twice.
func stringMap(method, path string, raw json.RawMessage) (map[string]string, error) {
	if raw == nil {
		return nil, nil
	}
	if !isObject(raw) {
		return nil, invalidParams(method + " params." + path + " must be an object whose values are strings, got " +
			jsontext.ClipBytes(raw, 40))
	}
	out := map[string]string{}
	var bad error
	jsontext.EachMember(raw, func(key, value []byte) bool {
		name, _ := jsontext.String(key)
		if _, dup := out[name]; dup {
			bad = invalidParams(method + " params." + path + " has the member " + jsontext.Quote(jsontext.Clip(name, 64)) +
				" twice; send each member once")
			return false
		}
		v, ok := jsontext.String(value)
		if !ok {
			bad = invalidParams(method + " params." + path + "." + jsontext.Clip(name, 64) + " must be a string, got " +
				jsontext.ClipBytes(value, 40))
			return false
		}
		out[name] = v
		return true
	})
	return out, bad
}

// uriParams reads the params {uri, _meta?} of resources/read,
// resources/subscribe and resources/unsubscribe.
func uriParams(method string, params json.RawMessage) (string, Meta, error) {
	var rawURI, rawMeta json.RawMessage
	if err := readParams(method, "{uri, _meta?}", params,
		map[string]*json.RawMessage{"uri": &rawURI, "_meta": &rawMeta}); err != nil {
		return "", nil, err
	}
	uri, ok, err := stringMember(method, "uri", rawURI)
	switch {
	case err != nil:
		return "", nil, err
	case !ok:
		return "", nil, invalidParams(method + " needs params.uri, the resource's URI as a string")
	case len(uri) > maxURIBytes:
		return "", nil, invalidParams(fmt.Sprintf("%s params.uri is %d bytes, over the limit of %d", method, len(uri), maxURIBytes))
	}
	meta, err := metaMember(method, rawMeta)
	return uri, meta, err
}

// cursorParam reads the params {cursor?, _meta?} of a list method.
func cursorParam(method string, params json.RawMessage) (*string, error) {
	var rawCursor, rawMeta json.RawMessage
	if err := readParams(method, "{cursor?, _meta?}", params,
		map[string]*json.RawMessage{"cursor": &rawCursor, "_meta": &rawMeta}); err != nil {
		return nil, err
	}
	c, ok, err := stringMember(method, "cursor", rawCursor)
	if err != nil {
		return nil, err
	}
	if _, err := metaMember(method, rawMeta); err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	return &c, nil
}

// listJSON builds a list result {"<key>":[items...],"nextCursor"?}.
func listJSON(key string, items [][]byte, next string) jsonrpc.CompactJSON {
	n := len(key) + 32 + len(next)
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, ']')
	if next != "" {
		b = append(b, `,"nextCursor":`...)
		b = append(b, mustJSON(next)...)
	}
	b = append(b, '}')
	return jsonrpc.CompactJSON(b)
}

// versionIndex maps a negotiated revision to an index of per-revision
// listings: 0 for 2024-11-05 up to 3 for 2025-11-25 (and anything newer).
func versionIndex(version string) int {
	switch {
	case version >= Version20251125:
		return 3
	case version >= Version20250618:
		return 2
	case version >= Version20250326:
		return 1
	}
	return 0
}

// listingVersions are the revisions of versionIndex, in its order.
var listingVersions = [...]string{Version20241105, Version20250326, Version20250618, Version20251125}

// handlerFailure turns the error of a resource, prompt or completion
// handler into the JSON-RPC error the client gets: a *jsonrpc.Error is
// sent as is; any other error is -32603 naming what failed and why.
func handlerFailure(what string, err error) *jsonrpc.Error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: "+what+" failed: "+err.Error())
}

// callSafely runs a resource, prompt or completion handler, turning a
// panic into a -32603 error (logged with its stack) and a nil result into
// a -32603 error that says so.
func callSafely[T any](sess *Session, what string, call func() (*T, error)) (res *T, err error) {
	defer func() {
		if p := recover(); p != nil {
			sess.log.Error("recovered from a panic in a handler", "handler", what, "panic", fmt.Sprint(p),
				"stack", string(debug.Stack()))
			res, err = nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: "+what+
				" failed unexpectedly (its handler panicked); the server keeps serving. Report it to the server's author")
		}
	}()
	res, err = call()
	if err == nil && res == nil {
		err = jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: "+what+" returned neither a result nor an error")
	}
	return res, err
}
