package midcompact

import (
	"slices"

	"github.com/pikit-dev/pikit/internal/pisession"
)

// CompactionPreparation is the part of Pi 1.6.0's compaction preparation
// (the `preparation` of session_before_compact) that midcompact rewrites:
// the messages Pi's summarizer reads, as history (MessagesToSummarize) and
// a split turn's prefix (TurnPrefixMessages, when IsSplitTurn), and the
// entry where the kept messages begin.
type CompactionPreparation struct {
	FirstKeptEntryID    string
	MessagesToSummarize []Message
	TurnPrefixMessages  []Message
	IsSplitTurn         bool
}

// ProjectCompaction rewrites Pi's compaction preparation so Pi's own
// summarizer works on the conversation as the model sees it (seed 001
// §Projection) and committed summaries outlive the compaction as far as Pi
// allows. blocks are the committed blocks active on branch (the current
// branch, root first); nowMs stands in for Date.now() in a wrapper.
//
//   - A block the cut would split (some of its entries before
//     FirstKeptEntryID, some from it on) is kept whole: the cut moves back
//     to the block's first entry and its messages leave the summarized
//     ones, so after the compaction the block still matches and its
//     summary still replaces it. The cut stays when that would leave
//     nothing to summarize, or when the block's messages are not the tail
//     of the summarized ones (Pi left some out); that block then fails
//     open, as a block a compaction swallows does.
//   - Blocks among the summarized messages are replaced by their summary
//     wrappers (as the `context` hook replaces them), so the summarizer
//     reads the summaries, not the originals; a wrapper stays on the side
//     (history or turn prefix) where its block began.
//
// changed is false when nothing applies (no blocks, no match, no split
// block); then p is returned as is. Moving the cut back turns a split turn
// whose prefix the move empties into a plain history compaction.
func ProjectCompaction(p CompactionPreparation, branch []pisession.Entry, blocks []Block, nowMs float64) (out CompactionPreparation, changed bool, err error) {
	if len(blocks) == 0 {
		return p, false, nil
	}
	out = p
	msgs := append(slices.Clone(p.MessagesToSummarize), p.TurnPrefixMessages...)
	keys := make([]string, len(msgs))
	for i := range msgs {
		if keys[i], err = MessageKey(&msgs[i]); err != nil {
			return p, false, err
		}
	}
	history := len(p.MessagesToSummarize) // msgs[:history] is history
	if entry, at := splitBlock(p.FirstKeptEntryID, branch, blocks, keys); entry != "" {
		out.FirstKeptEntryID, msgs, keys, changed = entry, msgs[:at], keys[:at], true
		history = min(history, at) // a prefix cut back to nothing is no split turn (below)
	}
	proj, src := projectSources(msgs, keys, blocks, nowMs)
	if len(proj.Applied) == 0 && !changed {
		return p, false, nil
	}
	out.MessagesToSummarize, out.TurnPrefixMessages = nil, nil
	for j, m := range proj.Messages {
		if src[j] < history {
			out.MessagesToSummarize = append(out.MessagesToSummarize, m)
		} else {
			out.TurnPrefixMessages = append(out.TurnPrefixMessages, m)
		}
	}
	if len(out.TurnPrefixMessages) == 0 {
		out.IsSplitTurn = false
	}
	return out, true, nil
}

// splitBlock finds a block the cut at firstKept splits and returns the
// block's first entry (the new cut) and the index in the summarized
// messages (keys) where the block begins; "" when none applies.
func splitBlock(firstKept string, branch []pisession.Entry, blocks []Block, keys []string) (entry string, at int) {
	pos := make(map[string]int, len(branch))
	for i := range branch {
		pos[branch[i].ID] = i
	}
	cut, ok := pos[firstKept]
	if !ok {
		return "", 0
	}
	for bi := range blocks {
		b := &blocks[bi]
		lo, hi := -1, -1
		for _, id := range b.EntryIDs {
			if i, ok := pos[id]; ok {
				if lo < 0 || i < lo {
					lo = i
				}
				hi = max(hi, i)
			}
		}
		if lo < 0 || lo >= cut || hi < cut {
			continue
		}
		// The block's messages before the cut are the tail of the
		// summarized messages, one per entry.
		n := 0
		for _, id := range b.EntryIDs {
			if i, ok := pos[id]; ok && i < cut {
				n++
			}
		}
		at := len(keys) - n
		if at <= 0 || n > len(b.MessageKeys) || !slices.Equal(keys[at:], b.MessageKeys[:n]) {
			return "", 0
		}
		return branch[lo].ID, at
	}
	return "", 0
}
