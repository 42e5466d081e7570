package main

import (
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// TestHostileInputResponsesTooLarge: 2.9 MB of inputResponses is the
// client's fault: -32602 naming the limit, not -32603.
func TestHostileInputResponsesTooLarge(t *testing.T) {
	t.Parallel()
	p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Env: []string{"MCPRT_SERVER_MODE=TEST", "MCPRT_SERVER_FIXTURES=conformance",
		"MCPRT_STORE_DIR=" + t.TempDir()}})
	big := `{"action":"accept","content":{"name":"` + strings.Repeat("x", 2900000) + `"}}`
	p.Send(`{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"test_input_required_result_elicitation",` +
		`"arguments":{},"inputResponses":{"other":` + big + `},` + slMeta(`{"elicitation":{}}`) + `}}`)
	e := p.ExpectError(t, `"big"`, -32602)
	if msg, _ := e["message"].(string); !strings.Contains(msg, "inputResponses") || !strings.Contains(msg, "131072") {
		t.Fatalf("message %q does not name inputResponses and the limit", msg)
	}
}
