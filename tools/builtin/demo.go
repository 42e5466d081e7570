package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// The demo resources, prompts and tools of mode TEST exercise every
// feature besides tools/call from a real client (the TypeScript SDK client
// and the MCP Inspector tests of cmd/mcprt, the fuzz targets of fuzz/).
// Their names start with demo_ and their URIs with demo://.
const (
	// DemoReadmeURI is a fixed text resource.
	DemoReadmeURI = "demo://static/readme"
	// DemoLogoURI is a fixed binary resource (a 1x1 PNG).
	DemoLogoURI = "demo://static/logo"
	// DemoCounterURI is a resource whose text is a counter that the
	// demo_touch tool increments, telling its subscribers
	// (notifications/resources/updated).
	DemoCounterURI = "demo://counter"
	// DemoNoteTemplate is a template whose {name} is a note's name (alpha, beta or gamma).
	DemoNoteTemplate = "demo://notes/{name}"
	// demoProgressMaxSteps bounds demo_progress.
	demoProgressMaxSteps = 10
)

// demoNotes are the notes DemoNoteTemplate serves, by name; any other
// name is NOT_FOUND.
var demoNotes = map[string]string{
	"alpha": "The first note.",
	"beta":  "The second note.",
	"gamma": "The third note.",
}

// demoLogo is a 1x1 transparent PNG.
var demoLogo = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
	0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
	0x42, 0x60, 0x82,
}

// registerDemo registers, in mode TEST only, the demo resources
// (DemoReadmeURI, DemoLogoURI, DemoCounterURI), the template
// DemoNoteTemplate (completing {name}), the prompts demo_greeting and
// demo_review, and the tools demo_touch, demo_progress, demo_log,
// demo_sample, demo_elicit and demo_roots.
func registerDemo(srv *mcp.Server) error {
	if srv.Config().Server.Mode != core.ModeTest {
		return nil
	}
	counter := new(atomic.Int64)
	if err := demoResources(srv, counter); err != nil {
		return err
	}
	if err := demoPrompts(srv); err != nil {
		return err
	}
	for _, t := range demoTools(srv, counter) {
		if err := t.add(srv); err != nil && !errors.Is(err, mcp.ErrNotAdmitted) {
			return fmt.Errorf("builtin: register demo tool %q: %w", t.name, err)
		}
	}
	return nil
}

func demoResources(srv *mcp.Server, counter *atomic.Int64) error {
	text := func(uri, mime string, body func() string) mcp.ResourceHandler {
		return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(uri, mime, body())}}, nil
		}
	}
	readme := "# mcprt demo\n\nThe TEST-mode demo resources, prompts and tools."
	static := []struct {
		r mcp.Resource
		h mcp.ResourceHandler
	}{
		{mcp.Resource{URI: DemoReadmeURI, Name: "demo_readme", Title: "Demo readme",
			Description: "TEST demo: a fixed markdown text.", MIMEType: "text/markdown", Size: int64(len(readme)),
			Annotations: &mcp.Annotations{Audience: []mcp.Role{mcp.RoleUser}, LastModified: "2025-01-12T15:00:58Z"}},
			text(DemoReadmeURI, "text/markdown", func() string { return readme })},
		{mcp.Resource{URI: DemoLogoURI, Name: "demo_logo", Title: "Demo logo",
			Description: "TEST demo: a fixed 1x1 PNG, sent as a base64 blob.", MIMEType: "image/png", Size: int64(len(demoLogo))},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.BlobResource(DemoLogoURI, "image/png", demoLogo)}}, nil
			}},
		{mcp.Resource{URI: DemoCounterURI, Name: "demo_counter", Title: "Demo counter",
			Description: "TEST demo: how many times demo_touch ran; subscribe to hear of each change.", MIMEType: "text/plain"},
			text(DemoCounterURI, "text/plain", func() string { return strconv.FormatInt(counter.Load(), 10) })},
	}
	for _, s := range static {
		if err := srv.AddResource(s.r, s.h); err != nil {
			return fmt.Errorf("builtin: register demo resource %q: %w", s.r.URI, err)
		}
	}
	names := []string{"alpha", "beta", "gamma"} // the keys of demoNotes, in order
	err := srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: DemoNoteTemplate, Name: "demo_note",
		Title: "Demo note", Description: "TEST demo: a note by name (alpha, beta, gamma); {name} completes.",
		MIMEType: "text/plain", Complete: mcp.CompletionsFrom(map[string][]string{"name": names})},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			note, ok := demoNotes[req.Variables["name"]]
			if !ok {
				return nil, core.Errorf(core.CodeNotFound, "no demo note is named %q", req.Variables["name"])
			}
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource("", "text/plain", note)}}, nil
		})
	if err != nil {
		return fmt.Errorf("builtin: register demo template %q: %w", DemoNoteTemplate, err)
	}
	return nil
}

func demoPrompts(srv *mcp.Server) error {
	err := srv.AddPrompt(mcp.Prompt{
		Name: "demo_greeting", Title: "Demo greeting",
		Description: "TEST demo: a greeting for name, in a style (formal, casual or pirate; both complete).",
		Arguments: []mcp.PromptArgument{
			{Name: "name", Title: "Name", Description: "Whom to greet.", Required: true},
			{Name: "style", Title: "Style", Description: "formal, casual or pirate (default casual)."},
		},
		Complete: mcp.CompletionsFrom(map[string][]string{
			"name":  {"Ada", "Alan", "Grace"},
			"style": {"casual", "formal", "pirate"},
		}),
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		var greeting string
		switch style := req.Arguments["style"]; style {
		case "", "casual":
			greeting = "Hi " + req.Arguments["name"] + "!"
		case "formal":
			greeting = "Good day, " + req.Arguments["name"] + "."
		case "pirate":
			greeting = "Ahoy, " + req.Arguments["name"] + "!"
		default:
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, fmt.Sprintf(
				"Invalid params: demo_greeting's style is %q; use formal, casual or pirate", style))
		}
		return &mcp.GetPromptResult{Description: "A greeting", Messages: []mcp.PromptMessage{
			{Role: mcp.RoleUser, Content: mcp.TextContent("Greet me as you would: " + greeting)},
			{Role: mcp.RoleAssistant, Content: mcp.TextContent(greeting)},
		}}, nil
	})
	if err != nil {
		return fmt.Errorf("builtin: register demo prompt: %w", err)
	}
	err = srv.AddPrompt(mcp.Prompt{
		Name: "demo_review", Title: "Demo review",
		Description: "TEST demo: asks to review the demo readme; its messages hold text, an image, an embedded " +
			"resource and a resource link (fitted to the session's revision). Takes no arguments.",
	}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		logo := mcp.BlobResource(DemoLogoURI, "image/png", demoLogo)
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
			{Role: mcp.RoleUser, Content: mcp.TextContent("Review the readme below.")},
			{Role: mcp.RoleUser, Content: mcp.ImageContent(logo.Blob, "image/png")},
			{Role: mcp.RoleUser, Content: mcp.EmbeddedResourceContent(mcp.TextResource(DemoReadmeURI, "text/markdown", "# mcprt demo"))},
			{Role: mcp.RoleUser, Content: mcp.ResourceLinkContent(DemoCounterURI, "demo_counter")},
		}}, nil
	})
	if err != nil {
		return fmt.Errorf("builtin: register demo prompt: %w", err)
	}
	return nil
}

type demoTouchResult struct {
	Count    int64 `json:"count" jsonschema:"The counter after this touch."`
	Notified int   `json:"notified" jsonschema:"How many subscribed sessions were told."`
}

type demoProgressArgs struct {
	Steps float64 `json:"steps" jsonschema:"How many progress reports to send (1-10)."`
}

type demoProgressResult struct {
	Steps    int `json:"steps"`
	Reported int `json:"reported" jsonschema:"How many reports were sent (0 without a progressToken)."`
}

type demoLogArgs struct {
	Message string `json:"message" jsonschema:"The text of the debug message."`
}

type demoSampleArgs struct {
	Prompt string `json:"prompt" jsonschema:"The user message to sample a reply to."`
}

type demoSampleResult struct {
	Model      string `json:"model"`
	Role       string `json:"role"`
	Text       string `json:"text"`
	StopReason string `json:"stopReason,omitempty"`
}

type demoElicitArgs struct {
	Message string `json:"message" jsonschema:"What to ask the user."`
}

type demoElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

type demoRootsResult struct {
	Roots []mcp.Root `json:"roots"`
}

// demoTools are the demo tools; like the fixtures, none is read-only.
func demoTools(srv *mcp.Server, counter *atomic.Int64) []tool {
	demo := func(title string) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: mcp.Bool(false), OpenWorldHint: mcp.Bool(false)}
	}
	return []tool{
		typed(mcp.Tool{
			Name: "demo_touch",
			Description: "TEST demo: increments the counter of " + DemoCounterURI + " and sends " +
				"notifications/resources/updated to the sessions subscribed to it. Takes no arguments.",
			Annotations: demo("Touch the demo counter"),
		}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (demoTouchResult, error) {
			n := counter.Add(1)
			return demoTouchResult{Count: n, Notified: srv.ResourceUpdated(ctx, DemoCounterURI)}, nil
		}),
		typed(mcp.Tool{
			Name: "demo_progress",
			Description: "TEST demo: sends steps progress reports (total steps) when the call carries " +
				"_meta.progressToken, then returns {steps, reported}.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":` +
				strconv.Itoa(demoProgressMaxSteps) + `,"description":"How many progress reports to send."}},` +
				`"required":["steps"],"additionalProperties":false}`),
			Annotations: demo("Report progress"),
		}, func(ctx context.Context, req *mcp.CallToolRequest, in demoProgressArgs) (demoProgressResult, error) {
			if in.Steps < 1 || in.Steps > demoProgressMaxSteps || in.Steps != math.Trunc(in.Steps) {
				return demoProgressResult{}, core.Errorf(core.CodeInvalidArgument, "steps is %v; want 1-%d", in.Steps, demoProgressMaxSteps)
			}
			steps := int(in.Steps)
			out := demoProgressResult{Steps: steps}
			for i := 1; i <= steps; i++ {
				err := req.Progress(ctx, float64(i), float64(steps), fmt.Sprintf("step %d of %d", i, steps))
				switch {
				case errors.Is(err, mcp.ErrNoProgressToken):
					return out, nil
				case err != nil:
					return out, err
				}
				out.Reported++
			}
			return out, nil
		}),
		typed(mcp.Tool{
			Name: "demo_log",
			Description: "TEST demo: sends {message} to the client as a debug message (notifications/message, " +
				"logger demo_log), which it gets only after logging/setLevel debug.",
			Annotations: demo("Log a debug message"),
		}, func(ctx context.Context, req *mcp.CallToolRequest, in demoLogArgs) (any, error) {
			return struct{}{}, req.Log(ctx, mcp.LogDebug, map[string]string{"message": in.Message})
		}),
		typed(mcp.Tool{
			Name: "demo_sample",
			Description: "TEST demo: asks the client to sample a reply to prompt (sampling/createMessage) and " +
				"returns it; needs the client's sampling capability.",
			Annotations: demo("Sample the client's model"),
		}, func(ctx context.Context, req *mcp.CallToolRequest, in demoSampleArgs) (demoSampleResult, error) {
			res, err := req.Session.CreateMessage(ctx, mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.TextContent(in.Prompt)}},
				MaxTokens: 100, SystemPrompt: "You are the mcprt demo.",
				ModelPreferences: &mcp.ModelPreferences{Hints: []mcp.ModelHint{{Name: "demo"}}},
			})
			if err != nil {
				return demoSampleResult{}, err
			}
			return demoSampleResult{Model: res.Model, Role: string(res.Role), Text: res.Text(), StopReason: res.StopReason}, nil
		}),
		typed(mcp.Tool{
			Name: "demo_elicit",
			Description: "TEST demo: asks the client's user for {name} (elicitation/create, form mode) and returns " +
				"the action and content; needs revision 2025-06-18 or later and the client's elicitation capability.",
			Annotations: demo("Elicit a name"),
		}, func(ctx context.Context, req *mcp.CallToolRequest, in demoElicitArgs) (demoElicitResult, error) {
			res, err := req.Session.Elicit(ctx, mcp.ElicitParams{Message: in.Message, RequestedSchema: map[string]any{
				"type":       "object",
				"properties": map[string]any{"name": map[string]any{"type": "string", "description": "Your name"}},
				"required":   []string{"name"},
			}})
			if err != nil {
				return demoElicitResult{}, err
			}
			return demoElicitResult{Action: res.Action, Content: res.Content}, nil
		}),
		typed(mcp.Tool{
			Name: "demo_roots",
			Description: "TEST demo: returns the client's roots (roots/list, cached until the client says they " +
				"changed); needs the client's roots capability. Takes no arguments.",
			Annotations: demo("List the client's roots"),
		}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (demoRootsResult, error) {
			roots, err := req.Session.ListRoots(ctx)
			if err != nil {
				return demoRootsResult{}, err
			}
			if roots == nil {
				roots = []mcp.Root{}
			}
			return demoRootsResult{Roots: roots}, nil
		}),
	}
}
