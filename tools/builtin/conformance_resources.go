package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// The conformance suite's resources.
const (
	conformanceStaticTextURI = "test://static-text"
	conformanceStaticBinURI  = "test://static-binary"
	conformanceTemplate      = "test://template/{id}/data"
	conformanceWatchedURI    = "test://watched-resource"

	conformanceStaticText   = "This is the content of the static text resource."
	conformanceWatchedFirst = "Watched resource content"
)

// conformanceEnabled reports whether cfg asks for the conformance
// fixtures: mode TEST and "conformance" in server.fixtures.
func conformanceEnabled(cfg core.Config) bool {
	return cfg.Server.Mode == core.ModeTest && slices.Contains(cfg.Server.Fixtures, core.FixtureConformance)
}

// registerConformance registers the conformance suite's tools, resources,
// template and prompts on srv, naming the first that fails.
func registerConformance(srv *mcp.Server) error {
	w := &watchedResource{text: conformanceWatchedFirst}
	tools := append(conformanceTools(w), statelessTools()...)
	for _, t := range append(tools, conformanceTaskTools()...) { // conformance_tasks.go
		if err := t.add(srv); err != nil {
			return fmt.Errorf("builtin: register conformance tool %q: %w", t.name, err)
		}
	}
	for _, r := range []struct {
		res  mcp.Resource
		read mcp.ResourceHandler
	}{
		{mcp.Resource{URI: conformanceStaticTextURI, Name: "static-text", Title: "Static Text Resource",
			Description: "A static text resource for testing", MIMEType: "text/plain"},
			fixedResource(mcp.TextResource(conformanceStaticTextURI, "text/plain", conformanceStaticText))},
		{mcp.Resource{URI: conformanceStaticBinURI, Name: "static-binary", Title: "Static Binary Resource",
			Description: "A static binary resource (image) for testing", MIMEType: "image/png"},
			fixedResource(mcp.ResourceContents{URI: conformanceStaticBinURI, MIMEType: "image/png", Blob: conformanceImage})},
		{mcp.Resource{URI: conformanceWatchedURI, Name: "watched-resource", Title: "Watched Resource",
			Description: "A resource to subscribe to; test_update_watched_resource changes it and notifies its subscribers",
			MIMEType:    "text/plain"}, w.read},
	} {
		if err := srv.AddResource(r.res, r.read); err != nil {
			return fmt.Errorf("builtin: register conformance resource %q: %w", r.res.URI, err)
		}
	}
	err := srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: conformanceTemplate, Name: "template",
		Title: "Resource Template", Description: "A resource template with parameter substitution",
		MIMEType: "application/json", Complete: mcp.CompletionsFrom(map[string][]string{"id": {"123", "456", "789"}})},
		templateResource)
	if err != nil {
		return fmt.Errorf("builtin: register conformance template %q: %w", conformanceTemplate, err)
	}
	for _, p := range append(conformancePrompts(), inputPrompt()) {
		if err := srv.AddPrompt(p.prompt, p.get); err != nil {
			return fmt.Errorf("builtin: register conformance prompt %q: %w", p.prompt.Name, err)
		}
	}
	return nil
}

// fixedResource returns a handler whose contents are always c.
func fixedResource(c mcp.ResourceContents) mcp.ResourceHandler {
	return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{c}}, nil
	}
}

// templateResource reads test://template/{id}/data: JSON naming the id.
func templateResource(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id := req.Variables["id"]
	text, err := json.Marshal(struct {
		ID           string `json:"id"`
		TemplateTest bool   `json:"templateTest"`
		Data         string `json:"data"`
	}{id, true, "Data for ID: " + id})
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(req.URI, "application/json", string(text))}}, nil
}

// watchedResource is the text of test://watched-resource and how often it
// was changed.
type watchedResource struct {
	mu      sync.Mutex
	text    string // guarded by mu
	updates int    // guarded by mu
}

func (w *watchedResource) read(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	w.mu.Lock()
	text := w.text
	w.mu.Unlock()
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(conformanceWatchedURI, "text/plain", text)}}, nil
}

// update sets the text (a default naming the update when text is "") and
// returns the update's number, from 1.
func (w *watchedResource) update(text string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.updates++
	if text == "" {
		text = conformanceWatchedFirst + " (update " + strconv.Itoa(w.updates) + ")"
	}
	w.text = text
	return w.updates
}

// conformancePrompt is a prompt and its handler.
type conformancePrompt struct {
	prompt mcp.Prompt
	get    mcp.PromptHandler
}

// conformancePrompts returns the conformance suite's prompts.
func conformancePrompts() []conformancePrompt {
	user := func(c mcp.Content) mcp.PromptMessage { return mcp.PromptMessage{Role: mcp.RoleUser, Content: c} }
	messages := func(m ...mcp.PromptMessage) *mcp.GetPromptResult { return &mcp.GetPromptResult{Messages: m} }
	return []conformancePrompt{
		{mcp.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return messages(user(mcp.TextContent("This is a simple prompt for testing."))), nil
			}},
		{mcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments",
			Description: "A prompt with required arguments",
			Arguments: []mcp.PromptArgument{
				{Name: "arg1", Description: "First test argument", Required: true},
				{Name: "arg2", Description: "Second test argument", Required: true},
			},
			Complete: mcp.CompletionsFrom(map[string][]string{
				"arg1": {"paris", "park", "party"},
				"arg2": {"hello", "world"},
			})},
			func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return messages(user(mcp.TextContent(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'",
					req.Arguments["arg1"], req.Arguments["arg2"])))), nil
			}},
		{mcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource",
			Description: "A prompt that includes an embedded resource",
			Arguments:   []mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
			Complete: mcp.CompletionsFrom(map[string][]string{
				"resourceUri": {conformanceStaticTextURI, conformanceStaticBinURI, conformanceWatchedURI, "test://template/123/data"},
			})},
			func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				uri := req.Arguments["resourceUri"]
				if uri == "" {
					return nil, errors.New("resourceUri is empty; give the URI of the resource to embed")
				}
				return messages(
					user(mcp.EmbeddedResourceContent(mcp.TextResource(uri, "text/plain", "Embedded resource content for testing."))),
					user(mcp.TextContent("Please process the embedded resource above.")),
				), nil
			}},
		{mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return messages(
					user(mcp.ImageContent(conformanceImage, "image/png")),
					user(mcp.TextContent("Please analyze the image above.")),
				), nil
			}},
	}
}
