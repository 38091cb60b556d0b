package bridge_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/piext/bridge"
)

var update = flag.Bool("update", false, "rewrite index.mjs from index.ts")

// TestGenerated: index.mjs is index.ts with its types stripped (go
// generate rewrites it), so what Pi loads is what index.ts says.
func TestGenerated(t *testing.T) {
	want := append([]byte(fmt.Sprintf(pitest.GeneratedHeader, "index.ts", "go generate ./piext/bridge")), pitest.StripTypes(t, bridge.TypeScript)...)
	if *update {
		if err := os.WriteFile(bridge.Entry, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(bridge.Source, want) {
		t.Fatalf("%s is not index.ts with its types stripped: run go generate ./piext/bridge", bridge.Entry)
	}
}
