package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// exchange runs a session of srv over the in-memory transport, sends the
// handshake and then each request, and prints the result (or error) of
// each request, one per line.
func exchange(srv *mcp.Server, requests ...string) {
	server, client := jsonrpc.NewMemoryPair()
	sess := srv.Connect(server, nil)
	go func() { _ = sess.Serve(context.Background()) }()
	send := func(msg string) {
		_ = client.Write(context.Background(), jsonrpc.Outgoing{Data: []byte(msg + "\n")})
	}
	reply := func() []byte {
		msg, err := client.Read()
		if err != nil {
			panic(err)
		}
		return msg
	}

	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`)
	reply()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, req := range requests {
		send(req)
		var m struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		_ = json.Unmarshal(reply(), &m)
		if m.Error != nil {
			fmt.Println("error:", string(m.Error))
			continue
		}
		fmt.Println(string(m.Result))
	}
	sess.Close()
	_ = sess.Wait(context.Background())
}

// A typed tool: the input schema is derived from GreetIn, arguments are
// validated against it, and the result becomes structuredContent plus a
// text block holding its JSON.
func ExampleAddTypedTool() {
	type GreetIn struct {
		Name string `json:"name" description:"who to greet"`
	}
	type GreetOut struct {
		Greeting string `json:"greeting"`
	}
	srv, err := mcp.NewServer(mcp.Options{IDs: &core.SequenceGenerator{}})
	if err != nil {
		panic(err)
	}
	err = mcp.AddTypedTool(srv, mcp.Tool{Name: "greet", Description: "Greets someone by name."},
		func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (GreetOut, error) {
			mcp.Logger(ctx).Info("greeting", "name", in.Name) // scoped with correlationId and runId
			return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	if err != nil {
		panic(err)
	}
	exchange(srv,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{}}}`)
	// Output:
	// {"content":[{"type":"text","text":"{\"greeting\":\"Hello, Ada!\"}"}],"structuredContent":{"greeting":"Hello, Ada!"},"isError":false}
	// {"content":[{"type":"text","text":"{\"code\":\"INVALID_ARGUMENT\",\"message\":\"the arguments do not match the tool's inputSchema: at (root): Required property 'name' is missing (see details.errors for every problem)\",\"details\":{\"errors\":[{\"path\":\"\",\"message\":\"Required property 'name' is missing\"}]},\"retryable\":false,\"correlationId\":\"00000000-0000-4000-8000-000000000005\",\"runId\":\"00000000-0000-4000-8000-000000000004\"}"}],"isError":true}
}

// A handler that honours cancellation: a timeout is a response deadline,
// not a kill. At the deadline the client gets TIMEOUT at once and ctx is
// cancelled; the handler should stop its work and return. Until it returns
// it keeps its concurrency slot.
func ExampleToolHandler_cancellation() {
	srv, err := mcp.NewServer(mcp.Options{IDs: &core.SequenceGenerator{}})
	if err != nil {
		panic(err)
	}
	stopped := make(chan error, 1)
	err = srv.AddTool(mcp.Tool{
		Name:        "crunch",
		Description: "Crunches numbers for up to a minute.",
		Timeout:     20 * time.Millisecond,
		Handler: func(ctx context.Context, req *mcp.CallToolRequest) (any, error) {
			work := time.NewTimer(time.Minute)
			defer work.Stop()
			select {
			case <-work.C:
				return map[string]any{"done": true}, nil
			case <-ctx.Done():
				stopped <- context.Cause(ctx)
				return nil, context.Cause(ctx) // stop at once; this late result is only logged
			}
		},
	})
	if err != nil {
		panic(err)
	}
	exchange(srv, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"crunch"}}`)
	fmt.Println("handler stopped:", <-stopped)
	// Output:
	// {"content":[{"type":"text","text":"{\"code\":\"TIMEOUT\",\"message\":\"the tool did not finish within its 20 ms deadline; it was asked to stop. Retry later or with less work\",\"details\":{\"timeoutMs\":20},\"retryable\":true,\"correlationId\":\"00000000-0000-4000-8000-000000000003\",\"runId\":\"00000000-0000-4000-8000-000000000002\"}"}],"isError":true}
	// handler stopped: mcp: the tool's deadline passed
}

// A raw tool returns a full CallToolResult with its own content blocks.
func ExampleServer_AddTool() {
	srv, err := mcp.NewServer(mcp.Options{})
	if err != nil {
		panic(err)
	}
	err = srv.AddTool(mcp.Tool{
		Name:        "shout",
		Description: "Upper-cases a message.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true)},
		Handler: func(ctx context.Context, req *mcp.CallToolRequest) (any, error) {
			var in struct {
				Message string `json:"message"`
			}
			if err := json.Unmarshal(req.Arguments, &in); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(strings.ToUpper(in.Message))}}, nil
		},
	})
	if err != nil {
		panic(err)
	}
	exchange(srv, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"shout","arguments":{"message":"hi"}}}`)
	// Output:
	// {"content":[{"type":"text","text":"HI"}],"isError":false}
}

// Run serves one session over a transport (here the newline-delimited one
// over pipes, as stdio is) until the input ends, the client sends
// shutdown, or ctx is done, then shuts the session down gracefully.
func ExampleServer_Run() {
	srv, err := mcp.NewServer(mcp.Options{Name: "demo", Version: "1.0.0"})
	if err != nil {
		panic(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), srv.Lines(inR, outW)) }()
	replies := bufio.NewScanner(outR)
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`,
	} {
		_, _ = io.WriteString(inW, msg+"\n")
		if strings.Contains(msg, `"id"`) {
			replies.Scan()
			fmt.Println(replies.Text())
		}
	}
	fmt.Println("Run returned:", <-done)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"demo","version":"1.0.0"}}}
	// {"jsonrpc":"2.0","id":2,"result":{}}
	// Run returned: <nil>
}
