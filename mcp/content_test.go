package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// contentFixtures returns one block of each kind with every member set,
// and a block of a type no revision has.
func contentFixtures() []Content {
	prio := 0.5
	ann := func() *Annotations {
		return &Annotations{Audience: []Role{RoleUser}, Priority: &prio, LastModified: "2025-01-12T15:00:58Z"}
	}
	meta := map[string]any{"k": "v"}
	text := TextContent("hi")
	text.Annotations, text.Meta, text.Title = ann(), meta, "not a text member"
	image := ImageContent("AAAA", "image/png")
	image.Annotations, image.Meta, image.URI = ann(), meta, "file:///not-an-image-member"
	audio := AudioContent("UklGRg==", "audio/wav")
	audio.Annotations, audio.Meta = ann(), meta
	link := ResourceLinkContent("file:///notes.txt", "notes")
	link.Title, link.Description, link.MIMEType, link.Size = "Notes", "my notes", "text/plain", 42
	link.Icons = []Icon{{Src: "https://example.com/i.png", MIMEType: "image/png", Sizes: []string{"48x48"}}}
	link.Annotations, link.Meta = ann(), meta
	res := EmbeddedResourceContent(ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "A"})
	res.Annotations, res.Meta = ann(), meta
	return []Content{text, image, audio, link, res, {Type: "tool_use", Text: "x"}}
}

// wantContent is what contentFixtures become under each revision.
func wantContent(version string) []string {
	ann, meta := `"annotations":{"audience":["user"],"priority":0.5}`, ""
	if version >= Version20250618 {
		ann, meta = `"annotations":{"audience":["user"],"priority":0.5,"lastModified":"2025-01-12T15:00:58Z"}`, `,"_meta":{"k":"v"}`
	}
	audio := `{"type":"audio","data":"UklGRg==","mimeType":"audio/wav",` + ann + meta + `}`
	if version < Version20250326 {
		audio = `{"type":"text","text":"[audio omitted: protocol revision 2024-11-05 has no audio content; audio/wav, 4 bytes]",` + ann + `}`
	}
	link := `{"type":"text","text":"[resource link] Notes: file:///notes.txt (text/plain), 42 bytes — my notes",` + ann + `}`
	switch {
	case version >= Version20251125:
		link = `{"type":"resource_link","uri":"file:///notes.txt","name":"notes","title":"Notes","description":"my notes",` +
			`"mimeType":"text/plain","size":42,"icons":[{"src":"https://example.com/i.png","mimeType":"image/png","sizes":["48x48"]}],` +
			ann + meta + `}`
	case version >= Version20250618:
		link = `{"type":"resource_link","uri":"file:///notes.txt","name":"notes","title":"Notes","description":"my notes",` +
			`"mimeType":"text/plain","size":42,` + ann + meta + `}`
	}
	return []string{
		`{"type":"text","text":"hi",` + ann + meta + `}`,
		`{"type":"image","data":"AAAA","mimeType":"image/png",` + ann + meta + `}`,
		audio,
		link,
		`{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"A"},` + ann + meta + `}`,
		`{"type":"text","text":"[content of type \"tool_use\" omitted: protocol revision ` + version + ` has no such content]"}`,
	}
}

// TestContentForRevision: each block is fitted to the revision as the
// package documentation says, and the caller's blocks are not changed.
func TestContentForRevision(t *testing.T) {
	for _, v := range SupportedVersions() {
		t.Run(v, func(t *testing.T) {
			in := contentFixtures()
			before := string(mustMarshal(t, in))
			got := contentForRevision(in, v)
			for i, want := range wantContent(v) {
				if js := string(mustMarshal(t, got[i])); !sameJSON(js, want) {
					t.Errorf("block %d (%s):\n got %s\nwant %s", i, in[i].Type, js, want)
				}
			}
			if string(mustMarshal(t, in)) != before {
				t.Error("the input blocks were changed")
			}
		})
	}
	t.Run("fitting blocks are kept", func(t *testing.T) {
		in := []Content{TextContent("a"), ImageContent("AA==", "image/png")}
		if out := contentForRevision(in, Version20241105); &out[0] != &in[0] {
			t.Error("a result that fits was copied")
		}
		link := ResourceLinkContent("file:///x", "x")
		if got := ContentForRevision(link, Version20250618); got.Type != "resource_link" || got.URI != "file:///x" {
			t.Errorf("link %+v", got)
		}
	})
}

// fullResultTool returns every fixture block with a result _meta.
func fullResultTool() Tool {
	return handlerTool("blocks", func(context.Context, *CallToolRequest) (any, error) {
		return &CallToolResult{Content: contentFixtures(), Meta: map[string]any{"trace": "t-1"}}, nil
	})
}

// TestContentResultsMatchSchema: a tool result with every kind of block
// and member is sent fitted to the negotiated revision, valid against
// that revision's official schema, with no member the revision lacks.
func TestContentResultsMatchSchema(t *testing.T) {
	dir := officialSchemaDir(t)
	for _, v := range SupportedVersions() {
		t.Run(v, func(t *testing.T) {
			sch := loadOfficialSchema(t, dir, v)
			p := newPeer(t, peerOptions{version: v, tools: []Tool{fullResultTool()}})
			resp, _ := p.untilResponse(p.startCall("blocks", "", ""))
			result := mustMarshal(t, resp["result"])
			if err := sch.validate(t, "CallToolResult", result); err != nil {
				t.Errorf("%v\n%s", err, result)
			}
			var r struct {
				Content []json.RawMessage
				Meta    map[string]any `json:"_meta"`
			}
			if err := json.Unmarshal(result, &r); err != nil {
				t.Fatal(err)
			}
			want := wantContent(v)
			if len(r.Content) != len(want) || r.Meta["trace"] != "t-1" {
				t.Fatalf("result %s", result)
			}
			for i, block := range r.Content {
				if err := sch.strictContent(t, block); err != nil {
					t.Errorf("block %d: %v", i, err)
				}
				if !sameJSON(string(block), want[i]) {
					t.Errorf("block %d:\n got %s\nwant %s", i, block, want[i])
				}
			}
		})
	}
}

// schemaDefOf names the definition a message from the server must match.
func schemaDefOf(m map[string]any) string {
	return map[any]string{
		NotifyMessage:           "LoggingMessageNotification",
		NotifyProgress:          "ProgressNotification",
		NotifyCancelled:         "CancelledNotification",
		MethodPing:              "PingRequest",
		MethodRootsList:         "ListRootsRequest",
		MethodSamplingCreate:    "CreateMessageRequest",
		MethodElicitationCreate: "ElicitRequest",
	}[m["method"]]
}

// TestClientMessagesMatchSchema: the notifications and requests the
// server sends the client are valid against the negotiated revision's
// official schema, sampling content fitted to it.
func TestClientMessagesMatchSchema(t *testing.T) {
	dir := officialSchemaDir(t)
	for _, v := range SupportedVersions() {
		t.Run(v, func(t *testing.T) {
			sch := loadOfficialSchema(t, dir, v)
			chatty := handlerTool("chatty", func(ctx context.Context, req *CallToolRequest) (any, error) {
				s := req.Session
				_ = req.Log(ctx, LogError, map[string]any{"msg": "m", "password": "p"})
				_ = req.Progress(ctx, 1, 2, "half")
				if err := s.Ping(ctx); err != nil {
					return nil, err
				}
				if _, err := s.ListRoots(ctx); err != nil {
					return nil, err
				}
				_, err := s.CreateMessage(ctx, CreateMessageParams{MaxTokens: 9, SystemPrompt: "be brief",
					Messages: []SamplingMessage{{Role: RoleUser, Content: TextContent("q")},
						{Role: RoleAssistant, Content: AudioContent("UklGRg==", "audio/wav")}}})
				if err != nil {
					return nil, err
				}
				if v >= Version20250618 {
					if _, err := s.Elicit(ctx, ElicitParams{Message: "name?", RequestedSchema: map[string]any{
						"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}); err != nil {
						return nil, err
					}
				}
				if err := s.Ping(ctx); errorCodeOf(err) != "TIMEOUT" { // left unanswered
					return nil, err
				}
				return "done", nil
			})
			caps := `{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}`
			cfg := testConfig()
			cfg.Limits.ClientRequestTimeout = 1000 * time.Millisecond
			p := newPeer(t, peerOptions{version: v, caps: caps, cfg: &cfg, manual: true, tools: []Tool{chatty}})
			id := p.startCall("chatty", "", `{"progressToken":"p1"}`)
			answers := map[string]string{
				MethodPing:              `{}`,
				MethodRootsList:         `{"roots":[{"uri":"file:///r"}]}`,
				MethodSamplingCreate:    `{"role":"assistant","content":{"type":"text","text":"a"},"model":"m"}`,
				MethodElicitationCreate: `{"action":"cancel"}`,
			}
			seen := map[string]bool{}
			for {
				m, raw := p.next()
				if got, _ := json.Marshal(m["id"]); m["method"] == nil && string(got) == id {
					if resultText(t, m) != "done" {
						t.Fatalf("tool result %s", raw)
					}
					break
				}
				def := schemaDefOf(m)
				if def == "" {
					t.Fatalf("unexpected message %s", raw)
				}
				seen[def] = true
				if err := sch.validate(t, def, raw); err != nil {
					t.Errorf("%v\n%s", err, raw)
				}
				if m["method"] == MethodSamplingCreate {
					for _, msg := range m["params"].(map[string]any)["messages"].([]any) {
						block := mustMarshal(t, msg.(map[string]any)["content"])
						if err := sch.strictContent(t, block); err != nil {
							t.Error(err)
						}
						if v < Version20250326 && strings.Contains(string(block), `"audio"`) {
							t.Errorf("audio under %s: %s", v, block)
						}
					}
				}
				if m["method"] == MethodPing && seen["pinged"] {
					p.clock.Advance(time.Second) // the second ping is left to time out
					continue
				}
				seen["pinged"] = seen["pinged"] || m["method"] == MethodPing
				if m["id"] != nil && m["method"] != nil {
					rid, _ := json.Marshal(m["id"])
					p.reply(string(rid), answers[m["method"].(string)])
				}
			}
			for _, def := range []string{"LoggingMessageNotification", "ProgressNotification", "PingRequest", "CancelledNotification",
				"ListRootsRequest", "CreateMessageRequest"} {
				if !seen[def] {
					t.Errorf("no %s was sent", def)
				}
			}
			if v >= Version20250618 && !seen["ElicitRequest"] {
				t.Error("no ElicitRequest was sent")
			}
		})
	}
}
