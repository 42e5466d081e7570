package messaging

import (
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// aacp_ack with messageIds answers several taken messages in one call:
// an id that cannot be answered is listed in failed, with why,
// and the senders' requests complete; the single-id form is unchanged,
// and the two forms together, or only unknown ids, are refused.
func TestAckSeveralMessageIDs(t *testing.T) {
	svc := newService(t, testConfig(t.TempDir(), "mgr"), nil)
	c := newClient(t, svc, mcp.ModeFull)
	c.ok("aacp_register_agent", `{"type":"Manager"}`)
	c.ok("aacp_register_agent", `{"agentId":"impl","type":"Implementation"}`)
	var reqs []string
	for range 2 {
		sent := c.ok("aacp_send", `{"agentId":"mgr","receiver":{"agentId":"impl"},"messageType":"CUSTOM_WORK","payload":{"n":1}}`)
		reqs = append(reqs, sent["requestId"].(string))
	}
	msgs := c.ok("aacp_receive", `{"agentId":"impl","waitMs":5000,"max":10}`)["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("impl received %d messages, want 2", len(msgs))
	}
	ids := []string{msgs[0].(map[string]any)["messageId"].(string), msgs[1].(map[string]any)["messageId"].(string)}
	c.fails("aacp_ack", `{"agentId":"impl","messageId":"`+ids[0]+`","messageIds":["`+ids[1]+`"],"status":"processed"}`, string(envelope.CodeSchema))
	c.fails("aacp_ack", `{"agentId":"impl","messageIds":["nope-1","nope-2"],"status":"processed"}`, string(core.CodeNotFound))
	out := c.ok("aacp_ack", `{"agentId":"impl","messageIds":["`+ids[0]+`","nope","`+ids[1]+`"],"status":"processed"}`)
	failed, _ := out["failed"].([]any)
	if out["status"] != "processed" || len(failed) != 1 || !strings.HasPrefix(failed[0].(string), "nope: ") || !strings.Contains(failed[0].(string), string(core.CodeNotFound)) {
		t.Fatalf("aacp_ack with messageIds = %v, want status processed and only the unknown id failed, with why", out)
	}
	for _, req := range reqs {
		deadline := time.Now().Add(10 * time.Second)
		for {
			st := c.ok("aacp_status", `{"agentId":"mgr","requestId":"`+req+`"}`)
			if st["outcome"] == "COMPLETED" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("status %v, want outcome COMPLETED", st)
			}
			c.ok("aacp_receive", `{"agentId":"mgr","waitMs":20}`) // reads mgr's inbox (the ACKs)
		}
	}
	// The single-id form answers as before.
	sent := c.ok("aacp_send", `{"agentId":"mgr","receiver":{"agentId":"impl"},"messageType":"CUSTOM_WORK","payload":{"n":2}}`)
	m := c.ok("aacp_receive", `{"agentId":"impl","waitMs":5000}`)["messages"].([]any)[0].(map[string]any)
	one := c.ok("aacp_ack", `{"agentId":"impl","messageId":"`+m["messageId"].(string)+`","status":"received"}`)
	if one["messageId"] != m["messageId"] || one["requestId"] != sent["requestId"] || one["replyMessageId"] == nil || one["failed"] != nil {
		t.Errorf("aacp_ack with messageId = %v", one)
	}
}
