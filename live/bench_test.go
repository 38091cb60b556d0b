package live

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// bareHandler is the in-run baseline: the same request shape decoded with
// plain encoding/json and acknowledged, with no validation, board or disk.
func bareHandler() http.Handler {
	var mu sync.Mutex
	var acked int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var envs []struct {
			Seq int64 `json:"seq"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := stdjson.Unmarshal(body, &envs); err != nil {
			http.Error(w, "bad", 400)
			return
		}
		mu.Lock()
		for _, e := range envs {
			acked = max(acked, e.Seq)
		}
		a := acked
		mu.Unlock()
		fmt.Fprintf(w, `{"acked_seq":%d}`+"\n", a)
	})
}

// telemetryBody is a riffrec-like batch: transcript and click envelopes.
func telemetryBody(sid string, from int64, n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		seq := from + int64(i)
		typ, p := "transcript", fmt.Sprintf(`{"id":"tr_%d","role":"riffer","text":"make the header a little darker please","t_start":%d,"t_end":%d,"final":true}`, seq, seq, seq+1)
		if seq%2 == 0 {
			typ, p = "click", fixturePayloads["click"]
		}
		fmt.Fprintf(&b, `{"schema_version":"live/1","session_id":%q,"seq":%d,"t":%d,"type":%q,"payload":%s}`, sid, seq, seq, typ, p)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func postBody(b *testing.B, c *http.Client, url string, body []byte) time.Duration {
	req, _ := http.NewRequest("POST", url+"/events", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer page-tok")
	req.Header.Set("X-Riffrec-Session", "sess_1")
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
	return d
}

func p99(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)*99/100]
}

// BenchmarkEvents measures sustained envelopes/s through HTTP with
// durability on (one fsync per request of 8 envelopes) and the p99
// acknowledgement latency, against the bare handler in the same run.
func BenchmarkEvents(b *testing.B) {
	const perReq = 8
	r := newRig(b, nil)
	bare := httptest.NewServer(bareHandler())
	defer bare.Close()
	c := &http.Client{}
	run := func(url string) (time.Duration, []time.Duration) {
		lat := make([]time.Duration, 0, b.N)
		t0 := time.Now()
		for i := 0; i < b.N; i++ {
			lat = append(lat, postBody(b, c, url, telemetryBody("sess_1", int64(i*perReq+1), perReq)))
		}
		return time.Since(t0), lat
	}
	b.ResetTimer()
	durTotal, durLat := run(r.srv.URL)
	b.StopTimer()
	bareTotal, bareLat := run(bare.URL)
	envs := float64(b.N * perReq)
	b.ReportMetric(envs/durTotal.Seconds(), "envelopes/s")
	b.ReportMetric(float64(p99(durLat).Microseconds())/1000, "p99-ack-ms")
	b.ReportMetric(envs/bareTotal.Seconds(), "baseline-envelopes/s")
	b.ReportMetric(float64(p99(bareLat).Microseconds())/1000, "baseline-p99-ms")
	b.ReportMetric(durTotal.Seconds()/bareTotal.Seconds(), "slowdown-x")
}

// BenchmarkWake measures checkpoint-to-wait latency: from posting a unit
// and a send checkpoint until the parked GET /wait returns the batch. The
// baseline is a bare long-poll handler woken by a channel.
func BenchmarkWake(b *testing.B) {
	r := newRig(b, func(o *Options) { o.WaitTimeout = time.Minute })
	c := &http.Client{}
	lat := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		_, wake, _ := wakeRound(b, r, c, i)
		lat = append(lat, wake)
	}
	b.StopTimer()
	// Baseline: the same two requests against a bare long-poll.
	parked := make(chan chan struct{})
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == "GET" {
			ch := make(chan struct{})
			parked <- ch
			<-ch
			io.WriteString(w, "{}")
			return
		}
		io.Copy(io.Discard, req.Body)
		io.WriteString(w, `{"acked_seq":1}`)
	}))
	defer bare.Close()
	blat := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		got := make(chan struct{})
		go func() {
			resp, err := c.Get(bare.URL + "/wait")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			close(got)
		}()
		ch := <-parked
		t0 := time.Now()
		postBody(b, c, bare.URL, []byte(`[]`))
		close(ch)
		<-got
		blat = append(blat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-wake-ms")
	b.ReportMetric(float64(p99(lat).Microseconds())/1000, "p99-wake-ms")
	b.ReportMetric(float64(p99(blat).Microseconds())/1000, "baseline-p99-ms")
}

// BenchmarkAgentOps measures one agent unit-status post (the agent's most
// frequent write) on boards of growing size, against the bare handler in
// the same run. Its cost must not grow with the board.
func BenchmarkAgentOps(b *testing.B) {
	for _, units := range []int{10, 1000} {
		b.Run(fmt.Sprintf("units=%d", units), func(b *testing.B) {
			r := newRig(b, nil)
			for i := 0; i < units; i += 100 {
				var envs []string
				for j := i; j < min(i+100, units); j++ {
					envs = append(envs, r.env("unit", unitPayload(fmt.Sprintf("u%d", j))))
				}
				r.mustPost(envs...)
			}
			bare := httptest.NewServer(bareHandler())
			defer bare.Close()
			c := &http.Client{}
			post := func(url string, i int) {
				req, _ := http.NewRequest("POST", url, strings.NewReader(`{"status":"working","note":"step `+fmt.Sprint(i)+`"}`))
				req.Header.Set("Authorization", "Bearer agent-tok")
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 && url != bare.URL {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			b.ResetTimer()
			t0 := time.Now()
			for i := 0; i < b.N; i++ {
				post(fmt.Sprintf("%s/units/u%d/status", r.srv.URL, i%units), i)
			}
			d := time.Since(t0)
			b.StopTimer()
			t1 := time.Now()
			for i := 0; i < b.N; i++ {
				post(bare.URL, i)
			}
			bd := time.Since(t1)
			b.ReportMetric(float64(d.Microseconds())/float64(b.N)/1000, "ms/op-post")
			b.ReportMetric(float64(bd.Microseconds())/float64(b.N)/1000, "baseline-ms/op")
			b.ReportMetric(d.Seconds()/bd.Seconds(), "slowdown-x")
		})
	}
}
