package builtin

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/mcp"
)

var update = flag.Bool("update", false, "rewrite testdata/tools_list.golden from the current listing")

// goldenListing is the tools/list of a TEST server with the admin tools and
// one dynamic tool of each toolType: one tool per line, exactly as listed.
const goldenListing = "testdata/tools_list.golden"

// TestListingPinned pins every built-in tool's listing byte for byte: name,
// title, description, inputSchema, outputSchema and annotations, in the
// order the server writes them. A change to a schema (hand-written or
// derived from a Go type), a description or an annotation shows up here;
// if it is meant, rerun with -update and review the diff.
func TestListingPinned(t *testing.T) {
	c := newClient(t, setup{mode: mcp.ModeTest, admin: true, policy: config.AdminPolicyLocalStdioOnly})
	for _, tt := range toolTypes {
		c.ok("admin_register_tool", `{"name":"dyn_`+tt+`","description":"d","toolType":"`+tt+`"}`)
		c.listChanged()
	}
	var got bytes.Buffer
	for _, tool := range c.rawTools() {
		got.Write(tool)
		got.WriteByte('\n')
	}
	if *update {
		if err := os.WriteFile(goldenListing, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenListing)
	if err != nil {
		t.Fatal(err)
	}
	gotLines, wantLines := listingByName(got.String()), listingByName(string(want))
	for name, w := range wantLines {
		if g, ok := gotLines[name]; !ok {
			t.Errorf("%s is no longer listed; it was\n%s", name, w)
		} else if g != w {
			t.Errorf("%s is listed differently:\n got %s\nwant %s", name, g, w)
		}
	}
	for name, g := range gotLines {
		if _, ok := wantLines[name]; !ok {
			t.Errorf("%s is listed but not pinned:\n%s", name, g)
		}
	}
}

// listingByName maps each tool's name to its line.
func listingByName(listing string) map[string]string {
	out := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(listing), "\n") {
		var tool struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal([]byte(line), &tool)
		out[tool.Name] = line
	}
	return out
}

// rawTools returns the tools/list entries (all pages) exactly as the server
// wrote them.
func (c *client) rawTools() []json.RawMessage {
	c.t.Helper()
	var out []json.RawMessage
	params := `{}`
	for {
		var resp struct {
			Result struct {
				Tools      []json.RawMessage `json:"tools"`
				NextCursor *string           `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(c.requestRaw("tools/list", params), &resp); err != nil {
			c.t.Fatal(err)
		}
		out = append(out, resp.Result.Tools...)
		if resp.Result.NextCursor == nil {
			return out
		}
		params = `{"cursor":` + strconv.Quote(*resp.Result.NextCursor) + `}`
	}
}

// requestRaw sends a request and returns its response exactly as the server
// wrote it.
func (c *client) requestRaw(method, params string) []byte {
	c.t.Helper()
	id, ch := c.start(method, params)
	c.wait(ch)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw[id]
}
