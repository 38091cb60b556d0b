package extension

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
)

var updateHost = flag.Bool("update", false, "rewrite host.mjs from host.ts")

// TestHostGenerated: host.mjs (what the install writes) is host.ts with
// its types stripped (go generate rewrites it).
func TestHostGenerated(t *testing.T) {
	want := append([]byte(fmt.Sprintf(pitest.GeneratedHeader, "host.ts", "go generate ./stateflow/extension")), pitest.StripTypes(t, []byte(hostTS))...)
	if *updateHost {
		if err := os.WriteFile("host.mjs", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal([]byte(hostJS), want) {
		t.Fatal("host.mjs is not host.ts with its types stripped: run go generate ./stateflow/extension")
	}
}
