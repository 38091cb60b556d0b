package tui

import (
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/sessiontest"
	"reflect"
	"strings"
	"testing"
)

// twoAtoms is the reference's Selection example: `"phase one"` (9 chars)
// and `"old exploration"` (15).
func twoAtoms(t *testing.T) *midcompact.Snapshot {
	return snapshotOf(t, sessiontest.Read(t,
		`{"type":"message","id":"e1","parentId":null,"timestamp":"t","message":{"role":"user","content":"phase one","timestamp":1}}`,
		`{"type":"message","id":"e2","parentId":"e1","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"old exploration"}],"timestamp":2}}`,
	), "")
}

func keys(v interface{ HandleKey(string) SelectionAction }, ks ...string) SelectionAction {
	var a SelectionAction
	for _, k := range ks {
		a = v.HandleKey(k)
	}
	return a
}

func screen(lines []string) string { return strings.Join(lines, "\n") }

// Reference §5.5: the Selection header of the upstream test (select a0001
// of 9+15 chars), the atom line marks, and save on s/Enter.
func TestSelectionView_HeaderMarksAndSave(t *testing.T) {
	v := NewSelectionView(twoAtoms(t), midcompact.NewDraft("tx"))
	if a := keys(v, "space"); a != SelectionNone {
		t.Fatalf("space → %v", a)
	}
	want := "Selected 1/2 atoms | 9/24 chars (37.5% of anchor) | up to 37.5% fewer anchor chars"
	out := screen(v.Render(120, 30, nil))
	for _, s := range []string{SelectionTitle, want, "-- g0001 | phase one", "> [*] PLAN a0001 user 9 chars", "  [ ] .... a0002 assistant 15 chars", "      Assistant: old exploration"} {
		if !strings.Contains(out, s) {
			t.Errorf("screen lacks %q:\n%s", s, out)
		}
	}
	spans, keep := v.Selection()
	if !reflect.DeepEqual(spans, []midcompact.SelectionSpan{{StartRef: "a0001", EndRef: "a0001"}}) || len(keep) != 0 {
		t.Errorf("selection = %v %v", spans, keep)
	}
	for _, k := range []string{"s", "S", "enter"} {
		if a := v.HandleKey(k); a != SelectionSave {
			t.Errorf("%s → %v, want save", k, a)
		}
	}
}

// Reference §5.5: Esc/q save only when dirty, else close.
func TestSelectionView_EscSavesOnlyWhenDirty(t *testing.T) {
	v := NewSelectionView(twoAtoms(t), midcompact.NewDraft("tx"))
	for _, k := range []string{"escape", "q"} {
		if a := v.HandleKey(k); a != SelectionClose {
			t.Errorf("clean %s → %v, want close", k, a)
		}
	}
	v.HandleKey("x")
	if a := v.HandleKey("escape"); a != SelectionSave || !v.Dirty() {
		t.Errorf("dirty escape → %v", a)
	}
}

// Reference §5.5 keys: j/k/↑/↓ move, K keeps a selected atom, g selects
// the group, d clears the contiguous run, protected atoms refuse.
func TestSelectionView_Keys(t *testing.T) {
	s := snapshotOf(t, sessiontest.Fixture(t, "kinds"), "")
	v := NewSelectionView(s, midcompact.NewDraft("tx"))
	keys(v, "g") // the cursor's group: a0001 (user) and its answers
	spans, _ := v.Selection()
	if len(spans) == 0 || spans[0].StartRef != "a0001" {
		t.Fatalf("g selected %v", spans)
	}
	keys(v, "j", "K")
	spans, keep := v.Selection()
	if !reflect.DeepEqual(keep, []string{"a0002"}) {
		t.Errorf("K on a0002: keep %v", keep)
	}
	if !strings.Contains(screen(v.Render(120, 40, nil)), "> [K] KEEP a0002") {
		t.Errorf("KEEP mark missing:\n%s", screen(v.Render(120, 40, nil)))
	}
	keys(v, "d")
	if spans, keep = v.Selection(); len(spans) != 0 || len(keep) != 0 {
		t.Errorf("d left %v %v", spans, keep)
	}
	keys(v, "k", "up", "down", "down") // clamp at the top, then a0003
	if v.Cursor() != 2 {
		t.Errorf("cursor %d, want 2", v.Cursor())
	}
	// Find a protected atom and toggle it.
	for i := range s.Atoms {
		if s.Atoms[i].Protected() {
			keys(v, "home")
			for range i {
				v.HandleKey("j")
			}
			v.HandleKey("x")
			out := screen(v.Render(140, 60, nil))
			if want := "Protected atom " + s.Atoms[i].Ref + " stays KEEP. Select its surrounding group instead."; !strings.Contains(out, want) {
				t.Errorf("no refusal %q:\n%s", want, out)
			}
			if spans, _ := v.Selection(); len(spans) != 0 {
				t.Errorf("protected atom selected: %v", spans)
			}
			if !strings.Contains(out, cantCompressLabel) {
				t.Errorf("protected atom not labelled %q", cantCompressLabel)
			}
			break
		}
	}
	keys(v, "end")
	if v.Cursor() != len(s.Atoms)-1 {
		t.Errorf("End → %d", v.Cursor())
	}
}

// A Selection opened on an existing plan starts with its ranges selected,
// so saving unchanged keeps them (ReplaceRanges keeps exact ranges).
func TestSelectionView_StartsFromPlan(t *testing.T) {
	s := twoAtoms(t)
	d, _, err := midcompact.NewDraft("tx").AddRange(s, "a0002", "a0002", "kept summary", "")
	if err != nil {
		t.Fatal(err)
	}
	v := NewSelectionView(s, d)
	spans, keep := v.Selection()
	runs, err := midcompact.ExpandSelection(s, spans, keep)
	if err != nil {
		t.Fatal(err)
	}
	n, changed := d.ReplaceRanges(s, runs)
	if len(n.Ranges) != 1 || n.Ranges[0].Summary != "kept summary" || changed || n.Revision != d.Revision {
		t.Errorf("unchanged save: changed %v, revision %d → %d, ranges %+v", changed, d.Revision, n.Revision, n.Ranges)
	}
}

// The drawing fits the height, keeps the cursor visible and never exceeds
// the width (wide characters count two cells).
func TestSelectionView_ScrollsAndFits(t *testing.T) {
	s := pairsWide(t, 40)
	v := NewSelectionView(s, midcompact.NewDraft("tx"))
	for range 60 {
		v.HandleKey("j")
	}
	lines := v.Render(60, 20, nil)
	if len(lines) > 20 {
		t.Errorf("%d lines for height 20", len(lines))
	}
	cur := s.Atoms[v.Cursor()].Ref
	found := false
	for _, l := range lines {
		if cellWidth(l) > 60 {
			t.Errorf("line of %d cells: %q", cellWidth(l), l)
		}
		found = found || strings.HasPrefix(l, "> ") && strings.Contains(l, cur)
	}
	if !found {
		t.Errorf("cursor %s not visible:\n%s", cur, screen(lines))
	}
	v.HandleKey("pageUp")
	if v.Cursor() >= 60 {
		t.Errorf("PgUp left the cursor at %d", v.Cursor())
	}
}

func pairsWide(t *testing.T, n int) *midcompact.Snapshot {
	s := pairs(t, n)
	for i := range s.Atoms {
		s.Atoms[i].FullText = strings.Repeat("中文 wide text ", 20)
	}
	return s
}

// Reference §5.5 Review: KEEP atoms shown, each range folds to a header,
// the selected range expands with ┌│└ atoms; n/p pick, e/t/d ask for their
// dialogs, Esc/Enter/q close.
func TestReviewView_RendersAndKeys(t *testing.T) {
	s := pairs(t, 3)
	d, _, err := midcompact.NewDraft("tx").AddRange(s, "a0002", "a0003", "First pair summarized.", "first")
	if err != nil {
		t.Fatal(err)
	}
	d, _, _ = d.AddRange(s, "a0005", "a0005", "", "")
	v := NewReviewView(s, d)
	out := screen(v.Render(120, 40, nil))
	for _, want := range []string{ReviewTitle, "Plan v2: 2 range(s) (1 pending summary).", "  KEEP a0001 assistant",
		"> ▾ d1 a0002→a0003 · 2 atoms", "topic: first", "First pair summarized.", "┌ a0002 user", "└ a0003 tool_exchange",
		"  ▸ d2 a0005→a0005 · 1 atoms", reviewPendingText, "  KEEP a0004 user"} {
		if !strings.Contains(out, want) {
			t.Errorf("review lacks %q:\n%s", want, out)
		}
	}
	if v.HandleKey("n"); v.SelectedID() != "d2" {
		t.Errorf("n → %s", v.SelectedID())
	}
	if v.HandleKey("right"); v.SelectedID() != "d2" {
		t.Errorf("right past the end → %s", v.SelectedID())
	}
	if v.RemoveMessage() != "d2: a0005 → a0005" {
		t.Errorf("remove message %q", v.RemoveMessage())
	}
	v.HandleKey("left")
	v.HandleKey("x")
	if out := screen(v.Render(120, 40, nil)); !strings.Contains(out, "> ▸ d1") || strings.Contains(out, "┌ a0002") {
		t.Errorf("x did not collapse:\n%s", out)
	}
	for k, want := range map[string]ReviewAction{"e": ReviewEditSummary, "t": ReviewEditTopic, "d": ReviewRemove,
		"escape": ReviewClose, "enter": ReviewClose, "q": ReviewClose, "j": ReviewNone, "pageDown": ReviewNone, "home": ReviewNone} {
		if got := v.HandleKey(k); got != want {
			t.Errorf("%s → %v, want %v", k, got, want)
		}
	}
	// After removing d1 the view keeps a valid selection.
	d2, _ := d.RemoveRange("d1")
	v.Reload(s, d2)
	if v.SelectedID() != "d2" {
		t.Errorf("after reload selected %q", v.SelectedID())
	}
	empty, _ := d2.RemoveRange("d2")
	v.Reload(s, empty)
	if v.HandleKey("e") != ReviewNone || v.SelectedID() != "" {
		t.Errorf("edit on an empty plan")
	}
	if out := screen(v.Render(80, 20, nil)); !strings.Contains(out, "Plan v4: no compression ranges.") {
		t.Errorf("empty plan:\n%s", out)
	}
}

// Review scrolls: j/k by one, PgUp/PgDn by 12, and fits its height.
func TestReviewView_Scroll(t *testing.T) {
	s := pairs(t, 30)
	v := NewReviewView(s, midcompact.NewDraft("tx"))
	first := v.Render(80, 20, nil)
	v.HandleKey("pageDown")
	second := v.Render(80, 20, nil)
	if len(second) > 20 || first[2] == second[2] {
		t.Errorf("PgDn did not scroll:\n%s\n---\n%s", screen(first), screen(second))
	}
	if !strings.Contains(second[2], "a0013") {
		t.Errorf("PgDn by 12 starts at %q", second[2])
	}
	v.HandleKey("k")
	if third := v.Render(80, 20, nil); !strings.Contains(third[2], "a0012") {
		t.Errorf("k by one starts at %q", third[2])
	}
}

func TestNormalizeKeyAndWrap(t *testing.T) {
	if NormalizeKey("shift+g") != "G" || NormalizeKey("shift+tab") != "shift+tab" || NormalizeKey("x") != "x" {
		t.Error("NormalizeKey")
	}
	got := wrap("alpha beta gamma delta", 11, 2)
	if !reflect.DeepEqual(got, []string{"alpha beta", "gamma delta"}) {
		t.Errorf("wrap = %q", got)
	}
	if got := wrap("alpha beta gamma delta epsilon", 11, 2); got[1] != "gamma delt…" {
		t.Errorf("wrap cut = %q", got)
	}
	if fit("中文中文", 5) != "中文…" || cellWidth("中a") != 3 {
		t.Errorf("fit = %q", fit("中文中文", 5))
	}
}

// FuzzOverlayKeys: any key sequence leaves Selection without a protected
// atom selected and with spans that ExpandSelection accepts, and both
// overlays draw within their width and height.
func FuzzOverlayKeys(f *testing.F) {
	f.Add("j x K g d s", 80, 24)
	f.Add("end space pageUp G D escape", 40, 10)
	f.Add("n p right left e t d x home end pageDown q", 120, 40)
	s := snapshotOf(f, sessiontest.Fixture(f, "kinds"), "")
	d, _, err := midcompact.NewDraft("tx").AddRange(s, "a0001", "a0003", "summary", "topic")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, script string, w, h int) {
		w, h = 20+int(uint(w)%200), 1+int(uint(h)%80)
		sv, rv := NewSelectionView(s, d), NewReviewView(s, d)
		for _, k := range strings.Fields(script) {
			sv.HandleKey(k)
			rv.HandleKey(k)
		}
		spans, keep := sv.Selection()
		runs, err := midcompact.ExpandSelection(s, spans, keep)
		if err != nil {
			t.Fatalf("spans %v keep %v: %v", spans, keep, err)
		}
		for _, r := range runs {
			for i := r.From; i <= r.To; i++ {
				if s.Atoms[i].Protected() {
					t.Fatalf("protected atom %d selected", i)
				}
			}
		}
		for _, lines := range [][]string{sv.Render(w, h, nil), rv.Render(w, h, nil)} {
			if len(lines) > max(h, 8) {
				t.Fatalf("%d lines for height %d", len(lines), h)
			}
			for _, l := range lines {
				if cellWidth(l) > w {
					t.Fatalf("line of %d cells for width %d: %q", cellWidth(l), w, l)
				}
			}
		}
	})
}
