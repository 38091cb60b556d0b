package pirpc_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pikit-dev/pikit/pirpc"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// TestDecoder_Golden pins what the typed decode keeps of Pi's recorded
// stdout: one line per record, "<type>\t<typed value re-encoded as JSON>"
// (responses without their raw data).
// Rewrite with -update after a deliberate change.
func TestDecoder_Golden(t *testing.T) {
	var got bytes.Buffer
	for _, rec := range records(t, pirpc.NewDecoder(bytes.NewReader(recordedStdout(t)))) {
		if r, ok := rec.(*pirpc.Response); ok {
			// Data stays raw (decoded by the typed calls); keeping it here
			// would copy Pi's system prompt text into the repository.
			c := *r
			c.Data = nil
			rec = &c
			fmt.Fprintf(&got, "%s\tdata %d bytes\t", describe(rec), len(r.Data))
		} else {
			fmt.Fprintf(&got, "%s\t", describe(rec))
		}
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&got, "%s\n", b)
	}
	golden := filepath.Join("testdata", "replay", "pi-rpc-observed.golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("decoded records differ from %s (-want +got):\n%s", golden, diff)
	}
}
