package domain

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcprt/mcprt/mcp"
)

// The prompts the domains serve.
const (
	PromptSearchMemory = "search_memory"
	PromptAnalyzeTrace = "analyze_trace"
)

// registerPrompts adds search_memory when memory_search is admitted and
// analyze_trace when trace_analyze is and tracing is on.
func (d *Domain) registerPrompts(srv *mcp.Server, admitted map[string]bool) error {
	if admitted["memory_search"] {
		err := srv.AddPrompt(mcp.Prompt{Name: PromptSearchMemory, Title: "Search memory",
			Description: "Ask the model to search the shared memory with memory_search and summarise what it finds",
			Arguments: []mcp.PromptArgument{{Name: "query", Title: "Query", Required: true,
				Description: "What to look for: a substring of keys, or words of the values"},
				{Name: "namespace", Title: "Namespace", Description: "Only search this namespace (default: all)"}},
			Complete: d.completeNamespaces,
		}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			q, ns := req.Arguments["query"], req.Arguments["namespace"]
			what, call := "Search the shared memory for "+quote(q), "Call the memory_search tool with query "+quote(q)
			if ns != "" {
				what += " in namespace " + quote(ns)
				call += " and namespace " + quote(ns)
			}
			return userPrompt(what, call+" (first as a key search, then with fullText true "+
				"if that finds nothing), then summarise the entries found: their namespace, key and what their values say."), nil
		})
		if err != nil {
			return err
		}
	}
	if admitted["trace_analyze"] && d.recorder != nil {
		err := srv.AddPrompt(mcp.Prompt{Name: PromptAnalyzeTrace, Title: "Analyze trace",
			Description: "Ask the model to analyse a trace of tool calls with trace_analyze and explain it",
			Arguments: []mcp.PromptArgument{{Name: "traceId", Title: "Trace id", Required: true,
				Description: "The trace to analyse (trace_list or traces://recent shows them)"}},
			Complete: d.completeTraces,
		}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			id := req.Arguments["traceId"]
			return userPrompt("Analyse trace "+quote(id),
				"Call the trace_analyze tool with traceId "+quote(id)+", then explain what the calls did, "+
					"which steps failed or were slow and why, and what its recommendations mean."), nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// completeNamespaces proposes the memory's namespaces for search_memory's
// namespace argument; query has nothing to propose.
func (d *Domain) completeNamespaces(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	if req.Argument != "namespace" {
		return completions(nil, req.Value), nil
	}
	st, err := d.memory.Stats(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("listing the memory's namespaces: %w", err)
	}
	names := make([]string, len(st.Namespaces))
	for i, n := range st.Namespaces {
		names[i] = n.Namespace
	}
	return completions(names, req.Value), nil
}

// userPrompt is one user message.
func userPrompt(description, text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{Description: description,
		Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.TextContent(text)}}}
}

// quote is s as a JSON string, so that quotes or newlines in an argument
// cannot blur where it ends.
func quote(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}
