package midcompact

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRestore_StateIndependentOfTransactions: state entries restore on
// their own; a transaction (or a new one) neither hides nor clears the
// state, and a state entry neither ends nor clears a transaction and its
// plan (seed 001 §Persistence: "State entries are independent of
// transactions").
func TestRestore_StateIndependentOfTransactions(t *testing.T) {
	state := `{"version":1,"createdAt":"2026-09-08T10:00:00.000Z","blocks":[{"id":"c0001","summary":"s","entryIds":["e1"],"messageKeys":["user:1:x"]}]}`
	tx := func(id string) string {
		return `{"version":1,"id":"` + id + `","anchorEntryId":"e0","startedAt":"2026-09-08T10:00:00.000Z"}`
	}
	draft := func(tx string) string {
		return `{"version":1,"transactionId":"` + tx + `","revision":1,"ranges":[]}`
	}
	for _, c := range []struct {
		name      string
		entries   [][2]string
		stateID   string
		txID      string
		withDraft bool
	}{
		{"state alone", [][2]string{{StateEntryType, state}}, "c0", "", false},
		{"transactions after the state keep it", [][2]string{{StateEntryType, state}, {TransactionEntryType, tx("A")}, {DraftEntryType, draft("A")}, {TransactionEntryType, tx("B")}}, "c0", "B", false},
		{"a state after the plan keeps the plan", [][2]string{{TransactionEntryType, tx("A")}, {DraftEntryType, draft("A")}, {StateEntryType, state}}, "c2", "A", true},
		{"an invalid state is skipped, the earlier one wins", [][2]string{{StateEntryType, state}, {TransactionEntryType, tx("A")}, {StateEntryType, `{"version":1,"createdAt":"x","blocks":[{"id":"c0002"}]}`}}, "c0", "A", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var lines []string
			for i, e := range c.entries {
				lines = append(lines, customEntry(i, e[0], e[1]))
			}
			r := Restore(branchOf(t, readSession(t, lines...), ""))
			if r.State == nil || r.StateEntryID != c.stateID {
				t.Errorf("state from %q, want %q", r.StateEntryID, c.stateID)
			}
			if got := ""; r.Transaction != nil {
				got = r.Transaction.ID
				if got != c.txID {
					t.Errorf("transaction %q, want %q", got, c.txID)
				}
			} else if c.txID != "" {
				t.Errorf("no transaction, want %q", c.txID)
			}
			if (r.Draft != nil) != c.withDraft {
				t.Errorf("draft %+v, want one: %v", r.Draft, c.withDraft)
			}
		})
	}
}

// TestLegacyFields_NeverDecideOrDisplay: legacy approx-token fields and the
// Pi-reported anchor usage are informational only (seed 001 §Persistence:
// "Legacy approxTokens … never authoritative for decisions or UI";
// §Transactions: "anchorUsage is informational only … never an optimization
// target"; the `est.` projection never feeds commit gating). A plan whose
// legacy fields, anchor usage and estimated projection are absurd validates,
// commits and displays exactly as one with sane values.
func TestLegacyFields_NeverDecideOrDisplay(t *testing.T) {
	snap := snapshotOf(t, fixture(t, "kinds"), "")
	sane, _ := NewTransaction("e9", StartAgent, testNow, "aaaaa", &AnchorUsage{Tokens: f64(70000), ContextWindow: 100000, Percent: f64(70)})
	// Usage past the window and a long summary: the est. band would show the
	// context growing past 100%; nothing may refuse because of it.
	wild, _ := NewTransaction("e9", StartAgent, testNow, "aaaaa", &AnchorUsage{Tokens: f64(99999), ContextWindow: 1, Percent: f64(9999999)})
	long := strings.Repeat("a much longer summary than the original ", 50)

	d := NewDraft(sane.ID)
	d, _, err := d.AddRange(snap, "a0001", "a0003", long, "t")
	if err != nil {
		t.Fatal(err)
	}
	odd := *d
	odd.Ranges = append([]Range(nil), d.Ranges...)
	odd.Ranges[0].OriginalApproxTokens, odd.Ranges[0].CompressedApproxTokens = 0, 1<<40

	if err := ValidateCommit(&odd, snap); err != nil {
		t.Fatalf("legacy fields refused the commit: %v", err)
	}
	a, err := PlanCommit(sane, d, snap, testNow)
	if err != nil {
		t.Fatal(err)
	}
	b, err := PlanCommit(sane, &odd, snap, testNow)
	if err != nil {
		t.Fatalf("legacy fields refused the commit: %v", err)
	}
	w, err := PlanCommit(wild, &odd, snap, testNow)
	if err != nil || len(w.State.Blocks) != 1 {
		t.Fatalf("anchor usage refused the commit: %v", err)
	}
	if len(a.State.Blocks) != 1 || len(b.State.Blocks) != 1 ||
		a.State.Blocks[0].ID != b.State.Blocks[0].ID || strings.Join(a.State.Blocks[0].EntryIDs, ",") != strings.Join(b.State.Blocks[0].EntryIDs, ",") ||
		a.State.Blocks[0].ReplacementContentChars != b.State.Blocks[0].ReplacementContentChars {
		t.Errorf("blocks differ: %+v vs %+v", a.State.Blocks, b.State.Blocks)
	}
	if a.Notice != b.Notice {
		t.Errorf("commit notice follows legacy fields:\n%q\n%q", a.Notice, b.Notice)
	}

	// Displays: footer, plan texts, state card and the selection header use
	// factual chars only.
	if FooterStatus(sane, d, LockFree) != FooterStatus(sane, &odd, LockFree) {
		t.Error("footer follows legacy fields")
	}
	if PlanShow(snap, sane, d) != PlanShow(snap, sane, &odd) {
		t.Error("plan_show follows legacy fields")
	}
	if MutationText(snap, d, "added", &d.Ranges[0], "d1") != MutationText(snap, &odd, "added", &odd.Ranges[0], "d1") {
		t.Error("mutation text follows legacy fields")
	}
	if strings.Join(StateCardLines(a.State, true), "\n") != strings.Join(StateCardLines(withoutLegacy(b.State), true), "\n") {
		t.Errorf("state card follows legacy fields:\n%s\n%s", StateCardLines(a.State, true), StateCardLines(b.State, true))
	}
	for _, text := range []string{PlanShow(snap, sane, &odd), FooterStatus(sane, &odd, LockFree), strings.Join(StateCardLines(b.State, true), "\n")} {
		if strings.Contains(text, "1099511627776") || strings.Contains(strings.ToLower(text), "token") {
			t.Errorf("a display shows legacy token numbers: %q", text)
		}
	}
	// The workbench payload's atoms and ranges (what the page draws and
	// estimates from) do not change either; only the legacy telemetry copy
	// carries the legacy numbers.
	ra, rb := NewReviewState("review", snap, sane, d), NewReviewState("review", snap, sane, &odd)
	ja, _ := json.Marshal([]any{ra.Atoms, ra.Draft, ra.Est})
	jb, _ := json.Marshal([]any{rb.Atoms, rb.Draft, rb.Est})
	if string(ja) != string(jb) {
		t.Error("review state atoms/ranges follow legacy fields")
	}
}

// withoutLegacy is s with the legacy block fields of a sane commit, so a
// card comparison sees only what legacy values could change.
func withoutLegacy(s *State) *State {
	c := *s
	c.Blocks = append([]Block(nil), s.Blocks...)
	for i := range c.Blocks {
		c.Blocks[i].OriginalApproxTokens, c.Blocks[i].CompressedApproxTokens = 1, 1
	}
	return &c
}

// TestAtomRefs_TransactionLocal: refs index the snapshot they were read from
// (seed 001 §Transactions: "Atom refs are transaction-local … group refs
// (g...) are never locate refs"). After a commit, the same ref names another
// atom in the next transaction, and no action accepts a group ref.
func TestAtomRefs_TransactionLocal(t *testing.T) {
	s := newMemSession(t, fixture(t, "kinds"))
	lock := &PlanningLock{}
	startTx(t, s, StartAgent)
	before := s.call(lock, `{"action":"locate_ref","ref":"a0002"}`).Text
	s.call(lock, `{"action":"plan_add","start":"a0001","end":"a0003","summary":"phase one"}`)
	r := Restore(s.branch())
	snap := snapshotOf(t, s.file(), r.Transaction.AnchorEntryID)
	res, err := PlanCommit(r.Transaction, r.Draft, snap, testNow)
	if err != nil {
		t.Fatal(err)
	}
	s.leaf = r.Transaction.AnchorEntryID
	s.appendCustom(StateEntryType, res.State)
	startTx(t, s, StartAgent)
	after := s.call(lock, `{"action":"locate_ref","ref":"a0002"}`).Text
	if before == after || !strings.HasPrefix(before, "a0002 | position 2 | tool_exchange") || !strings.HasPrefix(after, "a0002 | position 2 | user") {
		t.Errorf("a0002 before %q, after %q", firstLine(before), firstLine(after))
	}
	for _, req := range []string{
		`{"action":"locate_ref","ref":"g0001"}`,
		`{"action":"measure","candidates":[{"start":"g0001","end":"g0002"}]}`,
		`{"action":"plan_add","start":"g0001","end":"g0001"}`,
	} {
		got := s.call(lock, req).Text
		if !strings.HasPrefix(got, "Error: ") && got != noMatchingAtoms {
			t.Errorf("%s accepted a group ref: %q", req, got)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// shape lists the member paths of a JSON value in order (array members
// by their first element), so two payloads compare by structure only.
func shape(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	var out []string
	var walk func(prefix string, record bool)
	walk = func(prefix string, record bool) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, _ := dec.Token()
				if record {
					out = append(out, prefix+"."+k.(string))
				}
				walk(prefix+"."+k.(string), record)
			}
			dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				walk(prefix+"[]", record && i == 0) // the first element stands for all
			}
			dec.Token()
		}
	}
	walk("", true)
	return out
}

// TestWrittenShapes_MatchReference: what this package writes — a new
// transaction, a plan after plan_add, the state of a commit — has exactly
// the members, in the same order, of the reference's payloads as the
// upstream TypeScript writes them (seed 001 §Persistence; reference §3),
// and optional members are absent, never null, when unset.
func TestWrittenShapes_MatchReference(t *testing.T) {
	snap := snapshotOf(t, fixture(t, "kinds"), "")
	tx, err := NewTransaction("e3", StartAgent, testNow, "4f9ab", &AnchorUsage{Tokens: f64(70000), ContextWindow: 100000, Percent: f64(70)})
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := NewDraft(tx.ID).AddRange(snap, "a0001", "a0002", "Phase one summarized.", "old phase")
	if err != nil {
		t.Fatal(err)
	}
	res, err := PlanCommit(tx, d, snap, testNow)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{"transaction.json": tx, "draft.json": d, "state.json": res.State} {
		got, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, g := shape(t, readEntryFile(t, name)), shape(t, got)
		if len(want) < 6 {
			t.Fatalf("%s: shape %v is too small to compare", name, want)
		}
		if strings.Join(g, " ") != strings.Join(want, " ") {
			t.Errorf("%s members:\n got %v\nwant %v", name, g, want)
		}
	}
	bare, _ := NewTransaction("e3", StartAgent, testNow, "4f9ab", nil)
	bd, _, _ := NewDraft(bare.ID).AddRange(snap, "a0001", "a0002", "", "")
	bs, _ := PlanCommit(bare, &Draft{Version: 1, TransactionID: bare.ID, Ranges: []Range{withSummary(bd.Ranges[0])}}, snap, testNow)
	for _, v := range []any{bare, bd, bs.State} {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), "null,") && !strings.Contains(string(b), `"projectedTokens":null`) || strings.Contains(string(b), `"anchorUsage"`) || strings.Contains(string(b), `"topic"`) {
			t.Errorf("unset optional members written: %s", b)
		}
	}
}

func withSummary(r Range) Range {
	r.Summary = "s"
	return r
}
