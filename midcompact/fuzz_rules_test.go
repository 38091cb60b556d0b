package midcompact

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// checkPlan asserts the plan invariants of seed 001 §Atoms and ranges on d
// against snap: ranges sorted, non-empty, non-overlapping, free of protected
// atoms, their refs and indexes those of the snapshot, ids unique.
func checkPlan(t *testing.T, snap *Snapshot, d *Draft) {
	t.Helper()
	ids := map[string]bool{}
	for i, r := range d.Ranges {
		if ids[r.ID] {
			t.Fatalf("duplicate range id %s in %+v", r.ID, d.Ranges)
		}
		ids[r.ID] = true
		if r.StartIndex < 0 || r.EndIndex >= len(snap.Atoms) || r.StartIndex > r.EndIndex {
			t.Fatalf("range %s spans %d..%d of %d atoms", r.ID, r.StartIndex, r.EndIndex, len(snap.Atoms))
		}
		if snap.Atoms[r.StartIndex].Ref != r.StartRef || snap.Atoms[r.EndIndex].Ref != r.EndRef {
			t.Fatalf("range %s refs %s→%s do not match indexes %d..%d", r.ID, r.StartRef, r.EndRef, r.StartIndex, r.EndIndex)
		}
		for j := r.StartIndex; j <= r.EndIndex; j++ {
			if snap.Atoms[j].Protected() {
				t.Fatalf("range %s contains protected atom %s", r.ID, snap.Atoms[j].Ref)
			}
		}
		if i > 0 && d.Ranges[i-1].EndIndex >= r.StartIndex {
			t.Fatalf("ranges %s and %s overlap or are unsorted", d.Ranges[i-1].ID, r.ID)
		}
	}
}

func fuzzRef(snap *Snapshot, n byte) string {
	return fmt.Sprintf("a%04d", int(n)%(len(snap.Atoms)+2)) // a0000 and past-the-end refs are unknown
}

// FuzzPlanInvariants drives a plan through any sequence of tool mutations
// (add, update, remove), Selection saves and persistence round trips, and
// checks after each step what seed 001 §Atoms and ranges requires: ranges
// never overlap and never contain protected atoms, boundaries never change
// in place, every mutation bumps the revision by one, a refused mutation
// changes nothing, what is persisted restores equal, and a plan with every
// summary written is committable.
func FuzzPlanInvariants(f *testing.F) {
	f.Add([]byte{0, 1, 3, 0, 4, 6, 1, 1, 0, 2, 1, 0, 3, 1, 16, 4, 0, 0}, "summary")
	f.Add([]byte{3, 1, 16, 1, 1, 0, 1, 2, 0, 0, 5, 9, 4, 0, 0, 2, 2, 0}, "")
	f.Add([]byte{0, 6, 8, 0, 9, 9, 0, 13, 14, 0, 11, 11, 3, 0, 17}, "s")
	snap := snapshotOf(f, fixture(f, "kinds"), "")
	f.Fuzz(func(t *testing.T, ops []byte, summary string) {
		// Summaries reach a plan only through JSON (tool parameters, the
		// workbench's bodies), so they are valid UTF-8.
		summary = strings.ToValidUTF8(summary, "\uFFFD")
		d := NewDraft("tx")
		for i := 0; i+2 < len(ops) && i < 60; i += 3 {
			k, x, y := ops[i]%5, ops[i+1], ops[i+2]
			prev := d
			var next *Draft
			var err error
			id := fmt.Sprintf("d%d", x%6)
			switch k {
			case 0:
				next, _, err = d.AddRange(snap, fuzzRef(snap, x), fuzzRef(snap, y), summary, "")
			case 1:
				s := summary
				if y%2 == 0 {
					s = ""
				}
				next, _, err = d.UpdateRange(id, &s, nil)
				if err == nil {
					if a, b := prev.Range(id), next.Range(id); a.StartIndex != b.StartIndex || a.EndIndex != b.EndIndex || strings.Join(a.EntryIDs, ",") != strings.Join(b.EntryIDs, ",") {
						t.Fatalf("update moved the boundaries of %s", id)
					}
				}
			case 2:
				next, err = d.RemoveRange(id)
			case 3:
				var runs []IndexSpan
				runs, err = ExpandSelection(snap, []SelectionSpan{{StartRef: fuzzRef(snap, x), EndRef: fuzzRef(snap, y)}}, []string{fuzzRef(snap, x+1)})
				if err == nil {
					var changed bool
					if next, changed = d.ReplaceRanges(snap, runs); !changed {
						if next != d {
							t.Fatalf("an unchanged selection returned another plan")
						}
						continue
					}
				}
			case 4:
				raw, merr := json.Marshal(d)
				if merr != nil {
					t.Fatal(merr)
				}
				back, ok := DecodeDraft(raw)
				if !ok {
					t.Fatalf("our draft fails the shape check: %s", raw)
				}
				again, _ := json.Marshal(back)
				if string(again) != string(raw) {
					t.Fatalf("draft round trip:\n%s\n%s", raw, again)
				}
				continue
			}
			if err != nil {
				if next != nil {
					t.Fatalf("op %d failed (%v) yet returned a plan", k, err)
				}
				continue
			}
			if next.Revision != prev.Revision+1 {
				t.Fatalf("op %d: revision %d → %d", k, prev.Revision, next.Revision)
			}
			checkPlan(t, snap, next)
			d = next
		}
		if len(d.Ranges) == 0 {
			return
		}
		filled := d
		for _, r := range d.Ranges {
			s := "written"
			filled, _, _ = filled.UpdateRange(r.ID, &s, nil)
		}
		if err := ValidateCommit(filled, snap); err != nil {
			t.Fatalf("a plan built by the tool and Selection is not committable once summarized: %v", err)
		}
	})
}

// FuzzExecute: the tool never fails whatever its parameters (errors are
// text), only plan_add/plan_update/plan_remove return a plan to append, and
// that plan keeps the invariants (seed 001 §External contracts, §Atoms and
// ranges).
func FuzzExecute(f *testing.F) {
	for _, c := range requestCases {
		f.Add([]byte(c.params))
	}
	for _, r := range []string{
		`{"request":{"action":"plan_add","start":"a0001","end":"a0006","summary":"x"}}`,
		`{"request":{"action":"plan_add","start":"a0006","end":"a0008"}}`,
		`{"request":{"action":"measure","candidates":[{"start":"a0001","end":"a0016"}]}}`,
		`{"request":{"action":"locate_search","pattern":"","source":"user","limit":-1e308}}`,
		`{"request":{"action":"inspect","page_size":1e308,"cursor":"eyJnIjotMX0="}}`,
		`{"request":{"action":"recall_read","block":"c0001","detail":"full"}}`,
	} {
		f.Add([]byte(r))
	}
	s := newMemSession(f, fixture(f, "kinds"))
	tx, err := NewTransaction(s.leaf, StartAgent, testNow, "fuzz0", nil)
	if err != nil {
		f.Fatal(err)
	}
	s.appendCustom(TransactionEntryType, tx)
	s.appendCustom(DraftEntryType, NewDraft(tx.ID))
	base := *s.env(nil, Restored{})
	snap := snapshotOf(f, s.file(), tx.AnchorEntryID)
	mutations := []string{string(actPlanAdd), string(actPlanUpdate), string(actPlanRemove)}
	f.Fuzz(func(t *testing.T, params []byte) {
		env := base
		env.Lock = &PlanningLock{}
		res := Execute(params, &env)
		if res.Text == "" {
			t.Fatalf("empty result for %s", params)
		}
		if res.Draft == nil {
			return
		}
		req, err := DecodeRequest(params)
		if err != nil || !slices.Contains(mutations, string(req.Action)) {
			t.Fatalf("%s returned a plan to append", params)
		}
		if res.Draft.Revision != 1 || res.Draft.TransactionID != tx.ID {
			t.Fatalf("plan revision %d of %q", res.Draft.Revision, res.Draft.TransactionID)
		}
		checkPlan(t, snap, res.Draft)
	})
}
