package bridge_test

import (
	"flag"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/piext/bridge"
)

var update = flag.Bool("update", false, "rewrite index.mjs from index.ts")

// TestGenerated: index.mjs is index.ts with its types stripped (go
// generate rewrites it), so what Pi loads is what index.ts says.
func TestGenerated(t *testing.T) {
	pitest.CheckStripped(t, "index.ts", bridge.TypeScript, bridge.Entry, bridge.Source, "go generate ./piext/bridge", *update)
}
