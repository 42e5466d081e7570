package streamable

import (
	"testing"

	"github.com/mcprt/mcprt/core"
)

func TestConfigKeysDocumentEveryKey(t *testing.T) {
	keys := ConfigKeys()
	if len(keys) != 16 {
		t.Fatalf("%d keys, want 16", len(keys))
	}
	for _, k := range keys {
		if k.Meaning == "" || k.Env != core.EnvName(k.Path) {
			t.Errorf("key %+v: want a help line and the env name %s", k, core.EnvName(k.Path))
		}
	}
}
