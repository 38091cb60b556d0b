package tui

import (
	"github.com/pikit-dev/pikit/internal/jstext"
	"github.com/pikit-dev/pikit/midcompact"
	"strconv"
)

// ReviewAction is what a Review key asks the extension to do; every action
// but ReviewNone closes the overlay, and after an edit the extension opens
// it again on the new plan (reference §5.5: the overlay loops).
type ReviewAction int

// The Review actions.
const (
	ReviewNone        ReviewAction = iota // keep the overlay open
	ReviewEditSummary                     // ctx.ui.editor on the selected range's summary
	ReviewEditTopic                       // ctx.ui.input on its topic
	ReviewRemove                          // ctx.ui.confirm, then remove it
	ReviewClose                           // close the overlay
)

// Review overlay texts (reference §5.5). The hint line is this package's
// own.
const (
	ReviewTitle       = "Midcompact Review"
	RemoveRangeTitle  = "Remove compression range?"
	reviewHint        = "n/p range · j/k scroll · PgUp/PgDn · Home/End · x expand · e summary · t topic · d remove · Esc/q close"
	reviewPendingText = "(pending summary)"
	reviewScrollPage  = 12
	reviewChrome      = 4 // the two rules, the headline and the hint
)

// ReviewView is the Review TUI's state (reference §5.5): a timeline where
// KEEP atoms are always shown and each range folds to one header line,
// the selected range expanded (topic, chars, wrapped summary, its atoms
// marked ┌│└). Not safe for concurrent use.
type ReviewView struct {
	snap      *midcompact.Snapshot
	draft     *midcompact.Draft
	selected  int // index into draft.Ranges; -1 when the plan is empty
	collapsed bool
	top       int
	rows      int // timeline rows at the last render
	follow    bool
	prev      *previews
	items     []int // timeline items: atom index (KEEP), or -1-r for range r
	rangeItem []int // range index → item index
}

// NewReviewView opens Review on s and d with the first range selected.
func NewReviewView(s *midcompact.Snapshot, d *midcompact.Draft) *ReviewView {
	v := &ReviewView{rows: 1}
	v.Reload(s, d)
	return v
}

// Reload puts a new snapshot and plan under the view (after an edit),
// keeping the selected range when it still exists, else the one at the
// same position.
func (v *ReviewView) Reload(s *midcompact.Snapshot, d *midcompact.Draft) {
	id := v.SelectedID()
	v.snap, v.draft = s, d
	v.prev = newPreviews(s)
	v.items = v.items[:0]
	v.rangeItem = make([]int, len(d.Ranges))
	for i := 0; i < len(s.Atoms); i++ {
		r := -1
		for k := range d.Ranges {
			if d.Ranges[k].StartIndex <= i && i <= d.Ranges[k].EndIndex {
				r = k
				break
			}
		}
		if r < 0 {
			v.items = append(v.items, i)
			continue
		}
		v.rangeItem[r] = len(v.items)
		v.items = append(v.items, -1-r)
		i = max(i, d.Ranges[r].EndIndex)
	}
	if i := v.rangeIndex(id); i >= 0 {
		v.selected = i
	} else {
		v.selected = min(max(v.selected, 0), len(d.Ranges)-1)
	}
	v.follow = true
}

func (v *ReviewView) rangeIndex(id string) int {
	for i := range v.draft.Ranges {
		if id != "" && v.draft.Ranges[i].ID == id {
			return i
		}
	}
	return -1
}

// Selected is the selected range, or nil when the plan is empty.
func (v *ReviewView) Selected() *midcompact.Range {
	if v.draft == nil || v.selected < 0 || v.selected >= len(v.draft.Ranges) {
		return nil
	}
	return &v.draft.Ranges[v.selected]
}

// SelectedID is the selected range's id ("" when none).
func (v *ReviewView) SelectedID() string {
	if r := v.Selected(); r != nil {
		return r.ID
	}
	return ""
}

// RemoveMessage is the remove confirmation's message: `d1: a0001 → a0002`.
func (v *ReviewView) RemoveMessage() string {
	r := v.Selected()
	if r == nil {
		return ""
	}
	return r.ID + ": " + r.StartRef + " → " + r.EndRef
}

// HandleKey applies one pi-tui key: n/p/→/← pick a range; ↑/↓/j/k scroll
// by one line, PgUp/PgDn by 12, Home/End to an end; x expands or collapses
// the selected range; e, t and d ask for the summary editor, the topic
// input and the remove confirmation (nothing without a range); Esc, Enter
// and q close.
func (v *ReviewView) HandleKey(key string) ReviewAction {
	switch NormalizeKey(key) {
	case "n", "right":
		v.pick(1)
	case "p", "left":
		v.pick(-1)
	case "j", "down":
		v.scroll(1)
	case "k", "up":
		v.scroll(-1)
	case "pageDown":
		v.scroll(reviewScrollPage)
	case "pageUp":
		v.scroll(-reviewScrollPage)
	case "home":
		v.top, v.follow = 0, false
	case "end":
		v.top, v.follow = 1<<30, false
	case "x":
		v.collapsed = !v.collapsed
	case "e":
		return v.ifRange(ReviewEditSummary)
	case "t":
		return v.ifRange(ReviewEditTopic)
	case "d":
		return v.ifRange(ReviewRemove)
	case "escape", "enter", "q":
		return ReviewClose
	}
	return ReviewNone
}

func (v *ReviewView) ifRange(a ReviewAction) ReviewAction {
	if v.Selected() == nil {
		return ReviewNone
	}
	return a
}

func (v *ReviewView) pick(d int) {
	if n := len(v.draft.Ranges); n > 0 {
		v.selected = min(max(v.selected+d, 0), n-1)
		v.follow = true
	}
}

func (v *ReviewView) scroll(d int) {
	v.top = max(0, v.top+d)
	v.follow = false
}

// Render draws the overlay in at most height lines of w cells; only the
// visible part of the timeline is drawn.
func (v *ReviewView) Render(w, height int, st Style) []string {
	w = max(w, 20)
	v.rows = max(3, height-reviewChrome)
	var lines []string
	if len(v.items) == 0 {
		lines = []string{"(no atoms at the anchor)"}
	} else {
		// Every item is one line but the selected range, which is as
		// tall as its drawing.
		sel := v.selectedItem()
		var open []string
		extra := 0
		if sel >= 0 {
			open = v.rangeLines(&v.draft.Ranges[v.selected], true, w, st)
			extra = len(open) - 1
		}
		offset := func(k int) int {
			if sel >= 0 && k > sel {
				return k + extra
			}
			return k
		}
		total := offset(len(v.items))
		if v.follow && sel >= 0 {
			v.top = scrollTo(v.top, offset(sel), offset(sel+1)-1, v.rows, total)
		}
		v.follow = false
		v.top = clampTop(v.top, v.rows, total)
		lines = window(len(v.items), offset, func(k int) []string {
			if k == sel {
				return open
			}
			return v.drawItem(v.items[k], w, st)
		}, v.top, v.rows)
	}
	body := append([]string{fit(v.draft.Headline(), w)}, lines...)
	body = append(body, st.apply("dim", fit(reviewHint, w)))
	return frame(st, w, ReviewTitle, body)
}

// selectedItem is the timeline item of the selected range (-1: none).
func (v *ReviewView) selectedItem() int {
	if v.selected < 0 || v.selected >= len(v.rangeItem) {
		return -1
	}
	return v.rangeItem[v.selected]
}

// drawItem draws a KEEP atom (it >= 0) or a folded range.
func (v *ReviewView) drawItem(it, w int, st Style) []string {
	if it < 0 {
		return v.rangeLines(&v.draft.Ranges[-1-it], -1-it == v.selected, w, st)
	}
	a := &v.snap.Atoms[it]
	line := "  KEEP " + atomFacts(a)
	if a.Protected() {
		line += " · " + cantCompressLabel
	}
	if p, _ := v.prev.get(it); p != "" {
		line += " · " + p
	}
	return []string{st.apply("muted", fit(line, w))}
}

// rangeLines is a range's header (`▸ d1 a→b · N atoms a→b chars −saved
// topic summary…`) and, when it is the selected one and not collapsed,
// its topic, chars, wrapped summary and atoms.
func (v *ReviewView) rangeLines(r *midcompact.Range, selected bool, w int, st Style) []string {
	open := selected && !v.collapsed
	arrow := "▸ "
	if open {
		arrow = "▾ "
	}
	cur := "  "
	if selected {
		cur = "> "
	}
	saved := r.OriginalContentChars - r.ReplacementContentChars
	savedText := "−" + strconv.Itoa(saved)
	if saved < 0 {
		savedText = "+" + strconv.Itoa(-saved)
	}
	summary := r.Summary
	if summary == "" {
		summary = reviewPendingText
	}
	head := cur + arrow + r.ID + " " + r.StartRef + "→" + r.EndRef + " · " + strconv.Itoa(r.EndIndex-r.StartIndex+1) + " atoms " +
		strconv.Itoa(r.OriginalContentChars) + "→" + strconv.Itoa(r.ReplacementContentChars) + " chars " + savedText
	if !open {
		if r.Topic != "" {
			head += " " + r.Topic
		}
		head += " " + jstext.Normalize(summary)
	}
	color := "text"
	switch {
	case selected:
		color = "accent"
	case r.Summary == "":
		color = "warning"
	}
	out := []string{st.apply(color, fit(head, w))}
	if !open {
		return out
	}
	topic := r.Topic
	if topic == "" {
		topic = "(none)"
	}
	out = append(out, fit("    topic: "+topic, w),
		fit("    chars: "+strconv.Itoa(r.OriginalContentChars)+" → "+strconv.Itoa(r.ReplacementContentChars)+" (summary wrapper)", w))
	if r.Summary == "" {
		out = append(out, st.apply("warning", "    "+reviewPendingText))
	} else {
		out = append(out, "    summary:")
		for _, l := range wrap(r.Summary, w-6, 0) {
			out = append(out, "      "+l)
		}
	}
	for i := r.StartIndex; i <= r.EndIndex && i < len(v.snap.Atoms); i++ {
		mark := "│"
		switch {
		case r.StartIndex == r.EndIndex:
			mark = "─"
		case i == r.StartIndex:
			mark = "┌"
		case i == r.EndIndex:
			mark = "└"
		}
		a := &v.snap.Atoms[i]
		line := "    " + mark + " " + atomFacts(a)
		if p, _ := v.prev.get(i); p != "" {
			line += " · " + p
		}
		out = append(out, st.apply("dim", fit(line, w)))
	}
	return out
}
