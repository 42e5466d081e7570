package bench

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/mcp"
)

// reportOut is the structured result of the report tool: the kind of
// record a lookup tool returns.
type reportOut struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Email   string   `json:"email"`
	Age     int      `json:"age"`
	Active  bool     `json:"active"`
	Score   float64  `json:"score"`
	Tags    []string `json:"tags"`
	Project string   `json:"project"`
}

// reportOutputSchema is report's hand-written outputSchema.
const reportOutputSchema = `{"type":"object","additionalProperties":false,` +
	`"required":["id","name","email","age","active","score","tags","project"],"properties":{` +
	`"id":{"type":"string","maxLength":64},"name":{"type":"string","minLength":1,"maxLength":100},` +
	`"email":{"type":"string","pattern":"^[^@]+@[^@]+$"},"age":{"type":"integer","minimum":0,"maximum":150},` +
	`"active":{"type":"boolean"},"score":{"type":"number","minimum":0,"maximum":100},` +
	`"tags":{"type":"array","maxItems":20,"items":{"type":"string","maxLength":32}},` +
	`"project":{"type":"string","maxLength":128}}}`

// BenchmarkDispatchStructuredOutput calls a tool with a hand-written
// outputSchema whose handler returns a *CallToolResult with a text block
// and StructuredContent: the cost of encoding a structured result and
// checking it against the schema, through the same path as
// BenchmarkDispatchNoop.
func BenchmarkDispatchStructuredOutput(b *testing.B) {
	out := &reportOut{ID: "u-1", Name: "Ada Lovelace", Email: "ada@example.org", Age: 36, Active: true, Score: 99.5,
		Tags: []string{"math", "engines"}, Project: "engine"}
	srv := newServer(b, config.DefaultBase("bench"), func(srv *mcp.Server) error {
		return srv.AddTool(mcp.Tool{Name: "report", OutputSchema: json.RawMessage(reportOutputSchema),
			Handler: func(context.Context, *mcp.CallToolRequest) (any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("Ada Lovelace (u-1)")}, StructuredContent: out}, nil
			}})
	})
	tail := `,"method":"tools/call","params":{"name":"report","arguments":{}}}` + "\n"
	s := startSession(b, srv)
	s.warm(b, tail, `"structuredContent":{"id":"u-1"`)
	s.bench(b, tail, 1)
}
