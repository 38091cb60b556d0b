package live

import (
	"fmt"
	"runtime"
	"testing"
)

// TestWake_CostFlatInBoardSize: what a wake round costs (a unit and a send
// checkpoint posted, the batch served by GET /wait and acknowledged) does
// not grow with the board. Measured in bytes allocated per round, which,
// unlike latency, a busy machine does not blur: on a board of 2,000
// released units (one anchor and evidence each) a round allocates less
// than 1.5 times what it allocates on an empty board. A transaction's
// rollback point, a board.json rewrite per round or any walk that copies
// the board would each cost hundreds of kilobytes a round here.
func TestWake_CostFlatInBoardSize(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a 2,000-unit board")
	}
	perRound := func(units int) float64 {
		r := newRig(t, nil)
		releasedBoard(t, r, units)
		round := func(i int) {
			cp := fmt.Sprintf("cp%d", i)
			r.mustPost(r.env("unit", unitPayload(fmt.Sprintf("w%d", i))), r.env("checkpoint", checkpointPayload(cp, "send", "smart")))
			if code, w := r.wait(); code != 200 || w.CheckpointID != cp {
				t.Fatalf("wait: %d %+v", code, w)
			}
			if code, body := r.ack(cp); code != 200 {
				t.Fatalf("ack: %d %s", code, body)
			}
		}
		for i := range 20 { // warm up connections and buffers
			round(i)
		}
		const rounds = 200
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for i := 20; i < 20+rounds; i++ {
			round(i)
		}
		runtime.ReadMemStats(&m1)
		r.close()
		return float64(m1.TotalAlloc-m0.TotalAlloc) / rounds
	}
	empty, large := perRound(0), perRound(2000)
	t.Logf("bytes allocated per wake round: empty board %.0f, 2,000 units %.0f (%.2fx)", empty, large, large/empty)
	if large > 1.5*empty {
		t.Fatalf("a wake round on a 2,000-unit board allocates %.0f bytes, %.2fx the empty board's %.0f", large, large/empty, empty)
	}
}
