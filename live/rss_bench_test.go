package live

import (
	"net/http"
	"testing"

	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/internal/testproc"
)

// BenchmarkRSS10k runs the endpoint as its own process, posts 10,000
// envelopes (transcripts and clicks, 8 per request) and reports the
// process's resident set size before (the in-run baseline) and after.
func BenchmarkRSS10k(b *testing.B) {
	const total, perReq = 10000, 8
	c := &http.Client{}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		root := b.TempDir()
		line := startServer(b, root, "http://app.test:5173")
		pid := serverPID(b, root)
		post := func(from int64) {
			req, _ := newPageRequest(line.URL, line.PageToken, "sess_1", string(telemetryBody("sess_1", from, perReq)))
			resp, err := c.Do(req)
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("post: %v %v", err, resp)
			}
			resp.Body.Close()
		}
		post(1)
		before := testproc.RSS(b, pid)
		b.StartTimer()
		for seq := int64(perReq + 1); seq <= total; seq += perReq {
			post(seq)
		}
		b.StopTimer()
		after := testproc.RSS(b, pid)
		killAndReap(pid, platform.Terminate)
		b.ReportMetric(before, "rss-before-MB")
		b.ReportMetric(after, "rss-after-10k-MB")
	}
}
