package tui

import (
	"github.com/pikit-dev/pikit/midcompact"
)

// SelectionAction is what a Selection key asks the extension to do.
type SelectionAction int

// The Selection actions.
const (
	SelectionNone  SelectionAction = iota // keep the overlay open
	SelectionSave                         // save the selection, then close
	SelectionClose                        // close without saving
)

// Selection overlay texts (reference §5.5). The hint line is this
// package's own.
const (
	SelectionTitle        = "Midcompact Selection"
	selectionHint         = "j/k move · Space/x select · K keep · g group · d clear run · PgUp/PgDn · s/Enter save · Esc/q close"
	msgKeepNeedsSelection = "K marks KEEP inside a selection; select the atom first."
)

// selectionChrome is the number of lines around the timeline: the two
// rules, the header, the message and the hint.
const selectionChrome = 5

// SelectionView is the Selection TUI's state (reference §5.5): a timeline
// of the anchor's atoms grouped by user message, a cursor, the selected
// atoms (to compress) and the atoms marked KEEP inside the selection. It
// starts with the current plan's atoms selected, so saving it unchanged
// keeps every range (and its summary). Protected atoms are never selected.
// Not safe for concurrent use.
type SelectionView struct {
	snap     *midcompact.Snapshot
	groups   []viewGroup
	selected map[int]bool
	keep     map[int]bool
	cursor   int
	top      int // first visible timeline line
	page     int // atoms per page at the last render
	dirty    bool
	message  string
	prev     *previews
	items    []int // timeline items: atom index, or -1-g for group g's header
	atomItem []int // atom index → item index
	offsets  []int // item i's first line at offsetsW; the last is the total
	offsetsW int
	header   string // Header's text; "" after a change
}

// NewSelectionView opens Selection on s with d's ranges selected.
func NewSelectionView(s *midcompact.Snapshot, d *midcompact.Draft) *SelectionView {
	v := &SelectionView{snap: s, groups: viewGroups(s), selected: map[int]bool{}, keep: map[int]bool{}, page: 1, prev: newPreviews(s)}
	v.atomItem = make([]int, len(s.Atoms))
	for gi, g := range v.groups {
		v.items = append(v.items, -1-gi)
		for i := g.start; i <= g.end; i++ {
			v.atomItem[i] = len(v.items)
			v.items = append(v.items, i)
		}
	}
	if d != nil {
		for _, r := range d.Ranges {
			for i := r.StartIndex; i <= r.EndIndex && i < len(s.Atoms); i++ {
				if i >= 0 && !s.Atoms[i].Protected() {
					v.selected[i] = true
				}
			}
		}
	}
	return v
}

// Dirty reports an unsaved change.
func (v *SelectionView) Dirty() bool { return v.dirty }

// Cursor is the index of the atom under the cursor.
func (v *SelectionView) Cursor() int { return v.cursor }

// HandleKey applies one pi-tui key: j/k/↑/↓ move; Space/x toggle the
// cursor's atom (a protected one refuses); K toggles KEEP on a selected
// atom; g/G add the cursor's group; d/D clear the selected run under the
// cursor; PgUp/PgDn/Home/End move by a page or to an end; s/S/Enter save;
// Esc/q save when dirty, else close.
func (v *SelectionView) HandleKey(key string) SelectionAction {
	n := len(v.snap.Atoms)
	v.message = ""
	switch NormalizeKey(key) {
	case "j", "down":
		v.move(1)
	case "k", "up":
		v.move(-1)
	case "pageDown":
		v.move(v.page)
	case "pageUp":
		v.move(-v.page)
	case "home":
		v.move(-n)
	case "end":
		v.move(n)
	case "space", " ", "x":
		v.toggle()
	case "K":
		if n > 0 && v.selected[v.cursor] {
			v.keep[v.cursor] = !v.keep[v.cursor]
			v.dirty, v.header = true, ""
		} else if n > 0 {
			v.message = msgKeepNeedsSelection
		}
	case "g", "G":
		v.addGroup()
	case "d", "D":
		v.clearRun()
	case "s", "S", "enter":
		return SelectionSave
	case "escape", "q":
		if v.dirty {
			return SelectionSave
		}
		return SelectionClose
	}
	return SelectionNone
}

func (v *SelectionView) move(d int) {
	if n := len(v.snap.Atoms); n > 0 {
		v.cursor = min(max(v.cursor+d, 0), n-1)
	}
}

func (v *SelectionView) toggle() {
	if len(v.snap.Atoms) == 0 {
		return
	}
	a := &v.snap.Atoms[v.cursor]
	if a.Protected() {
		v.message = "Protected atom " + a.Ref + " stays KEEP. Select its surrounding group instead."
		return
	}
	if v.selected[v.cursor] {
		delete(v.selected, v.cursor)
		delete(v.keep, v.cursor)
	} else {
		v.selected[v.cursor] = true
	}
	v.dirty, v.header = true, ""
}

func (v *SelectionView) addGroup() {
	for _, g := range v.groups {
		if v.cursor < g.start || v.cursor > g.end {
			continue
		}
		for i := g.start; i <= g.end; i++ {
			if !v.snap.Atoms[i].Protected() && !v.selected[i] {
				v.selected[i] = true
				v.dirty, v.header = true, ""
			}
		}
	}
}

func (v *SelectionView) clearRun() {
	if !v.selected[v.cursor] {
		return
	}
	from, to := v.cursor, v.cursor
	for from > 0 && v.selected[from-1] {
		from--
	}
	for to < len(v.snap.Atoms)-1 && v.selected[to+1] {
		to++
	}
	for i := from; i <= to; i++ {
		delete(v.selected, i)
		delete(v.keep, i)
	}
	v.dirty, v.header = true, ""
}

// Selection returns what a save sends to [ExpandSelection]: the runs of
// consecutive selected atoms and the refs marked KEEP.
func (v *SelectionView) Selection() (spans []midcompact.SelectionSpan, keepRefs []string) {
	spans, keepRefs = []midcompact.SelectionSpan{}, []string{}
	for i := 0; i < len(v.snap.Atoms); i++ {
		if !v.selected[i] {
			continue
		}
		j := i
		for j+1 < len(v.snap.Atoms) && v.selected[j+1] {
			j++
		}
		spans = append(spans, midcompact.SelectionSpan{StartRef: v.snap.Atoms[i].Ref, EndRef: v.snap.Atoms[j].Ref})
		i = j
	}
	for i := range v.snap.Atoms {
		if v.keep[i] {
			keepRefs = append(keepRefs, v.snap.Atoms[i].Ref)
		}
	}
	return spans, keepRefs
}

// Header is the selection summary line (SelectionHeader over the atoms
// that would be compressed: selected and not KEEP).
func (v *SelectionView) Header() string {
	if v.header != "" {
		return v.header
	}
	compress := map[int]bool{}
	for i := range v.selected {
		if !v.keep[i] {
			compress[i] = true
		}
	}
	v.header = midcompact.SelectionHeader(v.snap, compress)
	return v.header
}

// Render draws the overlay in at most height lines of w cells; only the
// visible part of the timeline is drawn.
func (v *SelectionView) Render(w, height int, st Style) []string {
	w = max(w, 20)
	rows := max(3, height-selectionChrome)
	v.page = max(1, rows/3)
	var lines []string
	if len(v.snap.Atoms) == 0 {
		lines = []string{"(no atoms at the anchor)"}
	} else {
		off := v.itemOffsets(w)
		k := v.atomItem[v.cursor]
		v.top = scrollTo(v.top, off[k], off[k+1]-1, rows, off[len(off)-1])
		lines = window(len(v.items), func(i int) int { return off[i] }, func(i int) []string { return v.drawItem(v.items[i], w, st) }, v.top, rows)
	}
	body := append([]string{fit(v.Header(), w)}, lines...)
	if v.message != "" {
		body = append(body, st.apply("warning", fit(v.message, w)))
	} else {
		body = append(body, "")
	}
	body = append(body, st.apply("dim", fit(selectionHint, w)))
	return frame(st, w, SelectionTitle, body)
}

// itemOffsets are the timeline items' first lines for width w (a group
// header is one line, an atom one plus up to two preview lines), computed
// once per width.
func (v *SelectionView) itemOffsets(w int) []int {
	if v.offsetsW == w && v.offsets != nil {
		return v.offsets
	}
	v.offsets, v.offsetsW = make([]int, len(v.items)+1), w
	for k, it := range v.items {
		h := 1
		if it >= 0 {
			switch _, cells := v.prev.get(it); {
			case cells == 0:
			case cells <= w-6:
				h = 2
			default:
				h = 3
			}
		}
		v.offsets[k+1] = v.offsets[k] + h
	}
	return v.offsets
}

// drawItem draws a group header (it < 0) or an atom with its preview.
func (v *SelectionView) drawItem(it, w int, st Style) []string {
	if it < 0 {
		g := v.groups[-1-it]
		return []string{st.apply("muted", fit("-- "+g.ref+" | "+g.label, w))}
	}
	a := &v.snap.Atoms[it]
	mark, state := "[ ]", "...."
	switch {
	case v.keep[it]:
		mark, state = "[K]", "KEEP"
	case v.selected[it]:
		mark, state = "[*]", "PLAN"
	}
	facts := atomFacts(a)
	if a.Protected() {
		facts += " · " + cantCompressLabel
	}
	cur := "  "
	if it == v.cursor {
		cur = "> "
	}
	line := fit(cur+mark+" "+state+" "+facts, w)
	if it == v.cursor {
		line = st.apply("accent", line)
	} else if state == "PLAN" {
		line = st.apply("success", line)
	}
	out := []string{line}
	text, _ := v.prev.get(it)
	for _, p := range wrapNormalized(text, w-6, 2) {
		out = append(out, st.apply("dim", "      "+p))
	}
	return out
}
