package workbench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/browsertest"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/workbench"
)

const waitUI = 30 * time.Second

// axeAll runs axe-core on the whole page (WCAG 2.0–2.2 A/AA and best
// practices) and fails the test on any violation.
func axeAll(t *testing.T, ctx *browsertest.Tab, src, state string) {
	t.Helper()
	r := browsertest.AxeRun(t, ctx, src, "document")
	if len(r.Passes) < 10 {
		t.Fatalf("%s: axe passed only %d rules", state, len(r.Passes))
	}
	if msgs := r.Messages(); len(msgs) > 0 {
		t.Errorf("%s: %d axe violations:\n%s", state, len(msgs), strings.Join(msgs, "\n"))
	}
}

func text(t *testing.T, ctx *browsertest.Tab, id string) string {
	t.Helper()
	return browsertest.Eval[string](t, ctx, `document.getElementById(`+browsertest.JSString(id)+`).textContent`)
}

func openPage(t *testing.T, view string) (*bench, *browsertest.Tab) {
	t.Helper()
	b := openBench(t, view, nil)
	ctx := browsertest.New(t, nil)
	browsertest.Navigate(t, ctx, b.url)
	browsertest.Wait(t, ctx, "page ready", `document.body.dataset.ready === "true" && document.body.dataset.live === "open"`, waitUI)
	if loc := browsertest.Eval[string](t, ctx, `location.search`); loc != "?view="+view {
		t.Fatalf("k left in the URL: %q", loc)
	}
	return b, ctx
}

func click(t *testing.T, ctx *browsertest.Tab, sel string) {
	t.Helper()
	browsertest.ClickAt(t, ctx, `document.querySelector(`+browsertest.JSString(sel)+`)`)
}

// Selection in chromium: protected atoms can't be selected, a selection is
// saved through the API (the exact existing range keeps its id), and the
// page's close ends the workbench and releases the lock.
func TestBrowser_Selection(t *testing.T) {
	src := browsertest.AxeSource(t)
	b, ctx := openPage(t, workbench.ViewSelection)
	if got := browsertest.Eval[string](t, ctx, `document.getElementById("sel-a0005").closest("li").nextElementSibling.textContent`); !strings.HasPrefix(got, "🔒 can't compress · a0006") ||
		browsertest.Eval[bool](t, ctx, `document.getElementById("sel-a0006") !== null`) {
		t.Errorf("protected atom row %q", got)
	}
	if band := text(t, ctx, "band"); !strings.Contains(band, "Projection (est.): now 160k / 200k") || !strings.Contains(band, "future summaries are not included") {
		t.Errorf("band %q", band)
	}
	axeAll(t, ctx, src, "selection")
	click(t, ctx, "#sel-a0007")
	browsertest.Key(t, ctx, " ") // keyboard toggles too: a0007 off again
	browsertest.Key(t, ctx, "G") // G selects the focused atom's group: a0007, a0008
	if got := browsertest.Eval[string](t, ctx, `document.querySelector('[data-group="g0003"]').previousElementSibling.textContent`); got != "g0003 · more work" {
		t.Errorf("group header %q", got)
	}
	if got := text(t, ctx, "strip"); !strings.HasPrefix(got, "Selected 4/9 atoms") {
		t.Errorf("strip %q", got)
	}
	click(t, ctx, "#save-selection")
	browsertest.Wait(t, ctx, "saved", `document.getElementById("selection-status").textContent.startsWith("Plan saved")`, waitUI)
	// A reload replaces the liveness stream within the grace: the
	// workbench stays open and the page shows the saved plan.
	browsertest.Reload(t, ctx)
	browsertest.Wait(t, ctx, "reloaded", `document.body.dataset.ready === "true" && document.body.dataset.live === "open" && document.getElementById("sel-a0008").checked`, waitUI)
	time.Sleep(2 * workbench.DefaultReconnectGrace)
	if !b.m.Registered() {
		t.Fatal("a reload closed the workbench")
	}
	d, saves, _, _ := b.plan.snapshot()
	if saves != 1 || len(d.Ranges) != 2 || d.Ranges[0].ID != "d1" || d.Ranges[1].StartRef != "a0007" || d.Ranges[1].EndRef != "a0008" {
		t.Errorf("plan after save: %+v", d.Ranges)
	}
	click(t, ctx, "#close")
	browsertest.Wait(t, ctx, "closed banner", `!document.getElementById("banner").hidden`, waitUI)
	waitClosed(t, b)
	if _, _, notices, released := b.plan.snapshot(); released != 1 || strings.Join(notices, "|") != "info: Selection closed. The plan is saved; tell the Agent to continue when ready." {
		t.Errorf("released %d notices %q", released, notices)
	}
	axeAll(t, ctx, src, "selection closed")
}

// Review in chromium: pick a range, edit its summary and topic, save,
// read an atom's original text in the drawer, remove the range (two
// clicks), close. There is no commit control.
func TestBrowser_Review(t *testing.T) {
	src := browsertest.AxeSource(t)
	b, ctx := openPage(t, workbench.ViewReview)
	if band := text(t, ctx, "band"); !strings.Contains(band, "(est. ±") || !strings.Contains(band, "now 160k / 200k → after commit ≈") {
		t.Errorf("band %q", band)
	}
	if n := browsertest.Eval[int](t, ctx, `[...document.querySelectorAll("button")].filter((b) => /commit/i.test(b.textContent)).length`); n != 0 {
		t.Errorf("%d commit buttons", n)
	}
	axeAll(t, ctx, src, "review")
	click(t, ctx, `[data-range="d1"]`)
	band0 := text(t, ctx, "band")
	click(t, ctx, "#summary")
	browsertest.Key(t, ctx, "Phase one: requirement explored.")
	click(t, ctx, "#topic")
	browsertest.Do(t, ctx, `document.getElementById("topic").select()`)
	browsertest.Key(t, ctx, "requirements")
	band1 := text(t, ctx, "band")
	click(t, ctx, "#save")
	browsertest.Wait(t, ctx, "saved", `document.getElementById("editor-status").textContent.startsWith("Saved d1")`, waitUI)
	// The band follows unsaved edits live and agrees with the server's
	// replacement char classes once saved.
	if band2 := text(t, ctx, "band"); band1 == band0 || band2 != band1 {
		t.Errorf("band before %q, typing %q, saved %q", band0, band1, band2)
	}
	d, saves, _, _ := b.plan.snapshot()
	if saves != 2 || d.Ranges[0].Summary != "Phase one: requirement explored." || d.Ranges[0].Topic != "requirements" {
		t.Errorf("after save: saves %d %+v", saves, d.Ranges[0])
	}
	click(t, ctx, "#projected")
	browsertest.Wait(t, ctx, "projected card", `(document.querySelector('[data-card="d1"]') || {}).textContent?.includes("Phase one: requirement explored.")`, waitUI)
	axeAll(t, ctx, src, "projected")
	browsertest.Do(t, ctx, `const s = document.getElementById("policy"); s.value = "kept"; s.dispatchEvent(new Event("change"))`)
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll("#timeline li").length`); n != 7 || browsertest.Eval[bool](t, ctx, `document.querySelector("[data-card]") !== null`) {
		t.Errorf("kept policy: %d rows", n)
	}
	browsertest.Do(t, ctx, `const s = document.getElementById("policy"); s.value = "all"; s.dispatchEvent(new Event("change"))`)
	click(t, ctx, "#projected")
	click(t, ctx, `[data-original="a0002"]`)
	browsertest.Wait(t, ctx, "drawer", `document.getElementById("drawer").open && document.getElementById("drawer-text").textContent.includes("</script><b>&</b>")`, waitUI)
	axeAll(t, ctx, src, "drawer open")
	click(t, ctx, "#drawer-close")
	click(t, ctx, "#remove")
	if got := text(t, ctx, "remove"); got != "Confirm remove d1" {
		t.Errorf("remove arm %q", got)
	}
	click(t, ctx, "#remove")
	browsertest.Wait(t, ctx, "removed", `document.getElementById("editor-status").textContent.startsWith("Removed d1")`, waitUI)
	if d, _, _, _ := b.plan.snapshot(); len(d.Ranges) != 0 {
		t.Errorf("ranges after remove: %+v", d.Ranges)
	}
	axeAll(t, ctx, src, "empty plan")
	click(t, ctx, "#close")
	waitClosed(t, b)
	browsertest.Wait(t, ctx, "closed banner", `!document.getElementById("banner").hidden`, waitUI)
	if _, _, notices, _ := b.plan.snapshot(); strings.Join(notices, "|") != "info: Midcompact review-webui closed." {
		t.Errorf("notices %q", notices)
	}
}

// close-webui racing an in-flight edit: the edit is inside the Plan when
// CloseAll revokes access; it is cancelled, the plan is unchanged, the
// lock is released once, and the page turns read-only.
func TestBrowser_CloseRacesEdit(t *testing.T) {
	b, ctx := openPage(t, workbench.ViewReview)
	hold, entered := make(chan struct{}), make(chan struct{}, 1)
	b.plan.mu.Lock()
	b.plan.hold, b.plan.entered = hold, entered
	b.plan.mu.Unlock()
	defer close(hold)
	click(t, ctx, `[data-range="d1"]`)
	click(t, ctx, "#summary")
	browsertest.Key(t, ctx, "never saved")
	click(t, ctx, "#save")
	select {
	case <-entered:
	case <-time.After(waitUI):
		t.Fatal("edit never reached the plan")
	}
	if err := b.m.CloseAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if b.m.Registered() {
		t.Error("registered after CloseAll")
	}
	d, saves, notices, released := b.plan.snapshot()
	if saves != 0 || d.Ranges[0].Summary != "" || released != 1 || len(notices) != 0 {
		t.Errorf("saves %d summary %q released %d notices %q", saves, d.Ranges[0].Summary, released, notices)
	}
	browsertest.Wait(t, ctx, "read-only page", `!document.getElementById("banner").hidden && document.getElementById("summary").disabled`, waitUI)
	if got := text(t, ctx, "editor-status"); !strings.HasPrefix(got, "Not saved") {
		t.Errorf("editor status %q", got)
	}
}

// craftedPlan serves crafted char mixes for the projection band: the first
// atom holds removed ASCII chars and images (the others none), the first
// range a replacement of added ASCII chars.
type craftedPlan struct {
	*testPlan
	removed, images, added int
}

func (p craftedPlan) State(ctx context.Context, view string) (*midcompact.ReviewState, error) {
	st, err := p.testPlan.State(ctx, view)
	if err != nil {
		return nil, err
	}
	for i := range st.Atoms {
		st.Atoms[i].NarrowChars, st.Atoms[i].WideChars, st.Atoms[i].ImageCount = 0, 0, 0
	}
	st.Atoms[0].NarrowChars, st.Atoms[0].ImageCount = p.removed, p.images
	st.Draft.Ranges[0].ReplacementNarrowChars, st.Draft.Ranges[0].ReplacementWideChars = p.added, 0
	return st, nil
}

// openCrafted opens a review workbench over p in chromium.
func openCrafted(t *testing.T, p craftedPlan) (*workbench.Manager, *browsertest.Tab) {
	t.Helper()
	m := workbench.NewManager(&workbench.Options{FirstStream: time.Minute})
	t.Cleanup(func() { _ = m.CloseAll(context.Background()) })
	notice, err := m.Open(t.Context(), workbench.ViewReview, p)
	if err != nil {
		t.Fatal(err)
	}
	u := noticeRE.FindStringSubmatch(notice)
	ctx := browsertest.New(t, nil)
	browsertest.Navigate(t, ctx, u[2]+"/?view=review&k="+u[4])
	browsertest.Wait(t, ctx, "page ready", `document.body.dataset.ready === "true"`, waitUI)
	return m, ctx
}

// The projection band (display only, labelled est.) reproduces the
// reference's worked example: now 160,000 / 200,000; removed 32,011 ASCII
// chars + 2 images; added a 2,000-char ASCII wrapper: ≈149.9k tok.
func TestBrowser_ProjectionBand(t *testing.T) {
	m, ctx := openCrafted(t, craftedPlan{newTestPlan(t), 32011, 2, 2000})
	const want = "Projection (est.): now 160k / 200k → after commit ≈149.9k tok · 74.9% −12.4k … −7.8k tok (est. ±2%)"
	if got := text(t, ctx, "band"); got != want {
		t.Errorf("band\n got %q\nwant %q", got, want)
	}
	// Closing with a pending range asks first; "Fix pending" keeps it open.
	click(t, ctx, "#close")
	browsertest.Wait(t, ctx, "close dialog", `document.getElementById("close-dialog").open`, waitUI)
	if got := text(t, ctx, "close-pending"); got != "Pending summaries: d1. Commit will refuse them." {
		t.Errorf("close dialog %q", got)
	}
	src := browsertest.AxeSource(t)
	axeAll(t, ctx, src, "close dialog")
	click(t, ctx, "#close-cancel")
	if browsertest.Eval[bool](t, ctx, `document.getElementById("close-dialog").open`) || !m.Registered() {
		t.Error("Fix pending closed the workbench")
	}
}

// A summary longer than its original makes the context grow: the band
// shows the change as a plus (removed 100 ASCII chars → 22/26/30 tok, added
// 2,000 → 440/520/600 tok: 410 to 578 tok more), never "−-410".
func TestBrowser_ProjectionBandGrowth(t *testing.T) {
	_, ctx := openCrafted(t, craftedPlan{newTestPlan(t), 100, 0, 2000})
	const want = "Projection (est.): now 160k / 200k → after commit ≈160.5k tok · 80.2% +410 … +578 tok (est. ±0%)"
	if got := text(t, ctx, "band"); got != want {
		t.Errorf("band\n got %q\nwant %q", got, want)
	}
}

// The printed URL reopens the page in another browser (a fresh profile, no
// cookie) while the first page is open, and both stay usable.
func TestBrowser_ReopenInAnotherBrowser(t *testing.T) {
	b, first := openPage(t, workbench.ViewReview)
	second := browsertest.New(t, nil)
	browsertest.Navigate(t, second, b.url)
	browsertest.Wait(t, second, "second page ready", `document.body.dataset.ready === "true" && document.body.dataset.live === "open"`, waitUI)
	if loc := browsertest.Eval[string](t, second, `location.search`); loc != "?view=review" {
		t.Errorf("second browser: k left in the URL: %q", loc)
	}
	if browsertest.Eval[bool](t, second, `!!document.getElementById("banner").hidden`) != true {
		t.Error("second browser shows the closed banner")
	}
	click(t, second, `[data-range="d1"]`)
	click(t, second, "#summary")
	browsertest.Key(t, second, "from the second browser")
	click(t, second, "#save")
	waitSummary := func() bool {
		d, _, _, _ := b.plan.snapshot()
		return d.Ranges[0].Summary == "from the second browser"
	}
	for deadline := time.Now().Add(waitUI); !waitSummary(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second browser's edit never saved")
		}
	}
	if v := browsertest.Eval[string](t, first, `fetch("/api/state").then(r => r.json()).then(s => s.draft.ranges[0].summary)`); v != "from the second browser" {
		t.Errorf("first browser reads %q", v)
	}
	if !b.m.Registered() {
		t.Error("the second browser closed the workbench")
	}
}
