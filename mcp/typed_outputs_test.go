package mcp_test

import (
	"context"
	"testing"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/fixtures"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/tools/builtin"
	"github.com/mcprt/mcprt/tools/domain"
	"github.com/mcprt/mcprt/tools/messaging"
)

// The results of mcprt's own typed tools are not checked against the
// outputSchema derived from their type at run time (they satisfy it by
// construction). This property test holds every such tool the binary
// registers to it: generated values of each result type, encoded as a
// call's result is, satisfy the derived schema by kaptinlin's judgement.
func TestTypedToolResultsSatisfyDerivedSchemas(t *testing.T) {
	base := config.DefaultBase("test")
	base.AACP.DataDir = t.TempDir()
	base.AACP.AgentID = "prop"
	srv, err := mcp.NewServer(mcp.Options{Name: "prop", Version: "1", Mode: mcp.ModeTest})
	if err != nil {
		t.Fatal(err)
	}
	if err := fixtures.Register(srv, fixtures.Options{Conformance: true}); err != nil {
		t.Fatal(err)
	}
	if err := builtin.Register(srv, builtin.Options{Admin: true}); err != nil {
		t.Fatal(err)
	}
	dom, err := domain.New(domain.Options{Config: config.DefaultDomain(), Base: base})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dom.Close(context.Background()) })
	if err := dom.Register(srv); err != nil {
		t.Fatal(err)
	}
	msg, err := messaging.New(messaging.Options{Config: base.AACP})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = msg.Close() })
	if err := msg.Register(srv); err != nil {
		t.Fatal(err)
	}
	tools, failure := mcp.CheckTypedOutputs(srv, 20261126, 200)
	if failure != "" {
		t.Fatal(failure)
	}
	if tools < 20 {
		t.Fatalf("only %d typed tools with a derived outputSchema were checked; the registration above lost some", tools)
	}
	t.Logf("%d typed tools' result types, 200 values each: every one satisfies its derived outputSchema", tools)
}
