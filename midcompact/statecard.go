package midcompact

import "strings"

// StateCardLines renders a `midcompact-state` entry for the session tree
// (reference §3.5): a headline `✓ MIDCOMPACT · +N ranges · K active · X → Y
// content chars[ · I images]`, a detail line `[anchor P% [Pi reported] · ]a
// → b chars · n images` over all active blocks, and, expanded, each block
// the commit added (`c0001 · topic · a → b chars`, then its summary) and
// the recall reminder. Styling (dim, colours) is the renderer's.
func StateCardLines(s *State, expanded bool) []string {
	lc := s.LastCommit
	if lc == nil {
		lc = &LastCommit{}
	}
	head := "✓ MIDCOMPACT · +" + itoa(lc.AddedRangeCount) + " ranges · " + itoa(len(s.Blocks)) + " active · " +
		itoa(lc.SelectedOriginalContentChars) + " → " + itoa(lc.SelectedReplacementContentChars) + " content chars"
	if lc.SelectedImageCount > 0 {
		head += " · " + itoa(lc.SelectedImageCount) + " images"
	}
	orig, repl, images := 0, 0, 0
	for _, b := range s.Blocks {
		orig += b.OriginalContentChars
		repl += b.ReplacementContentChars
		images += b.OriginalImageCount
	}
	detail := itoa(orig) + " → " + itoa(repl) + " chars · " + itoa(images) + " images"
	if u := lc.AnchorUsage; u != nil && u.Percent != nil {
		detail = "anchor " + formatPercent(u.Percent) + "% [Pi reported] · " + detail
	}
	lines := []string{head, detail}
	if !expanded {
		return lines
	}
	added := map[string]bool{}
	for _, id := range lc.AddedBlockIDs {
		added[id] = true
	}
	for _, b := range s.Blocks {
		if !added[b.ID] {
			continue
		}
		title := []string{b.ID}
		if b.Topic != "" {
			title = append(title, b.Topic)
		}
		title = append(title, itoa(b.OriginalContentChars)+" → "+itoa(b.ReplacementContentChars)+" chars")
		lines = append(lines, strings.Join(title, " · "), b.Summary)
	}
	return append(lines, "Original history retained; use midcompact recall when exact details are needed.")
}
