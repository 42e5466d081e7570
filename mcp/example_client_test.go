package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// clientSide is the client's end of an example session: it sends lines
// and prints what the server sends, answering the server's requests from
// answers (by method).
type clientSide struct {
	stream jsonrpc.Stream
	sess   *mcp.Session
}

// startSession connects a session of srv over the in-memory transport and
// completes the handshake with the given revision and capabilities.
func startSession(srv *mcp.Server, version, caps string) *clientSide {
	server, client := jsonrpc.NewMemoryPair()
	c := &clientSide{stream: client, sess: srv.Connect(server, nil)}
	go func() { _ = c.sess.Serve(context.Background()) }()
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":` + caps + `,"clientInfo":{"name":"example","version":"1"}}}`)
	c.read()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *clientSide) send(msg string) {
	_ = c.stream.Write(context.Background(), jsonrpc.Outgoing{Data: []byte(msg + "\n")})
}

func (c *clientSide) read() map[string]json.RawMessage {
	msg, err := c.stream.Read()
	if err != nil {
		panic(err)
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(msg, &m)
	return m
}

// call sends tools/call and prints every message up to its answer: the
// notifications' params, the server's requests (answered from answers),
// then the tool's text.
func (c *clientSide) call(tool, meta string, answers map[string]string) {
	params := `{"name":"` + tool + `"`
	if meta != "" {
		params += `,"_meta":` + meta
	}
	c.send(`{"jsonrpc":"2.0","id":"call","method":"tools/call","params":` + params + `}}`)
	for {
		m := c.read()
		var method string
		_ = json.Unmarshal(m["method"], &method)
		switch {
		case method != "" && m["id"] != nil:
			fmt.Println(strings.TrimSpace("request: " + method + " " + string(m["params"])))
			c.send(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":` + answers[method] + `}`)
		case method != "":
			fmt.Println(method+":", string(m["params"]))
		default:
			var res struct{ Content []struct{ Text string } }
			_ = json.Unmarshal(m["result"], &res)
			fmt.Println("result:", res.Content[0].Text)
			c.sess.Close()
			return
		}
	}
}

// A handler sends log messages to the client. Secrets are redacted and
// control characters escaped, as in the server's own logs; messages below
// the session's level (info until the client sends logging/setLevel) are
// not sent.
func ExampleSession_Log() {
	srv, _ := mcp.NewServer(mcp.Options{Name: "demo", Version: "1.0.0"})
	_ = srv.AddTool(mcp.Tool{Name: "deploy", Handler: func(ctx context.Context, req *mcp.CallToolRequest) (any, error) {
		_ = req.Log(ctx, mcp.LogDebug, "not sent: below info")
		_ = req.Log(ctx, mcp.LogInfo, map[string]any{"step": "upload\nfinished", "token": "s3cret"})
		_ = req.Session.Log(ctx, mcp.LogWarning, "deployer", "disk almost full")
		return "deployed", nil
	}})
	startSession(srv, "2025-11-25", `{}`).call("deploy", "", nil)
	// Output:
	// notifications/message: {"level":"info","logger":"deploy","data":{"step":"upload\\u000afinished","token":"[REDACTED]"}}
	// notifications/message: {"level":"warning","logger":"deployer","data":"disk almost full"}
	// result: deployed
}

// A handler reports progress when the client asked for it with a
// progressToken; progress must increase, and nothing is sent after the
// answer.
func ExampleCallToolRequest_Progress() {
	srv, _ := mcp.NewServer(mcp.Options{Name: "demo", Version: "1.0.0"})
	_ = srv.AddTool(mcp.Tool{Name: "index", Handler: func(ctx context.Context, req *mcp.CallToolRequest) (any, error) {
		for i := 1; i <= 3; i++ {
			if err := req.Progress(ctx, float64(i), 3, fmt.Sprintf("file %d of 3", i)); err != nil {
				return nil, err // ErrNoProgressToken when the client did not ask
			}
		}
		again := req.Progress(ctx, 3, 3, "") // not increasing: refused
		return "indexed (" + again.Error() + ")", nil
	}})
	startSession(srv, "2025-06-18", `{}`).call("index", `{"progressToken":"job-1"}`, nil)
	// Output:
	// notifications/progress: {"progressToken":"job-1","progress":1,"total":3,"message":"file 1 of 3"}
	// notifications/progress: {"progressToken":"job-1","progress":2,"total":3,"message":"file 2 of 3"}
	// notifications/progress: {"progressToken":"job-1","progress":3,"total":3,"message":"file 3 of 3"}
	// result: indexed (INVALID_ARGUMENT: progress must increase with every report: got 3 after 3; nothing was sent)
}

// A handler asks the client for its roots, its LLM and its user. Each
// request needs the client's capability; without it the call fails at
// once with NOT_IMPLEMENTED.
func ExampleSession_Elicit() {
	srv, _ := mcp.NewServer(mcp.Options{Name: "demo", Version: "1.0.0"})
	_ = srv.AddTool(mcp.Tool{Name: "assist", Handler: func(ctx context.Context, req *mcp.CallToolRequest) (any, error) {
		roots, err := req.Session.ListRoots(ctx)
		if err != nil {
			return nil, err
		}
		msg, err := req.Session.CreateMessage(ctx, mcp.CreateMessageParams{MaxTokens: 50,
			Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.TextContent("Name this project")}}})
		if err != nil {
			return nil, err
		}
		ok, err := req.Session.Elicit(ctx, mcp.ElicitParams{Message: "Use " + msg.Text() + "?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
				"confirm": map[string]any{"type": "boolean"}}}})
		if err != nil {
			return nil, err
		}
		return fmt.Sprintf("%s in %s: %s %v", msg.Text(), roots[0].URI, ok.Action, ok.Content["confirm"]), nil
	}})
	c := startSession(srv, "2025-06-18", `{"roots":{},"sampling":{},"elicitation":{}}`)
	c.call("assist", "", map[string]string{
		"roots/list":             `{"roots":[{"uri":"file:///src/app","name":"app"}]}`,
		"sampling/createMessage": `{"role":"assistant","content":{"type":"text","text":"Atlas"},"model":"m"}`,
		"elicitation/create":     `{"action":"accept","content":{"confirm":true}}`,
	})
	// Output:
	// request: roots/list
	// request: sampling/createMessage {"messages":[{"role":"user","content":{"type":"text","text":"Name this project"}}],"maxTokens":50}
	// request: elicitation/create {"message":"Use Atlas?","requestedSchema":{"properties":{"confirm":{"type":"boolean"}},"type":"object"}}
	// result: Atlas in file:///src/app: accept true
}

// Content blocks newer than the negotiated revision are downgraded: a
// resource link becomes a text block naming it before 2025-06-18.
func ExampleContentForRevision() {
	link := mcp.ResourceLinkContent("file:///report.pdf", "report")
	link.MIMEType = "application/pdf"
	for _, v := range []string{"2025-03-26", "2025-06-18"} {
		js, _ := json.Marshal(mcp.ContentForRevision(link, v))
		fmt.Println(v, string(js))
	}
	// Output:
	// 2025-03-26 {"type":"text","text":"[resource link] report: file:///report.pdf (application/pdf)"}
	// 2025-06-18 {"type":"resource_link","mimeType":"application/pdf","uri":"file:///report.pdf","name":"report"}
}
