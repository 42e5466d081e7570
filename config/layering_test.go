package config

import (
	"go/build"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcprt/mcprt/"

// libraryImports lists, for each library package, the module packages it
// may import (not its tests). Everything else of the module — config,
// tools/*, aacp, store, sharedstate, console, fixtures, natsengine,
// domain, ... — is the product wing, which the library never imports.
var libraryImports = map[string][]string{
	"jsonrpc":              {"internal/idle", "internal/jsontext"},
	"core":                 {"internal/jsontext"},
	"mcp":                  {"core", "jsonrpc", "internal/jsontext"},
	"transport/streamable": {"core", "jsonrpc", "mcp", "internal/idle", "internal/jsontext", "internal/setting"},
	"internal/jsontext":    nil,
	"internal/idle":        nil,
	"internal/setting":     nil,
}

// TestLibraryImportsNoProduct fails when a library package (jsonrpc,
// core, mcp, the transports) imports a module package outside its
// allowed list, or when a package is added under transport/ without an
// entry here.
func TestLibraryImportsNoProduct(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	transports, err := filepath.Glob(filepath.Join(root, "transport", "*"))
	if err != nil || len(transports) == 0 {
		t.Fatalf("no transports under %s: %v", root, err)
	}
	for _, dir := range transports {
		rel := "transport/" + filepath.Base(dir)
		if _, ok := libraryImports[rel]; !ok {
			t.Errorf("%s: a transport without an entry in libraryImports: list what it may import", rel)
		}
	}
	for pkg, allowed := range libraryImports {
		p, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(pkg)), 0)
		if err != nil {
			t.Errorf("%s: %v", pkg, err)
			continue
		}
		for _, imp := range p.Imports {
			rel, ok := strings.CutPrefix(imp, module)
			if !ok || slices.Contains(allowed, rel) {
				continue
			}
			if _, lib := libraryImports[rel]; lib {
				t.Errorf("%s imports %s: a library edge not in its allowed list (%v); add it here if it is meant", pkg, rel, allowed)
			} else {
				t.Errorf("%s imports %s, a product package: the library must not depend on the product", pkg, rel)
			}
		}
	}
}
