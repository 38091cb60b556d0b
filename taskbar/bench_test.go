package taskbar_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/taskbar"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

const pollers = 20 // browser tabs polling GET /state

func benchClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * pollers, MaxIdleConns: 4 * pollers}}
}

// hammer sends n GET requests to url from pollers goroutines and returns
// the sorted latencies and the wall time.
func hammer(b *testing.B, c *http.Client, url string, n int) ([]time.Duration, time.Duration) {
	return hammerPaced(b, c, url, n, 0)
}

// hammerPaced is hammer where each poller sends at most one request per
// pace (zero: back to back, a saturation test).
func hammerPaced(b *testing.B, c *http.Client, url string, n int, pace time.Duration) ([]time.Duration, time.Duration) {
	b.Helper()
	lat := make([][]time.Duration, pollers)
	var wg sync.WaitGroup
	start := time.Now()
	for g := range pollers {
		wg.Go(func() {
			next := time.Now().Add(time.Duration(g) * pace / pollers) // spread the pollers
			for i := g; i < n; i += pollers {
				if pace > 0 {
					time.Sleep(time.Until(next))
					next = next.Add(pace)
				}
				t0 := time.Now()
				res, err := c.Get(url)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Errorf("status %d", res.StatusCode)
					return
				}
				lat[g] = append(lat[g], time.Since(t0))
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	return all, wall
}

func pct(s []time.Duration, p float64) float64 {
	if len(s) == 0 {
		return 0
	}
	return float64(s[min(len(s)-1, int(float64(len(s))*p))].Microseconds())
}

// BenchmarkGetState compares GET /state through the handler and the
// project broker with a bare net/http handler returning the same bytes,
// all with 20 concurrent pollers over loopback HTTP in the same run, in
// alternating rounds so machine load hits every path alike. "broker" is
// the production path (the client answers from its watch-fed snapshot
// cache); "broker-rt" disables the cache so every read is a Unix socket
// round trip to the broker. Each op is one request on each path.
func BenchmarkGetState(b *testing.B) {
	benchGetState(b, 0)
}

// BenchmarkGetStatePaced is BenchmarkGetState with each of the 20 pollers
// sending one request every 10 ms (2,000 req/s in all, 50 times what 20
// tabs polling every 500 ms send): latency under load, not saturation.
func BenchmarkGetStatePaced(b *testing.B) {
	benchGetState(b, 10*time.Millisecond)
}

func benchGetState(b *testing.B, pace time.Duration) {
	newClient := brokerProject(b)
	cached, direct := newClient(), newClient(noWatch)
	paths := []struct {
		name string
		url  string
	}{{name: "bare"}, {name: "broker"}, {name: "broker-rt"}}
	var snap []byte
	for i, o := range []taskbar.Owner{cached, direct} {
		h := taskbar.NewHandler(o, nil)
		srv := httptest.NewServer(h)
		defer srv.Close()
		poll(b, h, "ready", isReady)
		paths[i+1].url = srv.URL + taskbar.DefaultMountBase + "/state"
	}
	snap, err := direct.State(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "application/json")
		w.Write(snap)
	}))
	defer bare.Close()
	paths[0].url = bare.URL
	c := benchClient()
	for _, p := range paths { // warm connections and pools
		hammer(b, c, p.url, 200)
	}
	n := max(b.N, pollers)
	const rounds = 10
	lat := make([][]time.Duration, len(paths))
	wall := make([]time.Duration, len(paths))
	b.ResetTimer()
	for range rounds {
		for i, p := range paths {
			l, w := hammerPaced(b, c, p.url, max(n/rounds, pollers), pace)
			lat[i] = append(lat[i], l...)
			wall[i] += w
		}
	}
	b.StopTimer()
	for i, p := range paths {
		slices.Sort(lat[i])
		b.ReportMetric(pct(lat[i], 0.50), p.name+"-p50-µs")
		b.ReportMetric(pct(lat[i], 0.99), p.name+"-p99-µs")
		b.ReportMetric(float64(len(lat[i]))/wall[i].Seconds(), p.name+"-req/s")
	}
	for i := 1; i < len(paths); i++ {
		b.ReportMetric(pct(lat[i], 0.50)/max(pct(lat[0], 0.50), 1), paths[i].name+"-p50-ratio")
		b.ReportMetric(pct(lat[i], 0.99)/max(pct(lat[0], 0.99), 1), paths[i].name+"-p99-ratio")
	}
}

// BenchmarkTaskAdmission measures POST /tasks until the 202 (contract
// parsing, CSRF, the broker hop and atomic admission), against a bare
// handler that decodes the same body with encoding/json and answers 202
// with the same snapshot bytes. Waiting for the task to finish is not
// timed.
func BenchmarkTaskAdmission(b *testing.B) {
	for _, mode := range []string{"in-process", "broker"} {
		b.Run(mode, func(b *testing.B) {
			var o taskbar.Owner
			if mode == "broker" {
				o = brokerProject(b)()
			} else {
				o, _ = inProcessOwner(b, rt.Options{})
			}
			h := taskbar.NewHandler(o, nil)
			poll(b, h, "ready", isReady)
			body := taskBody(b, "Explain the cards page.")
			var sample []byte
			bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var v map[string]any
				if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
					http.Error(w, "bad", 400)
					return
				}
				w.Header().Set("Cache-Control", "no-store")
				w.WriteHeader(http.StatusAccepted)
				w.Write(sample)
			})
			var bareT, tbT time.Duration
			for b.Loop() {
				t0 := time.Now()
				res := do(h, request("POST", taskbar.DefaultMountBase+"/tasks", body))
				tbT += time.Since(t0)
				if res.status != http.StatusAccepted {
					b.Fatalf("POST = %d %s", res.status, res.body)
				}
				sample = res.body
				t0 = time.Now()
				do(bare, request("POST", "/", body))
				bareT += time.Since(t0)
				id := decodeView(b, res.body).Task.ID
				poll(b, h, "settled", func(s rt.Snapshot) bool {
					return s.Task != nil && s.Task.ID == id && s.Task.Status.Terminal() && s.Session.Status == rt.SessionReady
				})
			}
			b.ReportMetric(float64(tbT.Microseconds())/float64(b.N), "admit-µs")
			b.ReportMetric(float64(bareT.Microseconds())/float64(b.N), "bare-µs")
			b.ReportMetric(float64(tbT)/float64(bareT), "ratio")
		})
	}
}
