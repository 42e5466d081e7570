package mcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/yosida95/uritemplate/v3"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/jsontext"
)

// Resource method and notification names.
const (
	MethodResourcesList          = "resources/list"
	MethodResourcesTemplatesList = "resources/templates/list"
	MethodResourcesRead          = "resources/read"
	MethodResourcesSubscribe     = "resources/subscribe"
	MethodResourcesUnsubscribe   = "resources/unsubscribe"
	NotifyResourcesListChanged   = "notifications/resources/list_changed"
	NotifyResourcesUpdated       = "notifications/resources/updated"
)

// CodeResourceNotFound is the JSON-RPC error code of a resource that does
// not exist (resources/read, resources/subscribe) under the session-based
// revisions. It is the same number as CodeNotInitialized; the two are told
// apart by error.data.code ("NOT_FOUND", with data.uri, here).
const CodeResourceNotFound int64 = -32002

// Resource describes a resource with a fixed URI, as resources/list lists
// it.
type Resource struct {
	// URI identifies the resource: an absolute URI, unique on the server.
	URI string
	// Name is the resource's programmatic name (required).
	Name string
	// Title is a human-readable name (sent from 2025-06-18).
	Title string
	// Description tells a model what the resource holds.
	Description string
	// MIMEType is the type of the resource's contents, if known.
	MIMEType string
	// Size is the size of the raw contents in bytes, if known; 0 leaves
	// it unsaid.
	Size int64
	// Annotations tell the client how to use the resource.
	Annotations *Annotations
	// Icons are images a client may show (sent from 2025-11-25).
	Icons []Icon
	// Meta is the listing's _meta object (sent from 2025-06-18).
	Meta map[string]any
}

// ResourceTemplate describes a family of resources whose URIs fit an RFC
// 6570 URI template, as resources/templates/list lists it.
type ResourceTemplate struct {
	// URITemplate is a level 1-4 RFC 6570 template such as
	// "file:///logs/{day}" or "db://{table}{?limit}"; unique on the server.
	URITemplate string
	// Name is the template's programmatic name (required).
	Name string
	// Title is a human-readable name (sent from 2025-06-18).
	Title string
	// Description tells a model what the resources hold.
	Description string
	// MIMEType is the type of the resources' contents, when all share one.
	MIMEType string
	// Annotations tell the client how to use the resources.
	Annotations *Annotations
	// Icons are images a client may show (sent from 2025-11-25).
	Icons []Icon
	// Meta is the listing's _meta object (sent from 2025-06-18).
	Meta map[string]any
	// Complete, if set, proposes values for the template's variables
	// (completion/complete with a ref/resource naming URITemplate).
	Complete CompletionHandler
}

// ResourceHandler reads a resource. It may be called concurrently, also
// with itself. It returns the contents, or an error: a *core.Error with
// code NOT_FOUND is the client's -32002 "Resource not found" (for a
// template whose variables name nothing), a *jsonrpc.Error is sent as is,
// any other error is -32603 carrying its text. A panic is recovered and
// becomes -32603. ctx is cancelled when the client cancels the request or
// the session closes.
type ResourceHandler func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error)

// ReadResourceRequest is a resources/read as a resource handler sees it.
// It is valid only while the handler runs and must not be changed.
type ReadResourceRequest struct {
	// Session is the session the request arrived on.
	Session *Session
	// URI is the URI the client asked for.
	URI string
	// Template is the URI template the URI matched ("" for a resource
	// registered with AddResource).
	Template string
	// Variables are the template's variables as extracted from URI,
	// percent-decoded (nil for a resource registered with AddResource).
	// A variable matched as a list (an explode modifier such as {/path*})
	// holds its items joined with ",".
	Variables map[string]string
	// Meta is the request's _meta object (nil when absent).
	Meta Meta
	// ProtocolVersion is the protocol revision of this request.
	ProtocolVersion string
}

// ReadResourceResult is what a resource handler returns.
type ReadResourceResult struct {
	// Contents are the resource's contents: usually one item, more for a
	// resource that stands for several (a directory). Make them with
	// TextResource and BlobResource. An item whose URI is empty gets the
	// URI that was read.
	Contents []ResourceContents
	// Meta is the result's _meta object.
	Meta map[string]any
}

// TextResource returns text contents of a resource.
func TextResource(uri, mimeType, text string) ResourceContents {
	return ResourceContents{URI: uri, MIMEType: mimeType, Text: text}
}

// BlobResource returns binary contents of a resource; data is sent
// base64-encoded.
func BlobResource(uri, mimeType string, data []byte) ResourceContents {
	return ResourceContents{URI: uri, MIMEType: mimeType, Blob: base64.StdEncoding.EncodeToString(data)}
}

// registeredResource is a resource with its handler and its listings, one
// per revision. Immutable after registration.
type registeredResource struct {
	def      Resource
	handler  ResourceHandler
	listings [len(listingVersions)][]byte
}

// registeredTemplate is a template, parsed, with its handler and listings.
// Immutable after registration.
type registeredTemplate struct {
	def      ResourceTemplate
	tmpl     *uritemplate.Template
	vars     []string
	handler  ResourceHandler
	listings [len(listingVersions)][]byte
}

// resourceSet holds the server's resources, templates and subscriptions.
type resourceSet struct {
	static    *registry[*registeredResource]
	templates *registry[*registeredTemplate]
	served    atomic.Bool // a resource or template was registered once
	completes atomic.Bool // a template with Complete was registered once
	subs      subscriptions
}

func newResourceSet(s *Server) *resourceSet {
	changed := func() { s.notifyRunning(NotifyResourcesListChanged) }
	return &resourceSet{
		static:    newRegistry("resources", func(r *registeredResource) string { return r.def.URI }, changed),
		templates: newRegistry("resources/templates", func(r *registeredTemplate) string { return r.def.URITemplate }, changed),
		subs:      subscriptions{bySession: map[*Session]map[string]struct{}{}},
	}
}

// resourceWire is a Resource or a ResourceTemplate as listed.
type resourceWire struct {
	URI         string         `json:"uri,omitempty"`
	URITemplate string         `json:"uriTemplate,omitempty"`
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	MIMEType    string         `json:"mimeType,omitempty"`
	Size        int64          `json:"size,omitempty"`
	Annotations *Annotations   `json:"annotations,omitempty"`
	Icons       []Icon         `json:"icons,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

// listings encodes w once per revision: title and _meta from 2025-06-18,
// icons from 2025-11-25, annotations as each revision has them.
func (w resourceWire) listings() (out [len(listingVersions)][]byte, err error) {
	for i, v := range listingVersions {
		x := w
		x.Annotations = w.Annotations.forVersion(v)
		if v < Version20250618 {
			x.Title, x.Meta = "", nil
		}
		if v < Version20251125 {
			x.Icons = nil
		}
		if out[i], err = marshalCompact(x); err != nil {
			return out, err
		}
	}
	return out, nil
}

// checkListed checks what a resource and a template share.
func checkListed(name string, a *Annotations, icons []Icon, meta map[string]any) error {
	if name == "" {
		return fmt.Errorf("the name is empty; give it a programmatic name")
	}
	if err := a.validate(); err != nil {
		return err
	}
	if err := validateIcons(icons); err != nil {
		return err
	}
	return checkMeta(meta)
}

// AddResource registers a resource with a fixed URI and the handler that
// reads it. It returns an INVALID_ARGUMENT *core.Error for a URI that is
// not absolute, a URI already registered, a missing name or handler, or
// invalid annotations or icons. The first resource or template makes the
// server serve resources (see the package documentation); registering
// while sessions run sends them notifications/resources/list_changed.
func (s *Server) AddResource(r Resource, h ResourceHandler) error {
	if err := validateURI(r.URI); err != nil {
		return core.Errorf(core.CodeInvalidArgument, "resource: %v", err)
	}
	what := "resource " + jsontext.Quote(r.URI)
	if h == nil {
		return core.Errorf(core.CodeInvalidArgument, "%s has no handler", what)
	}
	if r.Size < 0 {
		return core.Errorf(core.CodeInvalidArgument, "%s: size is %d; use the size in bytes, or 0 to leave it unsaid", what, r.Size)
	}
	if err := checkListed(r.Name, r.Annotations, r.Icons, r.Meta); err != nil {
		return core.Errorf(core.CodeInvalidArgument, "%s: %v", what, err)
	}
	rr := &registeredResource{def: r, handler: h}
	var err error
	rr.listings, err = resourceWire{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description,
		MIMEType: r.MIMEType, Size: r.Size, Annotations: r.Annotations, Icons: r.Icons, Meta: r.Meta}.listings()
	if err != nil {
		return core.Errorf(core.CodeInvalidArgument, "%s cannot be listed: %v", what, err)
	}
	s.resources.served.Store(true) // before the add announces it
	if !s.resources.static.add(rr) {
		return core.Errorf(core.CodeInvalidArgument, "a resource with URI %q is already registered; remove it first or choose another URI", r.URI)
	}
	return nil
}

// AddResourceTemplate registers a resource template and the handler that
// reads every URI matching it; the handler gets the template's variables.
// It returns an INVALID_ARGUMENT *core.Error for a template RFC 6570 does
// not accept, a template already registered, a missing name or handler,
// or invalid annotations or icons. Registering while sessions run sends
// them notifications/resources/list_changed.
func (s *Server) AddResourceTemplate(t ResourceTemplate, h ResourceHandler) error {
	what := "resource template " + jsontext.Quote(jsontext.Clip(t.URITemplate, jsontext.MaxEcho))
	if t.URITemplate == "" {
		return core.Errorf(core.CodeInvalidArgument, "resource template: uriTemplate is empty; use one such as file:///logs/{day}")
	}
	tmpl, err := uritemplate.New(t.URITemplate)
	if err != nil {
		return core.Errorf(core.CodeInvalidArgument, "%s is not an RFC 6570 URI template: %v", what, err)
	}
	if h == nil {
		return core.Errorf(core.CodeInvalidArgument, "%s has no handler", what)
	}
	if err := checkListed(t.Name, t.Annotations, t.Icons, t.Meta); err != nil {
		return core.Errorf(core.CodeInvalidArgument, "%s: %v", what, err)
	}
	rt := &registeredTemplate{def: t, tmpl: tmpl, vars: tmpl.Varnames(), handler: h}
	rt.listings, err = resourceWire{URITemplate: t.URITemplate, Name: t.Name, Title: t.Title,
		Description: t.Description, MIMEType: t.MIMEType, Annotations: t.Annotations, Icons: t.Icons,
		Meta: t.Meta}.listings()
	if err != nil {
		return core.Errorf(core.CodeInvalidArgument, "%s cannot be listed: %v", what, err)
	}
	s.resources.served.Store(true) // before the add announces it
	if !s.resources.templates.add(rt) {
		return core.Errorf(core.CodeInvalidArgument, "a resource template %q is already registered; remove it first", t.URITemplate)
	}
	if t.Complete != nil {
		s.resources.completes.Store(true)
	}
	return nil
}

// RemoveResource unregisters the resource with that URI. It returns a
// NOT_FOUND *core.Error when there is none. Reads already running finish;
// subscriptions to the URI stay (they hear of it again if it comes back).
func (s *Server) RemoveResource(uri string) error {
	if !s.resources.static.remove(uri) {
		return core.Errorf(core.CodeNotFound, "no resource with URI %q is registered", jsontext.Clip(uri, jsontext.MaxEcho))
	}
	return nil
}

// RemoveResourceTemplate unregisters the template with that uriTemplate.
// It returns a NOT_FOUND *core.Error when there is none.
func (s *Server) RemoveResourceTemplate(uriTemplate string) error {
	if !s.resources.templates.remove(uriTemplate) {
		return core.Errorf(core.CodeNotFound, "no resource template %q is registered", jsontext.Clip(uriTemplate, jsontext.MaxEcho))
	}
	return nil
}

// resolved is what a URI names: a resource, or a template with the values
// of its variables.
type resolved struct {
	handler   ResourceHandler
	template  string
	variables map[string]string
}

// resolve finds what uri names: the resource with exactly that URI, else
// the first template, in the order resources/templates/list lists them,
// that matches it whole.
func (rs *resourceSet) resolve(uri string) (resolved, bool) {
	if r, ok := rs.static.get(uri); ok {
		return resolved{handler: r.handler}, true
	}
	for _, t := range rs.templates.all() {
		vals := t.tmpl.Match(uri)
		if vals == nil {
			continue
		}
		vars := make(map[string]string, len(vals))
		for name, v := range vals {
			vars[name] = strings.Join(v.V, ",")
		}
		return resolved{handler: t.handler, template: t.def.URITemplate, variables: vars}, true
	}
	return resolved{}, false
}
