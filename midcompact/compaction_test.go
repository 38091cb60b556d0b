package midcompact

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pisession"
)

// compactionFixture is the branch u1 a1 u2 a2 u3 a3 (entries e1…e6), a
// picker of its messages by entry number and a block over the messages of
// the given entries.
func compactionFixture(t *testing.T) (branch []pisession.Entry, msgs func(ids ...int) []Message, block func(ids ...int) Block) {
	t.Helper()
	var lines []string
	for i := 1; i <= 6; i++ {
		role, content := "user", fmt.Sprintf(`"question %d"`, (i+1)/2)
		if i%2 == 0 {
			role, content = "assistant", fmt.Sprintf(`[{"type":"text","text":"answer %d"}]`, i/2)
		}
		parent := "null"
		if i > 1 {
			parent = fmt.Sprintf(`"e%d"`, i-1)
		}
		lines = append(lines, fmt.Sprintf(`{"type":"message","id":"e%d","parentId":%s,"timestamp":"t","message":{"role":%q,"content":%s,"timestamp":%d}}`, i, parent, role, content, 100+i))
	}
	branch = branchOf(t, readSession(t, lines...), "")
	sc, err := BuildSessionContext(branch)
	if err != nil {
		t.Fatal(err)
	}
	all := sc.Messages
	msgs = func(ids ...int) []Message {
		var out []Message
		for _, i := range ids {
			out = append(out, all[i-1])
		}
		return out
	}
	block = func(ids ...int) Block {
		b := Block{ID: "c0001", Topic: "t", Summary: "SUMMARY of the block"}
		for _, i := range ids {
			k, err := MessageKey(&all[i-1])
			if err != nil {
				t.Fatal(err)
			}
			b.EntryIDs, b.MessageKeys = append(b.EntryIDs, fmt.Sprintf("e%d", i)), append(b.MessageKeys, k)
		}
		return b
	}
	return branch, msgs, block
}

// texts shows messages as their text, a summary wrapper as "wrapper <id>".
func texts(ms []Message) string {
	var out []string
	for _, m := range ms {
		if m.Role == "custom" {
			out = append(out, "wrapper "+m.BlockID)
			continue
		}
		s := m.ContentString
		for _, p := range m.Parts {
			s += p.Text
		}
		out = append(out, s)
	}
	return strings.Join(out, " | ")
}

// Seed 001 §Projection under Pi's compaction: the summarizer reads the
// committed summaries instead of the originals, and a block the cut would
// split stays whole on the kept side (unless that leaves nothing to
// summarize, or Pi's summarized messages do not end with the block's).
func TestProjectCompaction(t *testing.T) {
	branch, msgs, block := compactionFixture(t)
	for _, c := range []struct {
		name      string
		in        CompactionPreparation
		block     Block
		want      string // history ‖ turn prefix
		wantKept  string
		wantSplit bool
		changed   bool
	}{
		{"block among the summarized messages", CompactionPreparation{"e6", msgs(1, 2, 3, 4), msgs(5), true}, block(3, 4),
			"question 1 | answer 1 | wrapper c0001 ‖ question 3", "e6", true, true},
		{"a wrapper stays on the side where its block began", CompactionPreparation{"e6", msgs(1, 2, 3), msgs(4, 5), true}, block(3, 4),
			"question 1 | answer 1 | wrapper c0001 ‖ question 3", "e6", true, true},
		{"cut inside a block, in the turn prefix", CompactionPreparation{"e4", msgs(1, 2), msgs(3), true}, block(3, 4),
			"question 1 | answer 1 ‖ ", "e3", false, true},
		{"cut inside a block, in the history", CompactionPreparation{"e3", msgs(1, 2), nil, false}, block(2, 3),
			"question 1 ‖ ", "e2", false, true},
		{"cut inside a block that would leave nothing", CompactionPreparation{"e2", msgs(1), nil, false}, block(1, 2),
			"question 1 ‖ ", "e2", false, false},
		{"summarized part not the tail", CompactionPreparation{"e4", msgs(1, 2), nil, false}, block(3, 4),
			"question 1 | answer 1 ‖ ", "e4", false, false},
		{"block not summarized", CompactionPreparation{"e5", msgs(1, 2, 3, 4), nil, false}, block(5, 6),
			"question 1 | answer 1 | question 2 | answer 2 ‖ ", "e5", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, changed, err := ProjectCompaction(c.in, branch, []Block{c.block}, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := texts(out.MessagesToSummarize) + " ‖ " + texts(out.TurnPrefixMessages)
			if got != c.want || out.FirstKeptEntryID != c.wantKept || out.IsSplitTurn != c.wantSplit || changed != c.changed {
				t.Errorf("got %q kept %s split %v changed %v\nwant %q kept %s split %v changed %v",
					got, out.FirstKeptEntryID, out.IsSplitTurn, changed, c.want, c.wantKept, c.wantSplit, c.changed)
			}
		})
	}
	in := CompactionPreparation{"e6", msgs(1, 2), nil, false}
	if out, changed, err := ProjectCompaction(in, branch, nil, 0); changed || err != nil || texts(out.MessagesToSummarize) != texts(in.MessagesToSummarize) {
		t.Errorf("no blocks: changed %v, %v", changed, err)
	}
}

// TestProjectCompaction_Random: over random branches with committed
// blocks and random cuts, the rewritten preparation keeps every summarized
// message in order unless a wrapper of an active block stands for it, a
// moved cut lands on a block's first entry and splits no block, and a
// second rewrite of the result changes nothing.
func TestProjectCompaction_Random(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	tried, moved, wrapped := 0, 0, 0
	for range 400 {
		text := randomSession(t, r)
		f, err := pisession.Read(bytes.NewReader(text), nil)
		if err != nil {
			t.Fatal(err)
		}
		branch := branchOf(t, f, "")
		st := Restore(branch).State
		var msgEntries []pisession.Entry // the branch's message entries: one context message each, if nothing else is there
		for _, e := range branch {
			if e.Type == "message" {
				msgEntries = append(msgEntries, e)
			}
		}
		sc, err := BuildSessionContext(branch)
		if err != nil || st == nil || len(sc.Messages) != len(msgEntries) || len(msgEntries) < 3 {
			continue // compactions or custom messages: context and entries do not pair up
		}
		tried++
		cut := 1 + r.IntN(len(msgEntries)-1)
		split := r.IntN(cut + 1)
		in := CompactionPreparation{FirstKeptEntryID: msgEntries[cut].ID, MessagesToSummarize: sc.Messages[:split],
			TurnPrefixMessages: sc.Messages[split:cut], IsSplitTurn: split < cut}
		out, changed, err := ProjectCompaction(in, branch, st.Blocks, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := append(slices.Clone(out.MessagesToSummarize), out.TurnPrefixMessages...)
		k := 0
		for _, m := range got {
			if m.Role == "custom" && m.CustomType == "midcompact-summary" {
				wrapped++
				b := slices.IndexFunc(st.Blocks, func(b Block) bool { return b.ID == m.BlockID })
				if b < 0 {
					t.Fatalf("a wrapper of no active block: %s", m.Raw)
				}
				k += len(st.Blocks[b].MessageKeys)
				continue
			}
			for k < cut && string(sc.Messages[k].Raw) != string(m.Raw) {
				k++
			}
			if k == cut {
				t.Fatalf("output message out of order or unknown: %s\nsession:\n%s", m.Raw, text)
			}
			k++
		}
		if out.FirstKeptEntryID != in.FirstKeptEntryID {
			moved++
			newCut := slices.IndexFunc(msgEntries, func(e pisession.Entry) bool { return e.ID == out.FirstKeptEntryID })
			first := false
			for _, b := range st.Blocks {
				first = first || (len(b.EntryIDs) > 0 && b.EntryIDs[0] == out.FirstKeptEntryID)
			}
			if newCut < 0 || newCut >= cut || !first || !changed {
				t.Fatalf("cut moved from %s to %s (not back to a block's first entry)", in.FirstKeptEntryID, out.FirstKeptEntryID)
			}
		}
		if _, again, err := ProjectCompaction(out, branch, st.Blocks, 0); again || err != nil {
			t.Fatalf("a second rewrite changed the result again (%v)\nsession:\n%s", err, text)
		}
	}
	if tried < 50 || moved == 0 || wrapped == 0 {
		t.Errorf("%d usable random branches, %d moved cuts, %d wrappers: the cases were not reached", tried, moved, wrapped)
	}
}
