package midcompact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readEntryFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "entries", name))
	if err != nil {
		t.Fatal(err)
	}
	return b[:len(b)-1] // drop the final LF
}

// TestEntryShapes_RoundTrip: the reference's payload examples (as the
// upstream TypeScript writes them) decode, and encoding ours gives the same
// bytes: exactly those members, in that order, optional ones absent (seed
// 001 §Persistence).
func TestEntryShapes_RoundTrip(t *testing.T) {
	for name, decode := range map[string]func(json.RawMessage) (any, bool){
		"transaction.json": func(r json.RawMessage) (any, bool) { return DecodeTransaction(r) },
		"draft.json":       func(r json.RawMessage) (any, bool) { return DecodeDraft(r) },
		"state.json":       func(r json.RawMessage) (any, bool) { return DecodeState(r) },
	} {
		raw := readEntryFile(t, name)
		v, ok := decode(raw)
		if !ok {
			t.Fatalf("%s: shape check refused the reference example", name)
		}
		got, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(raw) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, raw)
		}
	}
}

func TestRestore_UpstreamSession(t *testing.T) {
	r := Restore(branchOf(t, fixture(t, "upstream"), ""))
	if r.Transaction == nil || r.Transaction.ID != "tx-lq8w3k2c-4f9ab" || r.Transaction.StartMode != StartAgent || r.Transaction.AnchorUsage == nil {
		t.Fatalf("transaction = %+v", r.Transaction)
	}
	if r.Draft == nil || r.Draft.Revision != 2 || len(r.Draft.Ranges) != 1 || r.Draft.Ranges[0].ReplacementContentChars != 160 {
		t.Fatalf("draft = %+v", r.Draft)
	}
	if r.State == nil || r.State.Block("c0001") == nil || r.StateEntryID != "s1" {
		t.Fatalf("state = %+v", r.State)
	}
}

// TestRestore_OldShapes: invalid payloads are skipped, the latest valid one
// wins, a draft counts only after its own transaction, a missing startMode
// is agent-first and range/block sizes of old shapes read as 0.
func TestRestore_OldShapes(t *testing.T) {
	r := Restore(branchOf(t, fixture(t, "upstream-old"), ""))
	if r.State == nil || r.StateEntryID != "s-old" {
		t.Fatalf("state from %q, want s-old", r.StateEntryID)
	}
	wantBlock := Block{ID: "c0001", Summary: "Old block without sizes.", EntryIDs: []string{"e1"}, MessageKeys: []string{"user:1:x"}}
	if diff := cmp.Diff(wantBlock, r.State.Blocks[0]); diff != "" {
		t.Errorf("old block (-want +got):\n%s", diff)
	}
	if r.Transaction == nil || r.Transaction.ID != "tx-old-aaaaa" || r.Transaction.StartMode != StartAgent {
		t.Fatalf("transaction = %+v", r.Transaction)
	}
	wantRange := Range{ID: "d1", StartRef: "a0001", EndRef: "a0001", EntryIDs: []string{"e1"}, MessageKeys: []string{"user:1:x"}}
	if r.Draft == nil || len(r.Draft.Ranges) != 1 {
		t.Fatalf("draft = %+v", r.Draft)
	}
	if diff := cmp.Diff(wantRange, r.Draft.Ranges[0]); diff != "" {
		t.Errorf("coerced range (-want +got):\n%s", diff)
	}
}

func TestRestore_PairingRules(t *testing.T) {
	tx := func(id string) string {
		return `{"version":1,"id":"` + id + `","anchorEntryId":"e0","startedAt":"2026-09-08T10:00:00.000Z","startMode":"user"}`
	}
	draft := func(tx string, rev int) string {
		return `{"version":1,"transactionId":"` + tx + `","revision":` + itoa(rev) + `,"ranges":[]}`
	}
	for _, c := range []struct {
		name        string
		entries     [][2]string
		tx          string
		draftRev    int // -1: no draft
		transaction bool
	}{
		{"draft before its transaction", [][2]string{{DraftEntryType, draft("A", 3)}, {TransactionEntryType, tx("A")}}, "A", -1, true},
		{"new transaction clears draft", [][2]string{{TransactionEntryType, tx("A")}, {DraftEntryType, draft("A", 3)}, {TransactionEntryType, tx("B")}}, "B", -1, true},
		{"draft of another transaction", [][2]string{{TransactionEntryType, tx("A")}, {DraftEntryType, draft("A", 1)}, {DraftEntryType, draft("B", 2)}}, "A", 1, true},
		{"latest valid draft wins", [][2]string{{TransactionEntryType, tx("A")}, {DraftEntryType, draft("A", 1)}, {DraftEntryType, draft("A", 2)}, {DraftEntryType, `{"version":1,"transactionId":"A","revision":"3","ranges":[]}`}}, "A", 2, true},
		{"invalid transaction ignored", [][2]string{{TransactionEntryType, tx("A")}, {TransactionEntryType, `{"version":2,"id":"B","anchorEntryId":"e0","startedAt":"x"}`}}, "A", -1, true},
		{"none", [][2]string{{"other", `{}`}}, "", -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var lines []string
			for i, e := range c.entries {
				lines = append(lines, customEntry(i, e[0], e[1]))
			}
			r := Restore(branchOf(t, readSession(t, lines...), ""))
			if (r.Transaction != nil) != c.transaction || c.transaction && r.Transaction.ID != c.tx {
				t.Fatalf("transaction = %+v", r.Transaction)
			}
			if c.transaction && r.Transaction.StartMode != StartUser {
				t.Errorf("startMode = %q", r.Transaction.StartMode)
			}
			if c.draftRev < 0 && r.Draft != nil || c.draftRev >= 0 && (r.Draft == nil || r.Draft.Revision != c.draftRev) {
				t.Errorf("draft = %+v, want revision %d", r.Draft, c.draftRev)
			}
		})
	}
}

// TestDraft_Mutations: every mutation bumps the revision and yields a full
// plan; ids are max+1 and reused after the highest is removed; boundaries
// cannot be updated.
func TestDraft_Mutations(t *testing.T) {
	snap := snapshotOf(t, fixture(t, "kinds"), "")
	d := NewDraft("tx")
	d1, _, err := d.AddRange(snap, "a0004", "a0005", "", "")
	if err != nil {
		t.Fatal(err)
	}
	d2, r, err := d1.AddRange(snap, "a0001", "a0002", "s", "t")
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "d2" || d2.Ranges[0].ID != "d2" || d2.Revision != 2 || len(d.Ranges) != 0 || len(d1.Ranges) != 1 {
		t.Fatalf("add: %+v", d2)
	}
	d3, _ := d2.RemoveRange("d2")
	d4, r4, _ := d3.AddRange(snap, "a0001", "a0001", "", "")
	if r4.ID != "d2" || d4.Revision != 4 {
		t.Errorf("reused id %s revision %d", r4.ID, d4.Revision)
	}
	empty := ""
	d5, r5, _ := d4.UpdateRange("d1", &empty, nil)
	if r5.Summary != "" || d5.PendingCount() != 2 || r5.StartRef != "a0004" {
		t.Errorf("update: %+v", r5)
	}
	if r5.ReplacementContentChars != replacementChars("", "") || r5.OriginalImageCount != 1 {
		t.Errorf("range facts: %+v", r5)
	}
}

// customEntry is session entry i, a custom entry of type ct with data,
// id "c<i>" and parent "c<i-1>" (null for the first).
func customEntry(i int, ct, data string) string {
	parent := `null`
	if i > 0 {
		parent = `"c` + itoa(i-1) + `"`
	}
	return `{"type":"custom","customType":"` + ct + `","data":` + data + `,"id":"c` + itoa(i) + `","parentId":` + parent + `,"timestamp":"t"}`
}
