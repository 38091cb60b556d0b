//go:build pitaskbar

package client_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/browsertest"
)

// footerGeometry is where the footer and Run/Stop are, and whether a pointer
// at Run's centre reaches Run (nothing covers it, it is not scrolled away).
type footerGeometry struct {
	Run, Copy, Footer, Panel, Status []float64 // left, top, right, bottom
	Close, Mark                      []float64
	VW, VH                           float64
	RunHit, CloseHit, MarkHit        bool
	StatusLines                      float64
}

func readFooter(t *testing.T, ctx *browsertest.Tab) footerGeometry {
	t.Helper()
	return browsertest.Eval[footerGeometry](t, ctx, browsertest.Shadow(`(() => {
		const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
		const run = root.querySelector("[data-run]");
		const r = run.getBoundingClientRect();
		const hit = (e) => { const b = e.getBoundingClientRect(); return root.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2) === e; };
		const close = root.querySelector("[data-close]"), mark = root.querySelector("[data-mark]");
		return {Run: box(run), Footer: box(root.querySelector('[data-part="footer"]')), Panel: box(root.querySelector("[data-panel]")), Copy: box(root.querySelector("[data-copy]")),
			Status: box(root.querySelector("[data-status-text]")), VW: innerWidth, VH: innerHeight,
			RunHit: root.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === run,
			Close: box(close), Mark: box(mark), CloseHit: hit(close), MarkHit: hit(mark),
			StatusLines: root.querySelector("[data-status-text]").getClientRects().length};
	})()`))
}

func inside(inner, outer []float64) bool {
	return inner[0] >= outer[0]-0.5 && inner[1] >= outer[1]-0.5 && inner[2] <= outer[2]+0.5 && inner[3] <= outer[3]+0.5
}

func sameBox(a, b []float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > 0.5 {
			return false
		}
	}
	return true
}

// TestBrowserClient_FooterPinnedStopStable: with long output, marks and the
// remote warning, the footer stays inside the panel and the viewport, Stop is
// reachable by pointer at one fixed position while output streams, and a
// failed status does not re-wrap the footer (desktop, 320 px, 200 % zoom).
// The head is pinned too: Close and Mark element stay inside the panel and
// the viewport and reachable by pointer however far the body scrolled (the
// 1280×657 case is the user trial where both scrolled away).
func TestBrowserClient_FooterPinnedStopStable(t *testing.T) {
	dir := browsertest.ScreenshotDir(t)
	for _, tc := range []struct {
		name          string
		width, height int64
		scale         float64
	}{
		{"desktop", 1280, 660, 1},
		{"desktop-657", 1280, 657, 1},
		{"narrow-320", 320, 640, 1},
		{"zoom-200", 640, 400, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"app": {RemoteAccess: true}})
			ctx := newBrowser(t, browserOptions{width: tc.width, height: tc.height, scale: tc.scale})
			open(t, ctx, s.url("app"))
			browsertest.ClickShadow(t, ctx, "[data-launcher]")
			browsertest.ClickShadow(t, ctx, "[data-mark]")
			browsertest.ClickPage(t, ctx, `[data-testid="card-2"] h2`)
			waitJS(t, ctx, browsertest.Shadow(`root.querySelectorAll("[data-marks] li").length === 1`))
			browsertest.Key(t, ctx, "Make the cards wider")
			ready := readFooter(t, ctx)

			check := func(step string) footerGeometry {
				t.Helper()
				g := readFooter(t, ctx)
				view := []float64{0, 0, g.VW, g.VH}
				if !inside(g.Panel, view) || !inside(g.Footer, g.Panel) || !inside(g.Run, g.Footer) {
					t.Fatalf("%s: footer %v / Run %v not inside panel %v inside viewport %v", step, g.Footer, g.Run, g.Panel, view)
				}
				if !g.RunHit {
					t.Fatalf("%s: a pointer at Run's centre %v does not reach Run", step, g.Run)
				}
				for _, c := range []struct {
					name string
					box  []float64
					hit  bool
				}{{"Close", g.Close, g.CloseHit}, {"Mark element", g.Mark, g.MarkHit}} {
					if !inside(c.box, g.Panel) || !inside(c.box, view) || !c.hit {
						t.Errorf("%s: %s %v is not reachable inside panel %v and viewport %v (pointer hit %v)", step, c.name, c.box, g.Panel, view, c.hit)
					}
				}
				for _, b := range [][]float64{g.Run, g.Copy} {
					if g.Status[0] < b[2] && b[0] < g.Status[2] && g.Status[1] < b[3] && b[1] < g.Status[3] {
						t.Errorf("%s: the status text %v overlaps a button %v", step, g.Status, b)
					}
				}
				if !inside(g.Status, g.Footer) {
					t.Errorf("%s: the status text %v overflows the footer %v", step, g.Status, g.Footer)
				}
				if g.StatusLines != 1 {
					t.Errorf("%s: the status text spans %v lines", step, g.StatusLines)
				}
				return g
			}
			check("ready")

			running := taskSnap("running", "Pi is working", "first line\n")
			s.api.set(running)
			browsertest.Do(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
			waitJS(t, ctx, browsertest.TextIs("[data-run]", "Stop task"))
			first := check("running, short output")
			if !sameBox(first.Run, ready.Run) {
				t.Errorf("Run moved from %v to %v when the task started", ready.Run, first.Run)
			}
			var out strings.Builder
			for i := 1; i <= 3; i++ {
				for j := 0; j < 40; j++ {
					fmt.Fprintf(&out, "step %d.%d: compiling the cards page and reading templates/cards.html\n", i, j)
				}
				snap := taskSnap("running", fmt.Sprintf("Running bash (%d)", i), out.String())
				snap.Task.OutputTruncated = i == 3
				s.api.set(snap)
				waitJS(t, ctx, browsertest.TextIs("[data-activity]", fmt.Sprintf("Running bash (%d)", i)))
				g := check(fmt.Sprintf("streaming %d", i))
				if !sameBox(g.Run, first.Run) {
					t.Errorf("streaming %d: Stop moved from %v to %v", i, first.Run, g.Run)
				}
			}
			browsertest.Screenshot(t, ctx, dir, "footer-"+tc.name+"-streaming.png")
			// The output area scrolls inside the panel body instead of growing it.
			scroll := browsertest.Eval[[]float64](t, ctx, browsertest.Shadow(`(() => { const o = root.querySelector("[data-output]"); return [o.scrollHeight, o.clientHeight]; })()`))
			if scroll[0] <= scroll[1] {
				t.Errorf("output %v is not a scroll area", scroll)
			}

			// A real pointer click where Stop was before the output arrived stops the task once.
			browsertest.ClickXY(t, ctx, (first.Run[0]+first.Run[2])/2, (first.Run[1]+first.Run[3])/2)
			waitUntil(t, "DELETE", func() bool { return len(s.api.recorded("DELETE", "")) == 1 })
			waitJS(t, ctx, browsertest.TextIs("[data-run]", "Stopping…"))

			failed := taskSnap("failed", "Task failed", out.String())
			s.api.set(failed)
			waitJS(t, ctx, browsertest.TextIs("[data-status-text]", "Finished (failed)"))
			g := check("failed")
			if math.Abs((g.Footer[3]-g.Footer[1])-(first.Footer[3]-first.Footer[1])) > 0.5 {
				t.Errorf("footer height %v when failed, %v when running: it re-wrapped", g.Footer[3]-g.Footer[1], first.Footer[3]-first.Footer[1])
			}
			if !sameBox(g.Run, first.Run) {
				t.Errorf("Run moved from %v to %v after the task failed", first.Run, g.Run)
			}
			browsertest.Screenshot(t, ctx, dir, "footer-"+tc.name+"-failed.png")
			if n := len(s.api.recorded("DELETE", "")); n != 1 {
				t.Errorf("DELETE sent %d times", n)
			}
		})
	}
}
