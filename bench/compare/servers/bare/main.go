// Command bare is the floor of the comparison: no MCP library, just what it
// costs to read a line, decode its envelope and write a reply. It reads
// stdin with bufio line by line, decodes each line's id and method with
// encoding/json, and writes a canned reply: a real one to initialize and
// tools/list (so that the harness's handshake works), an empty result to
// tools/call, and -32601 to anything else. Notifications get no reply.
// Replies are buffered and flushed whenever no more input is buffered, so
// pipelined requests are answered in batches.
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

const (
	initializeResult = `,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false}},` +
		`"serverInfo":{"name":"bare","version":"1.0.0"}}}` + "\n"
	toolsListResult = `,"result":{"tools":[{"name":"noop","description":"does nothing and returns an empty result",` +
		`"inputSchema":{"type":"object"}}]}}` + "\n"
	toolsCallResult = `,"result":{"content":[]}}` + "\n"
	methodNotFound  = `,"error":{"code":-32601,"message":"Method not found"}}` + "\n"
)

// envelope is the part of a message the loop looks at.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func main() {
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			w.Flush()
			return
		}
		var env envelope
		if json.Unmarshal(line, &env) != nil || len(env.ID) == 0 || string(env.ID) == "null" {
			continue
		}
		w.WriteString(`{"jsonrpc":"2.0","id":`)
		w.Write(env.ID)
		switch env.Method {
		case "initialize":
			w.WriteString(initializeResult)
		case "tools/list":
			w.WriteString(toolsListResult)
		case "tools/call":
			w.WriteString(toolsCallResult)
		default:
			w.WriteString(methodNotFound)
		}
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}
