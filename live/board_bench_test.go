package live

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// fillUnits posts n unit envelopes, 100 per request.
func fillUnits(tb testing.TB, r *rig, n int) {
	tb.Helper()
	for i := 0; i < n; i += 100 {
		var envs []string
		for j := i; j < min(i+100, n); j++ {
			envs = append(envs, r.env("unit", unitPayload(fmt.Sprintf("u%d", j))))
		}
		r.mustPost(envs...)
	}
}

// BenchmarkAckBoardSize measures the p99 acknowledgement latency of one
// /events request (8 telemetry envelopes, one fsync) on a 10-unit board
// and on a 3,000-unit board in the same run, requests interleaved. The
// large board's p99 must stay within 1.5x of the small one's: no request
// copies the board, and board.json is rewritten outside the endpoint lock
// once the logs have grown by its size.
func BenchmarkAckBoardSize(b *testing.B) {
	const perReq = 8
	small, large := newRig(b, nil), newRig(b, nil)
	fillUnits(b, small, 10)
	fillUnits(b, large, 3000)
	c := &http.Client{}
	seqSmall, seqLarge := small.seq, large.seq
	latSmall := make([]time.Duration, 0, b.N)
	latLarge := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		latSmall = append(latSmall, postBody(b, c, small.srv.URL, telemetryBody("sess_1", seqSmall+1, perReq)))
		seqSmall += perReq
		latLarge = append(latLarge, postBody(b, c, large.srv.URL, telemetryBody("sess_1", seqLarge+1, perReq)))
		seqLarge += perReq
	}
	b.StopTimer()
	ps, pl := p99(latSmall), p99(latLarge)
	b.ReportMetric(float64(ps.Microseconds())/1000, "p99-ack-ms-10-units")
	b.ReportMetric(float64(pl.Microseconds())/1000, "p99-ack-ms-3000-units")
	b.ReportMetric(float64(pl)/float64(ps), "p99-ratio-3000/10")
}
