package extension

import (
	"flag"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
)

var updateHost = flag.Bool("update", false, "rewrite host.mjs from host.ts")

// TestHostGenerated: host.mjs (what the install writes) is host.ts with
// its types stripped (go generate rewrites it).
func TestHostGenerated(t *testing.T) {
	pitest.CheckStripped(t, "host.ts", []byte(hostTS), "host.mjs", []byte(hostJS), "go generate ./stateflow/extension", *updateHost)
}
