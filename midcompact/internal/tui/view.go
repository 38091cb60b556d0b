package tui

import (
	"github.com/pikit-dev/pikit/internal/jstext"
	"github.com/pikit-dev/pikit/midcompact"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// cantCompressLabel marks a protected atom in Selection and Review: user
// copy says "can't compress" where the tool says "protected" (reference
// §5.3–§5.6).
const cantCompressLabel = "can't compress"

// The terminal overlays (reference §5.5) are pure state machines here: a
// view takes pi-tui key names (HandleKey) and draws itself for a width and
// a height in terminal cells (Render). The extension shows them through
// piext's remote component and performs what a key asks for (save, the
// summary editor, the topic input, the remove confirmation).

// Style colours a piece of text by a theme colour name ("accent", "muted",
// "warning", "success", "dim"); nil draws plain text.
type Style func(color, text string) string

func (st Style) apply(color, text string) string {
	if st == nil || text == "" {
		return text
	}
	return st(color, text)
}

// NormalizeKey maps the key names of pi-tui's parseKey to the overlays'
// names: "shift+g" (Kitty keyboard protocol) is "G" like the legacy
// terminal's "G"; everything else is unchanged.
func NormalizeKey(key string) string {
	if rest, ok := strings.CutPrefix(key, "shift+"); ok && len(rest) == 1 && rest[0] >= 'a' && rest[0] <= 'z' {
		return strings.ToUpper(rest)
	}
	return key
}

// cellWidth is the number of terminal cells s takes (East Asian wide and
// fullwidth runes take two, combining marks and controls none).
func cellWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeCells(r)
	}
	return n
}

func runeCells(r rune) int {
	switch {
	case r < 0x20 || r == 0x7f:
		return 0
	case r < 0x300: // below the combining marks: one cell
		return 1
	case unicode.Is(unicode.Mn, r):
		return 0
	case r < 0x1100:
		return 1
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// fitsIn reports whether s takes at most w cells, reading no further
// than needed.
func fitsIn(s string, w int) bool {
	used := 0
	for _, r := range s {
		if used += runeCells(r); used > w {
			return false
		}
	}
	return true
}

// fit cuts s to at most w cells, ending with "…" when it was cut; it
// reads s only up to the cut.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	used, cut := 0, -1
	for i, r := range s {
		c := runeCells(r)
		if cut < 0 && used+c > w-1 {
			cut = i // where "…" goes if s does not fit
		}
		if used += c; used > w {
			return s[:cut] + "…"
		}
	}
	return s
}

// wrap breaks s (whitespace normalised) into lines of at most w cells,
// at spaces where it can; at most max lines, the last ending with "…"
// when text was left over (max <= 0: no limit).
func wrap(s string, w, max int) []string { return wrapNormalized(jstext.Normalize(s), w, max) }

// wrapNormalized is wrap on text already normalised (an atom preview).
func wrapNormalized(s string, w, max int) []string {
	if s == "" || w <= 0 {
		return nil
	}
	var lines []string
	for s != "" {
		if max > 0 && len(lines) == max-1 {
			lines = append(lines, fit(s, w))
			return lines
		}
		if fitsIn(s, w) {
			lines = append(lines, s)
			break
		}
		cut, used, lastSpace := 0, 0, -1
		for i, r := range s {
			c := runeCells(r)
			if used+c > w {
				break
			}
			if r == ' ' {
				lastSpace = i
			}
			used += c
			cut = i + utf8.RuneLen(r)
		}
		if lastSpace > 0 {
			cut = lastSpace
		}
		if cut == 0 { // one rune wider than w
			_, size := utf8.DecodeRuneInString(s)
			cut = size
		}
		lines = append(lines, s[:cut])
		s = strings.TrimLeft(s[cut:], " ")
	}
	return lines
}

// frame draws a titled box body: the top rule with the title, the lines,
// the bottom rule. Every line is cut to w cells.
func frame(st Style, w int, title string, body []string) []string {
	out := make([]string, 0, len(body)+2)
	top := "── " + title + " "
	out = append(out, st.apply("borderAccent", fit(top+strings.Repeat("─", max(0, w-cellWidth(top))), w)))
	for _, l := range body {
		out = append(out, l)
	}
	out = append(out, st.apply("borderAccent", strings.Repeat("─", max(1, w))))
	return out
}

// window draws the lines [top, top+rows) of a list of n items where item
// i starts at line offset(i) (offset(n) is the total) and is drawn by
// draw(i). Only the visible items are drawn and the first one is found by
// binary search, so a key costs the same on a 15 MB anchor as on a small
// one.
func window(n int, offset func(i int) int, draw func(i int) []string, top, rows int) []string {
	i := sort.Search(n, func(i int) bool { return offset(i+1) > top })
	skip := top - offset(min(i, n))
	var out []string
	for ; i < n && len(out) < rows; i++ {
		ls := draw(i)
		if skip > 0 {
			ls = ls[min(skip, len(ls)):]
			skip = 0
		}
		out = append(out, ls[:min(len(ls), rows-len(out))]...)
	}
	return out
}

// previews caches each atom's preview (Atom.Preview: normalised,
// middle-truncated to 700) and its width in cells, computed once per atom.
type previews struct {
	snap  *midcompact.Snapshot
	text  []string
	cells []int
	done  []bool
}

func newPreviews(s *midcompact.Snapshot) *previews {
	return &previews{snap: s, text: make([]string, len(s.Atoms)), cells: make([]int, len(s.Atoms)), done: make([]bool, len(s.Atoms))}
}

func (p *previews) get(i int) (string, int) {
	if !p.done[i] {
		p.text[i] = p.snap.Atoms[i].Preview()
		p.cells[i] = cellWidth(p.text[i])
		p.done[i] = true
	}
	return p.text[i], p.cells[i]
}

// scrollTo returns the first visible line so that [from, to] shows in a
// window of rows lines starting at top (as much of it as fits, from first).
func scrollTo(top, from, to, rows, total int) int {
	if rows <= 0 {
		return 0
	}
	if to-from+1 > rows {
		to = from + rows - 1
	}
	if from < top {
		top = from
	}
	if to >= top+rows {
		top = to - rows + 1
	}
	return clampTop(top, rows, total)
}

func clampTop(top, rows, total int) int {
	if top > total-rows {
		top = total - rows
	}
	return max(0, top)
}

// atomFacts is `ref kind N chars[ · I image(s)][ · tools: a, b]`.
func atomFacts(a *midcompact.Atom) string {
	s := a.Ref + " " + string(a.Kind) + " " + strconv.Itoa(a.Metrics.ContentChars) + " chars"
	if n := a.Metrics.ImageCount(); n > 0 {
		s += " · " + strconv.Itoa(n) + " image(s)"
	}
	if len(a.ToolNames) > 0 {
		s += " · tools: " + strings.Join(a.ToolNames, ", ")
	}
	return s
}

// viewGroup is a Selection/Review display group, labelled as the tool's
// inventory labels it ([Snapshot.Groups]: from g0001, the prefix group
// included), so a label the user sees is the one the Agent sees.
type viewGroup struct {
	ref, label string
	start, end int
}

func viewGroups(s *midcompact.Snapshot) []viewGroup {
	gs := s.Groups()
	out := make([]viewGroup, len(gs))
	for i, g := range gs {
		out[i] = viewGroup{ref: g.Ref, label: g.Label, start: g.Start, end: g.End}
	}
	return out
}
