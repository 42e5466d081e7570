package jsonrpc

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStandardLibraryOnly keeps the package doc's promise: everything
// jsonrpc and core depend on, transitively and outside their tests, is the
// standard library or one of the module's internal helper packages that
// the docs name (jsontext, idle).
func TestStandardLibraryOnly(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	allowed := map[string]bool{
		"github.com/mcprt/mcprt/jsonrpc":           true,
		"github.com/mcprt/mcprt/core":              true,
		"github.com/mcprt/mcprt/internal/jsontext": true,
		"github.com/mcprt/mcprt/internal/idle":     true,
	}
	for _, pkg := range []string{"github.com/mcprt/mcprt/jsonrpc", "github.com/mcprt/mcprt/core"} {
		out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if !allowed[dep] {
				t.Errorf("%s depends on %s, which is neither the standard library nor a helper its doc names", pkg, dep)
			}
		}
	}
}
