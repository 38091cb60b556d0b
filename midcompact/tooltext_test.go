package midcompact

import (
	"errors"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/midcompact/internal/sessiontest"
)

// pairs is a session with an assistant prefix then n user/assistant pairs.
func pairs(t *testing.T, n int) *Snapshot {
	return snapshotOf(t, readSession(t, sessiontest.PairLines(n)...), "")
}

func TestInventory_Pages(t *testing.T) {
	s := pairs(t, 30)
	tx := &Transaction{}
	first := FormatInventory(s, tx, nil, "")
	mustContain(t, first, "Anchor Pi usage (Pi reported at anchor start): unavailable; not derived from local char counts.\n",
		"31 groups (0 protected, 61 compressible).\nPage 20 group(s):\ng0001 [prefix] a0001→a0001 | 1 atoms, 1 msgs, 5 chars, images: 0 | 0 protected / 1 compressible | context before first user message\n",
		"g0002 a0002→a0003 | 2 atoms, 2 msgs, ",
		"\nnext cursor: "+encodeCursor(20)+"\nNote: ")
	second := FormatInventory(s, tx, nil, encodeCursor(20))
	mustContain(t, second, "Page 11 group(s):\ng0021 ")
	if strings.Contains(second, "next cursor") {
		t.Error("last page has a cursor")
	}
	if got := FormatInventory(s, tx, f64(500), ""); !strings.Contains(got, "Page 31 group(s):") {
		t.Error("page_size 500 not clamped to 50")
	}
	if got := FormatInventory(s, tx, f64(0.2), "%%%"); !strings.Contains(got, "Page 1 group(s):\ng0001 ") {
		t.Error("page_size 0.2 → 1, bad cursor → start")
	}
	if got := FormatInventory(s, tx, nil, encodeCursor(99)); !strings.Contains(got, "Page (empty):") {
		t.Error("cursor past the end")
	}
}

func TestMeasure(t *testing.T) {
	s := snapshotOf(t, fixture(t, "kinds"), "")
	got, err := measure(s, []Span{{"a0001", "a0003"}, {"a0006", "a0009"}})
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, got,
		"Candidate span inspection: 2 requested · factual content measurements only; no per-span token estimate.\n\na0001 → a0003\nfrom: User: Refactor the auth flow; keep the public API unchanged.\nto: Assistant: The flow has three steps.\n",
		"scope: 3 atoms · 5 messages (user 1 · assistant 2 · toolResult 2)\nwork: 1 tool exchanges · 2 tool calls (bash 1 · read 1)\ncontent: 153 chars · ",
		"% of anchor factual content\nimages: 0\nselection: 3 compressible · 0 protected",
		"selection: 2 compressible · 2 protected (a0007, a0009)")
	for spans, want := range map[string][]Span{
		"Unknown span ref a0099; re-run inspect against the current snapshot.": {{"a0001", "a0099"}},
		"Span a0003 → a0001 is reversed.":                                      {{"a0003", "a0001"}},
	} {
		if _, err := measure(s, want); err == nil || err.Error() != spans {
			t.Errorf("%v: %v", want, err)
		}
	}
	many := make([]Span, 100)
	for i := range many {
		many[i] = Span{"a0001", "a0016"}
	}
	got, _ = measure(s, many)
	if jsLen(got) > measureBudget+200 || !strings.Contains(got, "Output budget reached: showed ") || !strings.HasSuffix(got, " of 100 requested spans. Inspect the remainder in another call.") {
		t.Errorf("budget: %d units, tail %q", jsLen(got), got[len(got)-120:])
	}
}

func TestLocate(t *testing.T) {
	s := snapshotOf(t, fixture(t, "kinds"), "")
	if got, _ := LocateRef(s, "a0002", false); !strings.HasPrefix(got, "a0002 | position 2 | tool_exchange, compressible, closed tool protocol\ntools: read, bash\nAssistant: Let me look.") {
		t.Errorf("locate_ref = %q", got)
	}
	if got, _ := LocateRef(s, "a0005", true); !strings.HasPrefix(got, "a0005 | position 5 | tool_exchange, compressible, abandoned exchange\n") {
		t.Errorf("abandoned = %q", got)
	}
	if got, _ := LocateRef(s, "a0009", false); !strings.HasPrefix(got, "a0009 | position 9 | orphan_tool_result, protected, orphan result\n") {
		t.Errorf("orphan = %q", got)
	}
	if got, _ := LocateRef(s, "a0003", false); !strings.HasPrefix(got, "a0003 | position 3 | assistant, compressible, closed\nAssistant:") {
		t.Errorf("plain = %q", got)
	}
	// Seed 001 §External contracts: group labels are never refs; given
	// one, every ref lookup says so and names the group's atoms.
	const g2 = "g0002 is a group label, not an atom ref: group labels only name inventory groups. Its atoms are a0004→a0005; pass one of them (e.g. ref a0004), or start a0004 and end a0005."
	if _, err := LocateRef(s, "g0002", false); err == nil || err.Error() != g2 || !errors.Is(err, ErrUnknownAtom) {
		t.Errorf("group ref: %v", err)
	}
	if _, err := measure(s, []Span{{"a0001", "g0002"}}); err == nil || err.Error() != g2 {
		t.Errorf("measure with a group label: %v", err)
	}
	if _, _, err := NewDraft("tx").AddRange(s, "g0002", "a0005", "", ""); err == nil || err.Error() != g2 || !errors.Is(err, ErrUnknownAtom) {
		t.Errorf("plan_add with a group label: %v", err)
	}
	if _, err := LocateRef(s, "g0099", false); err == nil || err.Error() != "g0099 is a group label, not an atom ref, and names no group of this anchor snapshot. Group labels only name inventory groups; use the atom refs (a0001…) that inspect lists." {
		t.Errorf("unknown group label: %v", err)
	}
	if got, err := LocateRef(s, "gamma", false); got != noMatchingAtoms || err != nil {
		t.Errorf("a ref that is no group label = %q, %v", got, err)
	}
	got := LocateSearch(s, SearchFilter{ToolName: "BASH", Limit: 3})
	if !strings.HasPrefix(got, "Showing 3 of 4 matches (oldest first). Refine pattern or add source or tool_name.\n\n---\n\na0002 ") {
		t.Errorf("tool_name search = %q", got)
	}
	got = LocateSearch(s, SearchFilter{Source: "tool_result", Newest: true, Limit: 1})
	if !strings.HasPrefix(got, "Showing 1 of 4 matches (newest first).") || !strings.Contains(got, "a0014 |") {
		t.Errorf("newest tool_result = %q", got)
	}
	if got := LocateSearch(s, SearchFilter{Pattern: "LOGIN page", Source: "user", Limit: 3}); !strings.HasPrefix(got, "a0004 | position 4 | user, compressible, closed\nUser: Screenshot of the login page:") {
		t.Errorf("pattern = %q", got)
	}
	if got := LocateSearch(s, SearchFilter{Pattern: "zzz", Limit: 3}); got != noMatchingAtoms {
		t.Errorf("no match = %q", got)
	}
}

// TestExecute_ReadsWriteNothing: every read-only action returns no draft
// (nothing is appended) and the tool has no way to start or commit.
func TestExecute_ReadsWriteNothing(t *testing.T) {
	s := newMemSession(t, fixture(t, "kinds"))
	startTx(t, s, StartAgent)
	s.call(nil, `{"action":"plan_add","start":"a0001","end":"a0001","summary":"x"}`)
	n := len(s.lines)
	for _, req := range []string{
		`{"action":"inspect"}`, `{"action":"measure","candidates":[{"start":"a0001","end":"a0002"}]}`,
		`{"action":"locate_ref","ref":"a0001","detail":"full"}`, `{"action":"locate_search","pattern":"auth"}`,
		`{"action":"plan_show"}`, `{"action":"plan_read","range_id":"d1"}`,
		`{"action":"recall_list"}`, `{"action":"recall_read","block":"c0001"}`,
	} {
		if res := s.call(nil, req); res.Draft != nil || strings.HasPrefix(res.Text, "Error: ") && req != `{"action":"recall_read","block":"c0001"}` {
			t.Errorf("%s: draft %v, text %q", req, res.Draft != nil, res.Text)
		}
	}
	if len(s.lines) != n {
		t.Errorf("read-only actions appended %d entries", len(s.lines)-n)
	}
}
