package live

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/durable"
)

// releasedBoard fills r's board with n released units (one anchor and
// evidence each): n unit envelopes, one send checkpoint, the wake served
// and acknowledged.
func releasedBoard(tb testing.TB, r *rig, n int) {
	tb.Helper()
	if n == 0 {
		return
	}
	fillUnits(tb, r, n)
	r.mustPost(r.env("checkpoint", checkpointPayload("fill", "send", "smart")))
	if code, w := r.wait(); code != 200 || len(w.Units) != n {
		tb.Fatalf("fill wake: %d", code)
	}
	if code, body := r.ack("fill"); code != 200 {
		tb.Fatalf("fill ack: %d %s", code, body)
	}
}

// wakeRound is one checkpoint-to-wake round on r: a GET /wait parks, a
// unit and a send checkpoint are posted, the wait returns the batch, the
// batch is acknowledged. It returns the /events acknowledgement latency,
// the checkpoint-to-wake latency (from posting until the parked wait has
// the batch) and the ack latency.
func wakeRound(b *testing.B, r *rig, c *http.Client, i int) (post, wake, ack time.Duration) {
	got := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest("GET", r.srv.URL+"/wait", nil)
		req.Header.Set("Authorization", "Bearer agent-tok")
		resp, err := c.Do(req)
		if err != nil {
			got <- err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(body)
	}()
	awaitParked(r)
	cp := fmt.Sprintf("cp%d", i)
	body := "[" + r.env("unit", unitPayload(fmt.Sprintf("w%d", i))) + "," + r.env("checkpoint", checkpointPayload(cp, "send", "smart")) + "]"
	t0 := time.Now()
	post = postBody(b, c, r.srv.URL, []byte(body))
	w := <-got
	wake = time.Since(t0)
	if !strings.Contains(w, `"checkpoint_id":"`+cp+`"`) {
		b.Fatalf("wake: %s", w)
	}
	req, _ := http.NewRequest("POST", r.srv.URL+"/checkpoints/"+cp+"/ack", nil)
	req.Header.Set("Authorization", "Bearer agent-tok")
	t1 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ack = time.Since(t1)
	if resp.StatusCode != 200 {
		b.Fatalf("ack %s: %d", cp, resp.StatusCode)
	}
	return post, wake, ack
}

// awaitParked returns once a GET /wait is parked on r. It polls outside
// any measured window, gently, so that the poll does not contend with the
// handler for the endpoint lock.
func awaitParked(r *rig) {
	for {
		r.e.mu.Lock()
		parked := r.e.agentQueue.parked
		r.e.mu.Unlock()
		if parked {
			return
		}
		time.Sleep(20 * time.Microsecond)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkWakeBoardSize measures checkpoint-to-wake latency (a unit and a
// send checkpoint posted until the parked GET /wait has the batch), the
// /events acknowledgement and the checkpoint ack on an empty board (the
// in-run baseline) and on a board of 2,000 released units, rounds
// interleaved, and the floor of the same round (wakeFloor: a bare long-poll
// whose post is one fsynced journal append), so the endpoint's own share of
// the p99 shows beside what the disk and loopback HTTP take on this
// machine. The p99 must not grow with the board (goal: ≤ 2 ms at any
// size): no request rewrites board.json or copies the board, and a release
// walks the held work only (boardIndex), not every unit.
func BenchmarkWakeBoardSize(b *testing.B) {
	const units = 2000
	opts := func(o *Options) { o.WaitTimeout = time.Minute }
	empty, large := newRig(b, opts), newRig(b, opts)
	releasedBoard(b, large, units)
	c := &http.Client{}
	type lat struct{ post, wake, ack []time.Duration }
	var le, ll lat
	round := func(r *rig, l *lat, i int) {
		p, w, a := wakeRound(b, r, c, i)
		l.post, l.wake, l.ack = append(l.post, p), append(l.wake, w), append(l.ack, a)
	}
	floor := newWakeFloor(b)
	var lf []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		round(empty, &le, i)
		round(large, &ll, i)
		lf = append(lf, floor.round(b, c, i))
	}
	b.StopTimer()
	med := func(ds []time.Duration) time.Duration { slices.Sort(ds); return ds[len(ds)/2] }
	b.ReportMetric(ms(med(le.wake)), "p50-wake-ms-empty")
	b.ReportMetric(ms(med(ll.wake)), "p50-wake-ms-2000")
	b.ReportMetric(ms(p99(le.wake)), "p99-wake-ms-empty")
	b.ReportMetric(ms(p99(ll.wake)), "p99-wake-ms-2000")
	b.ReportMetric(ms(p99(le.post)), "p99-events-ms-empty")
	b.ReportMetric(ms(p99(ll.post)), "p99-events-ms-2000")
	b.ReportMetric(ms(p99(le.ack)), "p99-ack-ms-empty")
	b.ReportMetric(ms(p99(ll.ack)), "p99-ack-ms-2000")
	b.ReportMetric(float64(p99(ll.wake))/float64(p99(le.wake)), "p99-wake-ratio-2000/empty")
	b.ReportMetric(ms(med(lf)), "p50-floor-ms")
	b.ReportMetric(ms(p99(lf)), "p99-floor-ms")
	b.ReportMetric(float64(p99(ll.wake))/float64(p99(lf)), "p99-wake-ratio-2000/floor")
}

// wakeFloor is the in-run floor of a checkpoint-to-wake round: a bare
// long-poll server whose POST appends the same envelope bytes to an
// internal/durable journal (one write, one fsync, as the endpoint's
// event log) and then wakes the parked GET. What a wake costs above it is
// the endpoint's own work.
type wakeFloor struct {
	srv    *httptest.Server
	parked chan chan struct{}
}

func newWakeFloor(b *testing.B) *wakeFloor {
	j, _, err := durable.OpenJournal(filepath.Join(b.TempDir(), "floor.ndjson"), nil)
	if err != nil {
		b.Fatal(err)
	}
	f := &wakeFloor{parked: make(chan chan struct{}, 1)}
	var waiting chan struct{}
	var mu sync.Mutex
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == "GET" {
			ch := make(chan struct{})
			mu.Lock()
			waiting = ch
			mu.Unlock()
			f.parked <- ch
			<-ch
			io.WriteString(w, `{"checkpoint_id":"floor"}`)
			return
		}
		body, _ := io.ReadAll(req.Body)
		var envs []json.RawMessage
		if err := json.Unmarshal(body, &envs); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		lines := make([][]byte, len(envs))
		for i, e := range envs {
			lines[i] = e
		}
		if err := j.Append(lines...); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		mu.Lock()
		close(waiting)
		mu.Unlock()
		io.WriteString(w, `{"acked_seq":1}`)
	}))
	b.Cleanup(func() { f.srv.Close(); j.Close() })
	return f
}

// round parks a GET, posts the same two envelopes as wakeRound and
// returns the time from the post until the parked GET has its answer.
func (f *wakeFloor) round(b *testing.B, c *http.Client, i int) time.Duration {
	got := make(chan struct{})
	go func() {
		defer close(got)
		resp, err := c.Get(f.srv.URL + "/wait")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	<-f.parked
	body := fmt.Sprintf(`[{"type":"unit","id":"w%d","payload":{"note":"floor"}},{"type":"checkpoint","id":"cp%d"}]`, i, i)
	t0 := time.Now()
	resp, err := c.Post(f.srv.URL+"/events", "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	<-got
	return time.Since(t0)
}
