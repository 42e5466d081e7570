package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
)

// TestResourceListingsAcrossRevisions: resources/list and
// resources/templates/list under every session revision side by side: each
// field from the revision that has it, and every result valid against that
// revision's schema.
func TestResourceListingsAcrossRevisions(t *testing.T) {
	for _, v := range SupportedVersions() {
		t.Run(v, func(t *testing.T) {
			c := resourceClient(t, v, nil, func(s *Server) { addResourceFixtures(t, s) })
			raw := c.rpc(MethodResourcesList, `{}`).ok(t, "resources/list")
			checkSchema(t, v, "ListResourcesResult", raw)
			list := decode(t, raw)["resources"].([]any)
			if len(list) != 10 {
				t.Fatalf("%d resources listed, want 10: %s", len(list), raw)
			}
			var notes map[string]any
			var uris []string
			for _, r := range list {
				m := r.(map[string]any)
				uris = append(uris, m["uri"].(string))
				if m["uri"] == "file:///notes.txt" {
					notes = m
				}
			}
			if !strings.HasPrefix(strings.Join(uris, " "), "file:///empty.txt file:///logo.png file:///notes.txt test://") {
				t.Errorf("not sorted by URI: %v", uris)
			}
			checkRevisionFields(t, v, "resource", notes)
			if notes["size"] != 5.0 || notes["mimeType"] != "text/plain" || notes["description"] != "my notes" {
				t.Errorf("resource fields: %v", notes)
			}

			raw = c.rpc(MethodResourcesTemplatesList, ``).ok(t, "resources/templates/list")
			checkSchema(t, v, "ListResourceTemplatesResult", raw)
			tmpls := decode(t, raw)["resourceTemplates"].([]any)
			if len(tmpls) != 2 || tmpls[0].(map[string]any)["uriTemplate"] != "db://{table}/{id}{?fields*}" {
				t.Fatalf("templates: %s", raw)
			}
			log := tmpls[1].(map[string]any)
			checkRevisionFields(t, v, "template", log)
			if _, ok := log["uri"]; ok {
				t.Errorf("a template listed with a uri: %v", log)
			}
		})
	}
}

// checkRevisionFields checks that title and _meta appear from 2025-06-18,
// icons from 2025-11-25, annotations.lastModified from 2025-06-18.
func checkRevisionFields(t *testing.T, v, what string, m map[string]any) {
	t.Helper()
	_, hasTitle := m["title"]
	_, hasMeta := m["_meta"]
	_, hasIcons := m["icons"]
	ann, _ := m["annotations"].(map[string]any)
	_, hasLastModified := ann["lastModified"]
	if hasTitle != (v >= Version20250618) || hasMeta != (v >= Version20250618) || hasIcons != (v >= Version20251125) ||
		hasLastModified != (v >= Version20250618) || ann["priority"] != 0.5 {
		t.Errorf("%s %s: title %v, _meta %v, icons %v, lastModified %v: %v", v, what, hasTitle, hasMeta, hasIcons,
			hasLastModified, m)
	}
}

// TestResourceRead: text, blob and template reads under every revision;
// the handler sees the URI, the template and its variables.
func TestResourceRead(t *testing.T) {
	cases := []struct {
		uri, want string
	}{
		{"file:///notes.txt", `{"contents":[{"uri":"file:///notes.txt","mimeType":"text/plain","text":"hello"}]}`},
		{"file:///logo.png", `{"contents":[{"uri":"file:///logo.png","mimeType":"image/png","blob":"iVBORw=="}],"_meta":{"x.example/cached":true}}`},
		{"file:///empty.txt", `{"contents":[{"uri":"file:///empty.txt","mimeType":"text/plain","text":""}]}`},
		{"file:///logs/monday", `{"contents":[{"uri":"file:///logs/monday","mimeType":"text/plain","text":"file:///logs/{day} day=monday"}]}`},
		{"file:///logs/caf%C3%A9", `{"contents":[{"uri":"file:///logs/caf%C3%A9","mimeType":"text/plain","text":"file:///logs/{day} day=café"}]}`},
		{"db://users/42?fields=a&fields=b", `{"contents":[{"uri":"db://users/42?fields=a&fields=b","mimeType":"application/json","text":"{\"fields\":\"a,b\",\"id\":\"42\",\"table\":\"users\"}"}]}`},
		{"db://users/42", `{"contents":[{"uri":"db://users/42","mimeType":"application/json","text":"{\"id\":\"42\",\"table\":\"users\"}"}]}`},
	}
	for _, v := range SupportedVersions() {
		t.Run(v, func(t *testing.T) {
			c := resourceClient(t, v, nil, func(s *Server) { addResourceFixtures(t, s) })
			for _, tc := range cases {
				raw := c.rpc(MethodResourcesRead, `{"uri":`+quoteString(tc.uri)+`,"_meta":{"progressToken":1}}`).ok(t, tc.uri)
				if string(raw) != tc.want {
					t.Errorf("read %s:\n got %s\nwant %s", tc.uri, raw, tc.want)
				}
				checkSchema(t, v, "ReadResourceResult", raw)
			}
		})
	}
}

// TestResourceReadErrors: a URI that names nothing and a handler that says
// NOT_FOUND are -32002 with data {code, uri}; handler failures are -32603
// saying what failed; bad params are -32602.
func TestResourceReadErrors(t *testing.T) {
	c := resourceClient(t, Version20251125, func(cfg *Options) { cfg.Limits.MaxResultBytes = 1024 },
		func(s *Server) { addResourceFixtures(t, s) })
	notFound := []struct{ uri, want string }{
		{"file:///nope.txt", "resources/list"},
		{"file:///logs/monday/x", "matches no resource template"},
		{"FILE:///notes.txt", "matches no resource template"},
		{"test://gone", "the row was deleted"},
		{"file:///logs/never", "no log for day never"},
	}
	for _, tc := range notFound {
		r := c.rpc(MethodResourcesRead, `{"uri":`+quoteString(tc.uri)+`}`)
		r.fails(t, tc.uri, CodeResourceNotFound, "Resource not found", tc.want)
		if r.Error.Data["uri"] != tc.uri || r.Error.Data["code"] != "NOT_FOUND" {
			t.Errorf("%s: data %v", tc.uri, r.Error.Data)
		}
	}
	// The client's correlation id is the one in the data.
	r := c.rpc(MethodResourcesRead, `{"uri":"file:///nope","_meta":{"correlationId":"mine"}}`)
	if r.Error == nil || r.Error.Data["correlationId"] != "mine" {
		t.Errorf("correlationId: %+v", r.Error)
	}
	internal := []struct{ uri, want string }{
		{"test://broken", "disk on fire"},
		{"test://panics", "panicked"},
		{"test://nil", "neither a result nor an error"},
		{"test://badblob", "not standard base64"},
		{"test://big", "tools.maxResultBytes"},
	}
	for _, tc := range internal {
		c.rpc(MethodResourcesRead, `{"uri":`+quoteString(tc.uri)+`}`).
			fails(t, tc.uri, jsonrpc.CodeInternalError, `reading resource "`+tc.uri+`"`, tc.want)
	}
	c.rpc(MethodResourcesRead, `{"uri":"test://wrapped"}`).fails(t, "a handler's *jsonrpc.Error", jsonrpc.CodeInvalidParams, "not today")
	c.quiet() // the server still serves

	long := `"file:///` + strings.Repeat("a", maxURIBytes) + `"`
	var cases []badParams
	for _, m := range []string{MethodResourcesRead, MethodResourcesSubscribe, MethodResourcesUnsubscribe} {
		cases = append(cases,
			badParams{m + " no params", m, ``, []string{"needs params.uri"}},
			badParams{m + " no uri", m, `{}`, []string{"needs params.uri"}},
			badParams{m + " null uri", m, `{"uri":null}`, []string{"needs params.uri"}},
			badParams{m + " uri number", m, `{"uri":7}`, []string{"params.uri must be a string, got 7"}},
			badParams{m + " Uri", m, `{"Uri":"file:///notes.txt"}`, []string{"needs params.uri"}},
			badParams{m + " array", m, `["file:///notes.txt"]`, []string{"must be an object {uri, _meta?}"}},
			badParams{m + " twice", m, `{"uri":"file:///notes.txt","uri":"file:///x"}`, []string{"member uri twice"}},
			badParams{m + " _meta", m, `{"uri":"file:///notes.txt","_meta":[]}`, []string{"params._meta must be an object"}},
			badParams{m + " too long", m, `{"uri":` + long + `}`, []string{"over the limit of 8192"}},
		)
	}
	runBadParams(t, c, cases)
}

// TestResourcesBeforeInitialize: every resource method is gated like any
// other: -32002 Not initialized, with the connection's correlation id.
func TestResourcesBeforeInitialize(t *testing.T) {
	c := resourceClient(t, "", nil, func(s *Server) { addResourceFixtures(t, s) })
	methods := []string{MethodResourcesList, MethodResourcesTemplatesList, MethodResourcesRead,
		MethodResourcesSubscribe, MethodResourcesUnsubscribe, MethodPromptsList, MethodPromptsGet, MethodCompletionComplete}
	check := func(state string) {
		for _, m := range methods {
			r := c.rpc(m, `{"uri":"file:///notes.txt"}`)
			r.fails(t, state+" "+m, CodeNotInitialized, "Not initialized")
			if r.Error.Data["code"] != "NOT_INITIALIZED" || r.Error.Data["correlationId"] != c.sess.CorrelationID() {
				t.Errorf("%s %s: data %v", state, m, r.Error.Data)
			}
		}
	}
	check("STARTING")
	c.rpc(MethodInitialize, `{"protocolVersion":"2025-11-25"}`).ok(t, "initialize")
	check("INITIALIZING")
}

// TestResourcesPagination: pages of tools.pageSize, nextCursor only when
// more follow, and a cursor the server did not make is -32602.
func TestResourcesPagination(t *testing.T) {
	const n = 5
	setup := func(s *Server) {
		for i := range n {
			u := "file:///r" + itoa(i)
			if err := s.AddResource(Resource{URI: u, Name: "r"}, textHandler(u)); err != nil {
				t.Fatal(err)
			}
			if err := s.AddResourceTemplate(ResourceTemplate{URITemplate: u + "/{x}", Name: "t"}, textHandler(u)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, size := range []int{1, 2, n - 1, n, n + 1} {
		c := resourceClient(t, Version20251125, func(cfg *Options) { cfg.Limits.PageSize = size }, setup)
		for _, lm := range []struct{ method, key string }{
			{MethodResourcesList, "resources"}, {MethodResourcesTemplatesList, "resourceTemplates"}} {
			var got int
			params := `{}`
			pages := 0
			for {
				raw := c.rpc(lm.method, params).ok(t, lm.method)
				checkSchema(t, Version20251125, map[string]string{MethodResourcesList: "ListResourcesResult",
					MethodResourcesTemplatesList: "ListResourceTemplatesResult"}[lm.method], raw)
				m := decode(t, raw)
				items := m[lm.key].([]any)
				got += len(items)
				pages++
				if len(items) > size || len(items) == 0 {
					t.Fatalf("page size %d: a page of %d", size, len(items))
				}
				next, ok := m["nextCursor"].(string)
				if !ok {
					break
				}
				params = `{"cursor":` + quoteString(next) + `}`
			}
			if want := (n + size - 1) / size; got != n || pages != want {
				t.Errorf("%s page size %d: %d items in %d pages, want %d in %d", lm.method, size, got, pages, n, want)
			}
		}
	}
	c := resourceClient(t, Version20251125, func(cfg *Options) { cfg.Limits.PageSize = 2 }, setup)
	next := decode(t, c.rpc(MethodResourcesList, ``).ok(t, "list"))["nextCursor"].(string)
	// A resources cursor is no cursor of the templates, nor of prompts.
	runBadParams(t, c, []badParams{
		{"garbage", MethodResourcesList, `{"cursor":"garbage"}`, []string{"invalid cursor", "resources/list"}},
		{"empty", MethodResourcesList, `{"cursor":""}`, []string{"invalid cursor"}},
		{"number", MethodResourcesList, `{"cursor":3}`, []string{"params.cursor must be a string"}},
		{"other list", MethodResourcesTemplatesList, `{"cursor":` + quoteString(next) + `}`, []string{"resources/templates/list"}},
		{"not object", MethodResourcesTemplatesList, `[]`, []string{"must be an object {cursor?, _meta?}"}},
	})
	if raw := c.rpc(MethodResourcesList, `{"cursor":null}`).ok(t, "null cursor"); decode(t, raw)["nextCursor"] != next {
		t.Errorf("a null cursor is the first page: %s", raw)
	}
	// Removing everything leaves an empty list, still served.
	for i := range n {
		if err := c.srv.RemoveResource("file:///r" + itoa(i)); err != nil {
			t.Fatal(err)
		}
		c.expectNotification(NotifyResourcesListChanged)
	}
	if raw := c.rpc(MethodResourcesList, `{"cursor":`+quoteString(next)+`}`).ok(t, "after removal"); string(raw) != `{"resources":[]}` {
		t.Errorf("after removing every resource: %s", raw)
	}
}

// TestResourceSubscriptions: of two sessions, only the one that subscribed
// hears of an update; subscribing is idempotent, unsubscribing ends it, an
// unknown URI cannot be subscribed to, and a closed session hears nothing.
func TestResourceSubscriptions(t *testing.T) {
	for _, v := range SupportedVersions() {
		t.Run(v, func(t *testing.T) {
			a := resourceClient(t, v, nil, func(s *Server) { addResourceFixtures(t, s) })
			b := connectTestClient(t, transportMemory, a.srv, a.logBuf, v)
			ctx := context.Background()
			const uri = "file:///notes.txt"
			for range 2 { // idempotent
				if raw := a.rpc(MethodResourcesSubscribe, `{"uri":"`+uri+`"}`).ok(t, "subscribe"); string(raw) != `{}` {
					t.Fatalf("subscribe: %s", raw)
				}
			}
			a.rpc(MethodResourcesSubscribe, `{"uri":"file:///logs/monday"}`).ok(t, "subscribe to a template's URI")
			a.rpc(MethodResourcesSubscribe, `{"uri":"file:///nope"}`).fails(t, "unknown", CodeResourceNotFound, "file:///nope")
			if n := a.srv.ResourceUpdated(ctx, uri); n != 1 {
				t.Fatalf("ResourceUpdated told %d sessions, want 1", n)
			}
			raw := a.expectNotification(NotifyResourcesUpdated)
			if !strings.Contains(string(raw), `"params":{"uri":"file:///notes.txt"}`) {
				t.Errorf("notification: %s", raw)
			}
			checkSchema(t, v, "ResourceUpdatedNotification", raw)
			a.quiet() // once only
			b.quiet() // not subscribed: nothing
			if n := a.srv.ResourceUpdated(ctx, "file:///logs/monday"); n != 1 {
				t.Fatalf("template URI: told %d", n)
			}
			a.expectNotification(NotifyResourcesUpdated)
			if n := a.srv.ResourceUpdated(ctx, "file:///logs/tuesday"); n != 0 {
				t.Fatalf("an unsubscribed URI of the template: told %d", n)
			}
			// b subscribes too: both hear.
			b.rpc(MethodResourcesSubscribe, `{"uri":"`+uri+`"}`).ok(t, "b subscribes")
			if n := a.srv.ResourceUpdated(ctx, uri); n != 2 {
				t.Fatalf("told %d, want 2", n)
			}
			a.expectNotification(NotifyResourcesUpdated)
			b.expectNotification(NotifyResourcesUpdated)
			// Unsubscribing (twice, and from what was never subscribed) succeeds.
			for _, u := range []string{uri, uri, "file:///never"} {
				if raw := a.rpc(MethodResourcesUnsubscribe, `{"uri":"`+u+`"}`).ok(t, "unsubscribe"); string(raw) != `{}` {
					t.Fatalf("unsubscribe: %s", raw)
				}
			}
			if n := a.srv.ResourceUpdated(ctx, uri); n != 1 {
				t.Fatalf("after a unsubscribed: told %d, want 1 (b)", n)
			}
			b.expectNotification(NotifyResourcesUpdated)
			a.quiet()
			// A removed resource keeps its subscribers: subscribing again is fine.
			if err := a.srv.RemoveResource(uri); err != nil {
				t.Fatal(err)
			}
			a.expectNotification(NotifyResourcesListChanged)
			b.expectNotification(NotifyResourcesListChanged)
			b.rpc(MethodResourcesSubscribe, `{"uri":"`+uri+`"}`).ok(t, "resubscribe to a removed resource")
			// A closed session is told nothing.
			b.sess.Close()
			<-b.done
			if n := a.srv.ResourceUpdated(ctx, uri); n != 0 {
				t.Fatalf("a closed session was told: %d", n)
			}
			a.quiet()
		})
	}
}

// TestResourcesListChanged: adding or removing a resource or a template
// tells running sessions, and only them.
func TestResourcesListChanged(t *testing.T) {
	running := resourceClient(t, Version20250618, nil, nil)
	srv := running.srv
	starting := connectTestClient(t, transportMemory, srv, running.logBuf, "")
	changes := []func() error{
		func() error { return srv.AddResource(Resource{URI: "file:///a", Name: "a"}, textHandler("a")) },
		func() error {
			return srv.AddResourceTemplate(ResourceTemplate{URITemplate: "file:///t/{x}", Name: "t"}, textHandler("t"))
		},
		func() error { return srv.RemoveResourceTemplate("file:///t/{x}") },
		func() error { return srv.RemoveResource("file:///a") },
	}
	for i, change := range changes {
		if err := change(); err != nil {
			t.Fatal(err)
		}
		raw := running.expectNotification(NotifyResourcesListChanged)
		checkSchema(t, Version20250618, "ResourceListChangedNotification", raw)
		_ = i
	}
	starting.quiet()
	running.quiet()
	// Failed changes announce nothing.
	if srv.RemoveResource("file:///a") == nil || srv.RemoveResourceTemplate("x") == nil {
		t.Fatal("removing what is not there succeeded")
	}
	running.quiet()
}

// TestResourceRegistrationErrors: every bad definition is refused with an
// INVALID_ARGUMENT error that says what is wrong.
func TestResourceRegistrationErrors(t *testing.T) {
	srv, _ := newTestServer(t, testConfig(), Options{}, nil)
	h := textHandler("x")
	bad := -0.5
	if err := srv.AddResource(Resource{URI: "file:///dup", Name: "d"}, h); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResourceTemplate(ResourceTemplate{URITemplate: "file:///dup/{x}", Name: "d"}, h); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		add  func() error
		want string
	}{
		{"empty uri", func() error { return srv.AddResource(Resource{Name: "n"}, h) }, "URI is empty"},
		{"relative uri", func() error { return srv.AddResource(Resource{URI: "notes.txt", Name: "n"}, h) }, "not an absolute URI"},
		{"space", func() error { return srv.AddResource(Resource{URI: "file:///a b", Name: "n"}, h) }, "space or a control character"},
		{"no handler", func() error { return srv.AddResource(Resource{URI: "file:///x", Name: "n"}, nil) }, "no handler"},
		{"no name", func() error { return srv.AddResource(Resource{URI: "file:///x"}, h) }, "name is empty"},
		{"size", func() error { return srv.AddResource(Resource{URI: "file:///x", Name: "n", Size: -1}, h) }, "size is -1"},
		{"duplicate", func() error { return srv.AddResource(Resource{URI: "file:///dup", Name: "n"}, h) }, "already registered"},
		{"audience", func() error {
			return srv.AddResource(Resource{URI: "file:///x", Name: "n", Annotations: &Annotations{Audience: []Role{"system"}}}, h)
		}, `audience holds "system"`},
		{"priority", func() error {
			return srv.AddResource(Resource{URI: "file:///x", Name: "n", Annotations: &Annotations{Priority: &bad}}, h)
		}, "from 0 to 1"},
		{"lastModified", func() error {
			return srv.AddResource(Resource{URI: "file:///x", Name: "n", Annotations: &Annotations{LastModified: "yesterday"}}, h)
		}, "RFC 3339"},
		{"icon src", func() error {
			return srv.AddResource(Resource{URI: "file:///x", Name: "n", Icons: []Icon{{Src: "icon.png"}}}, h)
		}, "icons[0].src"},
		{"icon theme", func() error {
			return srv.AddResource(Resource{URI: "file:///x", Name: "n", Icons: []Icon{{Src: "https://x/i.png", Theme: "blue"}}}, h)
		}, "icons[0].theme"},
		{"meta", func() error {
			return srv.AddResource(Resource{URI: "file:///x", Name: "n", Meta: map[string]any{"f": func() {}}}, h)
		}, "_meta cannot be encoded"},
		{"template syntax", func() error {
			return srv.AddResourceTemplate(ResourceTemplate{URITemplate: "file:///{x", Name: "n"}, h)
		}, "not an RFC 6570"},
		{"template empty", func() error { return srv.AddResourceTemplate(ResourceTemplate{Name: "n"}, h) }, "uriTemplate is empty"},
		{"template handler", func() error {
			return srv.AddResourceTemplate(ResourceTemplate{URITemplate: "file:///{x}", Name: "n"}, nil)
		}, "no handler"},
		{"template name", func() error { return srv.AddResourceTemplate(ResourceTemplate{URITemplate: "file:///{x}"}, h) }, "name is empty"},
		{"template duplicate", func() error {
			return srv.AddResourceTemplate(ResourceTemplate{URITemplate: "file:///dup/{x}", Name: "n"}, h)
		}, "already registered"},
	}
	for _, tc := range cases {
		err := tc.add()
		var ce *core.Error
		if !isCoreError(err, &ce) || ce.Code != core.CodeInvalidArgument || !strings.Contains(ce.Message, tc.want) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT saying %q", tc.name, err, tc.want)
		}
	}
	for _, err := range []error{srv.RemoveResource("file:///none"), srv.RemoveResourceTemplate("file:///none/{x}")} {
		var ce *core.Error
		if !isCoreError(err, &ce) || ce.Code != core.CodeNotFound {
			t.Errorf("removing what is not there: %v", err)
		}
	}
}

// TestBlobHelpers: BlobResource encodes standard base64 and isBase64 knows
// it from what it is not.
func TestBlobHelpers(t *testing.T) {
	for _, data := range [][]byte{nil, {0}, {0, 1}, {0, 1, 2}, []byte("any carnal pleas")} {
		if b := BlobResource("x:y", "", data).Blob; !isBase64(b) {
			t.Errorf("%q: %q is not base64", data, b)
		}
	}
	for _, s := range []string{"a", "abc", "ab=c", "a===", "====", "ab c", "ab-_", "=abc"} {
		if isBase64(s) {
			t.Errorf("isBase64(%q) = true", s)
		}
	}
	var out json.RawMessage
	if out = mustJSON(contentsWire{URI: "x:y", Text: new(string)}); string(out) != `{"uri":"x:y","text":""}` {
		t.Errorf("empty text: %s", out)
	}
}
