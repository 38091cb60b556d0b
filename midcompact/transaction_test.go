package midcompact

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func rangeOver(snap *Snapshot, id string, from, to int, summary string) Range {
	return newRange(snap, id, from, to, summary, "")
}

// TestValidateCommit: commit re-checks the plan against a fresh snapshot
// and rejects pending, reversed, overlapping and protected-crossing ranges
// with the reference texts; the first failure wins (seed 001 §Atoms and
// ranges).
func TestValidateCommit(t *testing.T) {
	snap := snapshotOf(t, fixture(t, "kinds"), "")
	ok := rangeOver(snap, "d1", 0, 2, "s")
	reversed := ok
	reversed.ID, reversed.StartRef, reversed.EndRef = "d2", "a0005", "a0004"
	for _, c := range []struct {
		name   string
		ranges []Range
		want   string
	}{
		{"empty", nil, "Plan is empty; nothing to commit."},
		{"pending", []Range{ok, rangeOver(snap, "d2", 3, 4, "")}, "Midcompact commit rejected: Range d2 has an empty (pending) summary; commit rejected."},
		{"reversed", []Range{ok, reversed}, "Midcompact commit rejected: Range d2 has reversed boundaries."},
		{"protected", []Range{rangeOver(snap, "d3", 5, 7, "s")}, "Midcompact commit rejected: Range d3 crosses protected atom a0007."},
		{"overlap", []Range{ok, rangeOver(snap, "d2", 2, 3, "s")}, "Midcompact commit rejected: Ranges d1 and d2 overlap."},
		{"first failure wins", []Range{rangeOver(snap, "d1", 0, 0, ""), rangeOver(snap, "d2", 5, 7, "s")}, "Midcompact commit rejected: Range d1 has an empty (pending) summary; commit rejected."},
		{"valid", []Range{ok, rangeOver(snap, "d2", 3, 4, "s")}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := NewDraft("tx")
			d.Ranges = c.ranges
			err := ValidateCommit(d, snap)
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, ErrCommitRejected) {
					t.Errorf("%v is not ErrCommitRejected", err)
				}
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestPlanCommit_Cumulative: a commit copies the anchor state's blocks,
// numbers new blocks after the highest, and leaves the old state alone
// (seed 001 §Persistence: commit appends, never mutates).
func TestPlanCommit_Cumulative(t *testing.T) {
	f := fixture(t, "committed")
	snap := snapshotOf(t, f, "")
	old := snap.AnchorState
	oldBlocks := len(old.Blocks)
	tx, _ := NewTransaction("x", StartAgent, testNow, "bbbbb", nil)
	d := NewDraft(tx.ID)
	var err error
	// a0003 is the first raw atom after the two compressed blocks.
	d, _, err = d.AddRange(snap, "a0003", "a0003", "later", "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := PlanCommit(tx, d, snap, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.State.Blocks) != oldBlocks+1 || res.State.Blocks[oldBlocks].ID != "c0003" || len(old.Blocks) != oldBlocks {
		t.Errorf("blocks %d (+%s), old %d", len(res.State.Blocks), res.State.Blocks[len(res.State.Blocks)-1].ID, len(old.Blocks))
	}
	lc := res.State.LastCommit
	if lc.ProjectedTokens != nil || lc.ProjectedPercent != nil || lc.AnchorUsage != nil || strings.Contains(res.Label, "anchor") {
		t.Errorf("no usage: lastCommit %+v, label %q", lc, res.Label)
	}
}

// TestPlanCommit_LegacyTelemetry: the legacy derived fields are computed as
// the reference says but never gate anything.
func TestPlanCommit_LegacyTelemetry(t *testing.T) {
	snap := snapshotOf(t, fixture(t, "kinds"), "")
	tx, _ := NewTransaction("a7", StartAgent, testNow, "ccccc", &AnchorUsage{Tokens: f64(70000), ContextWindow: 100000, Percent: f64(70)})
	d := NewDraft(tx.ID)
	r := rangeOver(snap, "d1", 0, 2, "s")
	r.OriginalApproxTokens, r.CompressedApproxTokens = 22000, 1000
	d.Ranges = []Range{r}
	res, err := PlanCommit(tx, d, snap, testNow.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	lc := res.State.LastCommit
	if lc.EstimatedSavedTokens != 21000 || *lc.ProjectedTokens != 49000 || *lc.ProjectedPercent != 49 {
		t.Errorf("legacy telemetry = %d %v %v", lc.EstimatedSavedTokens, *lc.ProjectedTokens, *lc.ProjectedPercent)
	}
	// A range that "saves" nothing by the legacy estimate commits all the
	// same: approx tokens never decide (seed 001 §Persistence).
	d.Ranges[0].OriginalApproxTokens, d.Ranges[0].CompressedApproxTokens = 0, 1_000_000
	res, err = PlanCommit(tx, d, snap, testNow)
	if err != nil || res.State.LastCommit.EstimatedSavedTokens != 0 || *res.State.LastCommit.ProjectedTokens != 70000 {
		t.Errorf("legacy fields gated the commit: %v", err)
	}
}

func TestNewTransaction(t *testing.T) {
	tx, err := NewTransaction("e3", StartUser, time.UnixMilli(1757325600000), "4f9ab", &AnchorUsage{Tokens: f64(-3.4), ContextWindow: 99999.6, Percent: nil})
	if err != nil {
		t.Fatal(err)
	}
	if tx.ID != "tx-mfayaf40-4f9ab" || tx.StartedAt != "2025-09-08T10:00:00.000Z" || *tx.AnchorUsage.Tokens != 0 || tx.AnchorUsage.ContextWindow != 100000 || tx.AnchorUsage.CapturedAt != tx.StartedAt {
		t.Errorf("tx = %+v usage %+v", tx, tx.AnchorUsage)
	}
	if StartNotice(tx) != "Midcompact started at anchor e3 (user-first). Anchor context 0/100k (?%) [Pi reported]." {
		t.Errorf("notice = %q", StartNotice(tx))
	}
	for _, cw := range []float64{0, -1} {
		tx, _ := NewTransaction("e3", StartAgent, testNow, "x", &AnchorUsage{ContextWindow: cw})
		if tx.AnchorUsage != nil {
			t.Errorf("window %v kept usage", cw)
		}
	}
	if _, err := NewTransaction("", StartAgent, testNow, "x", nil); err == nil || err.Error() != msgNoLeaf {
		t.Errorf("no leaf: %v", err)
	}
}

// TestPlanningLock: one owner, agent or ui; each releases only itself;
// blocked acquisitions fail at once (no queue); Reset (reload) frees it.
func TestPlanningLock(t *testing.T) {
	var l PlanningLock
	if l.Owner() != LockFree || !l.AcquireAgent() || l.TryAcquireUI() || l.Owner() != LockAgent {
		t.Fatal("agent first")
	}
	l.ReleaseUI()
	if l.Owner() != LockAgent {
		t.Error("ui released the agent's lock")
	}
	l.ReleaseAgent()
	if !l.TryAcquireUI() || !l.TryAcquireUI() || l.AcquireAgent() || l.Owner() != LockUI {
		t.Fatal("ui then agent")
	}
	l.ReleaseAgent()
	if l.Owner() != LockUI {
		t.Error("agent released the ui's lock")
	}
	l.Reset()
	if l.Owner() != LockFree {
		t.Error("reset")
	}
}

func TestStatusTexts(t *testing.T) {
	if got := StatusText(Restored{}, nil, LockFree); got != "No active transaction and no active midcompact blocks on this branch." {
		t.Error(got)
	}
	r := Restore(branchOf(t, fixture(t, "committed"), ""))
	if got := StatusText(r, nil, LockFree); got != "Midcompact active on this branch: 2 block(s), 209 → 331 content chars. Original history remains recallable." {
		t.Error(got)
	}
	up := Restore(branchOf(t, fixture(t, "upstream"), ""))
	got := StatusText(up, nil, LockUI)
	mustContain(t, got, "anchor: 70k / 100k (70%) [Pi reported]\nplan: 1 range(s) · 24 → 160 content chars · 0 images (0 payload bytes) · 0 pending summary",
		"Plan v2: 1 range(s) (ready for review).\n\nd1: a0001 → a0002 | old phase [summarized]\nfrom: User: old requirement\nto: Assistant: old exploration\n",
		"\nMode: agent-first · lock: ui")
	if f := FooterStatus(up.Transaction, up.Draft, LockAgent); f != "MC planning · 1 ranges · 24 chars · Agent editing" {
		t.Errorf("footer = %q", f)
	}
	if f := FooterStatus(nil, nil, LockFree); f != "" {
		t.Errorf("footer without tx = %q", f)
	}
}

func TestFormatNumbers(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999: "999", 1000: "1k", 1250: "1.3k", 70000: "70k", 1049999: "1M", 1050000: "1.1M", 128000: "128k"} {
		if got := formatTokens(&v); got != want {
			t.Errorf("formatTokens(%v) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[float64]string{70: "70", 37.5: "37.5", 0.25: "0.3", 33.333: "33.3", 99.96: "100"} {
		if got := formatPercent(&v); got != want {
			t.Errorf("formatPercent(%v) = %q, want %q", v, got, want)
		}
	}
	if formatTokens(nil) != "?" || formatPercent(nil) != "?" {
		t.Error("nil")
	}
}
