package midcompact

import (
	"strings"
	"testing"
)

func TestTokenEstimate(t *testing.T) {
	p, lo, hi := DefaultTokenEstimate.Estimate(100, 10, 1)
	if p != 1184 || lo != 727 || hi != 1640 {
		t.Errorf("estimate = %d %d %d, want 1184 727 1640", p, lo, hi)
	}
}

// TestReviewState: owners and start/end flags, group labels as the tool's
// inventory numbers them (a prefix group is g0001), char classes of atoms and of the exact wrapper, the est table,
// and `<` escaped in the injected state.
func TestReviewState(t *testing.T) {
	s := snapshotOf(t, fixture(t, "kinds"), "")
	up := Restore(branchOf(t, fixture(t, "upstream"), ""))
	d := NewDraft(up.Transaction.ID)
	d, _, _ = d.AddRange(s, "a0001", "a0003", "</script><b>", "中文")
	st := NewReviewState("review", s, up.Transaction, d)
	a := st.Atoms
	if a[0].OwningRangeID != "d1" || !a[0].IsRangeStart || a[0].IsRangeEnd || !a[2].IsRangeEnd || a[3].OwningRangeID != "" {
		t.Errorf("owners: %+v %+v %+v", a[0], a[2], a[3])
	}
	if a[0].GroupRef != "g0001" || a[0].GroupLabel != "Refactor the auth flow; keep the public API unchanged." || a[3].GroupRef != "g0002" {
		t.Errorf("groups: %s %q %s", a[0].GroupRef, a[0].GroupLabel, a[3].GroupRef)
	}
	n, w := charClasses(s.Atoms[0].FullText)
	if a[0].NarrowChars != n || a[0].WideChars != w || n == 0 {
		t.Errorf("char classes %d/%d", a[0].NarrowChars, a[0].WideChars)
	}
	r := st.Draft.Ranges[0]
	if r.ReplacementWideChars != 2 || r.AtomCount != 3 || r.ReplacementNarrowChars+r.ReplacementWideChars != r.ReplacementContentChars {
		t.Errorf("range classes: %+v", r)
	}
	if st.Est != DefaultTokenEstimate || st.Telemetry.RangeCount != 1 || *st.Telemetry.AnchorTokens != 70000 {
		t.Errorf("est/telemetry: %+v", st.Telemetry)
	}
	b, err := st.StateScript()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "<") || !strings.Contains(string(b), `\u003c/script\u003e`) {
		t.Error("state script not escaped")
	}
	snap := pairs(t, 1)
	pre := NewReviewState("selection", snap, &Transaction{}, NewDraft("x"))
	if pre.Atoms[0].GroupRef != "g0001" || pre.Atoms[1].GroupRef != "g0002" || pre.Telemetry.ContextWindow != nil {
		t.Errorf("prefix group %s, next %s", pre.Atoms[0].GroupRef, pre.Atoms[1].GroupRef)
	}
	// The page names a group as the tool's inventory does (the TUI:
	// tui.TestViewGroups_InventoryNames).
	inv := FormatInventory(snap, &Transaction{}, nil, "")
	for _, ra := range pre.Atoms {
		if !strings.Contains(inv, ra.GroupRef+" ") {
			t.Errorf("group %s of %s is not in the inventory:\n%s", ra.GroupRef, ra.Ref, inv)
		}
	}
}
