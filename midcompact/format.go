package midcompact

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// formatTokens writes a token count as the upstream does: ≥1e6 → `1.2M`,
// ≥1e3 → `70k` (one decimal, rounded half up, `.0` dropped), else an
// integer; nil → `?` (reference §1.4).
func formatTokens(v *float64) string {
	if v == nil || math.IsNaN(*v) {
		return "?"
	}
	n := *v
	switch {
	case n >= 1e6:
		return trimZero(toFixed1(n/1e6)) + "M"
	case n >= 1e3:
		return trimZero(toFixed1(n/1e3)) + "k"
	}
	return strconv.FormatFloat(math.Round(n), 'f', -1, 64)
}

// formatPercent is a percent with one decimal, `.0` dropped; nil → `?`.
func formatPercent(v *float64) string {
	if v == nil || math.IsNaN(*v) {
		return "?"
	}
	return trimZero(toFixed1(*v))
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// toFixed1 is JS Number.prototype.toFixed(1): the exact binary value
// rounded to one decimal, ties away from zero.
func toFixed1(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= 1e21 {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	neg := x < 0
	s := strconv.FormatFloat(math.Abs(x), 'f', 60, 64) // exact for any tie
	dot := strings.IndexByte(s, '.')
	intPart, frac := s[:dot], s[dot+1:]
	tenths := int(frac[0] - '0')
	up := frac[1] >= '5'
	n, _ := strconv.ParseInt(intPart, 10, 64)
	v := n*10 + int64(tenths)
	if up {
		v++
	}
	out := strconv.FormatInt(v/10, 10) + "." + strconv.FormatInt(v%10, 10)
	if neg && v != 0 {
		out = "-" + out
	}
	return out
}

// telemetryHeader is the three-line awareness header of plan_show,
// plan_read and the start prompt (reference §1.4; `plan:` is the v0.7
// wording, package doc).
func telemetryHeader(tx *Transaction, d *Draft) string {
	var b strings.Builder
	b.WriteString("Context awareness (Pi reported; informational, not a target):\n")
	if u := tx.AnchorUsage; u != nil {
		cw := u.ContextWindow
		b.WriteString("anchor: " + formatTokens(u.Tokens) + " / " + formatTokens(&cw) + " (" + formatPercent(u.Percent) + "%) [Pi reported]\n")
	} else {
		b.WriteString("anchor: Pi context usage unavailable [Pi reported; not derived from local char counts].\n")
	}
	t := draftTotals(d)
	b.WriteString("plan: " + strconv.Itoa(len(d.Ranges)) + " range(s) · " + strconv.Itoa(t.orig) + " → " +
		strconv.Itoa(t.repl) + " content chars · " + strconv.Itoa(t.images) + " images (" +
		strconv.Itoa(t.payload) + " payload bytes) · " + strconv.Itoa(d.PendingCount()) + " pending summary")
	return b.String()
}

// totals are a plan's summed factual sizes.
type totals struct{ orig, repl, images, payload, origApprox, compApprox int }

func draftTotals(d *Draft) totals {
	var t totals
	for i := range d.Ranges {
		r := &d.Ranges[i]
		t.orig += r.OriginalContentChars
		t.repl += r.ReplacementContentChars
		t.images += r.OriginalImageCount
		t.payload += r.OriginalImagePayloadBytes
		t.origApprox += r.OriginalApproxTokens
		t.compApprox += r.CompressedApproxTokens
	}
	return t
}

// usageSentence is the anchor part of the start notice.
func usageSentence(u *AnchorUsage) string {
	if u == nil {
		return "Anchor context usage unavailable [Pi reported]."
	}
	cw := u.ContextWindow
	return "Anchor context " + formatTokens(u.Tokens) + "/" + formatTokens(&cw) + " (" + formatPercent(u.Percent) + "%) [Pi reported]."
}

// sprintfInts fills the %d verbs of a fixed message.
func sprintfInts(format string, a ...int) string {
	args := make([]any, len(a))
	for i, v := range a {
		args[i] = v
	}
	return fmt.Sprintf(format, args...)
}
