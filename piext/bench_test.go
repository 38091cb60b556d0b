package piext_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pikit-dev/pikit/internal/modroot"
)

// BenchmarkBridgeContext times the context hook inside the bridge around
// the handler (Node's hrtime), against a no-op TypeScript context handler
// timed the same way in the same run (the floor), at 10 messages and at a
// 15 MB transcript, Go changing nothing or one message of at most 10 KB.
// Each case reports p50/p95 in ms and the sidecar's RSS. The sidecar is a
// build without -race (the figures are the product's, not the detector's).
// The 15 MB case runs 30 calls per phase (each clones 15 MB first, as Pi
// does); pass a larger count for the p50-over-200 figure on a quiet host.
//
//	go test -run XX -bench BridgeContext -benchtime 1x ./piext/
func BenchmarkBridgeContext(b *testing.B) {
	root, err := modroot.Find(".")
	if err != nil {
		b.Fatal(err)
	}
	exe := filepath.Join(b.TempDir(), "testext")
	if out, err := exec.Command("go", "build", "-o", exe, filepath.Join(root, "piext/internal/testext")).CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	for _, c := range []struct {
		name           string
		n, size, iters int
	}{
		{"10msgs", 10, 200, 300},
		{"15MB", 300, 50 << 10, 30},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				got := harness(b, exe, nil, "bench", itoa(c.n), itoa(c.size), itoa(c.iters))
				var r struct {
					Floor, Unchanged, OneEdit struct{ P50, P95 float64 }
					SidecarRssKiB             float64
				}
				if err := json.Unmarshal(got["BENCH"], &r); err != nil {
					b.Fatalf("%s: %v", got["BENCH"], err)
				}
				b.ReportMetric(r.Floor.P50, "floor-p50-ms")
				b.ReportMetric(r.Floor.P95, "floor-p95-ms")
				b.ReportMetric(r.Unchanged.P50, "unchanged-p50-ms")
				b.ReportMetric(r.Unchanged.P95, "unchanged-p95-ms")
				b.ReportMetric(r.OneEdit.P50, "oneedit-p50-ms")
				b.ReportMetric(r.OneEdit.P95, "oneedit-p95-ms")
				b.ReportMetric(r.Unchanged.P50-r.Floor.P50, "added-p50-ms")
				b.ReportMetric(r.SidecarRssKiB/1024, "sidecar-rss-MB")
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
