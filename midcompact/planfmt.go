package midcompact

import (
	"strings"
)

// Plan output bounds (reference §1.2, §1.4).
const (
	planShowBudget   = 12_000
	planReadBudget   = 40_000
	summaryBriefCap  = 500
	endpointReadCap  = 700
	planShowOverflow = "Output budget reached: showed %d of %d range(s). Use plan_read with range_id to inspect one range."
)

// Headline is the plan's first line, `Plan vN: …` (v0.7 wording of v0.6's
// `Draft vN`), as the tools and the Review overlay show it.
func (d *Draft) Headline() string {
	if len(d.Ranges) == 0 {
		return "Plan v" + itoa(d.Revision) + ": no compression ranges."
	}
	state := "ready for review"
	if p := d.PendingCount(); p > 0 {
		state = itoa(p) + " pending summary"
	}
	return "Plan v" + itoa(d.Revision) + ": " + itoa(len(d.Ranges)) + " range(s) (" + state + ")."
}

// endpoint is the text shown for a range boundary: the current atom's full
// text when the ref still resolves, else the stored preview, else the ref.
func endpoint(s *Snapshot, ref, stored string, limit int) string {
	if s != nil {
		if a := s.Atom(ref); a != nil {
			return truncateMiddle(a.FullText, limit)
		}
	}
	if stored != "" {
		return truncateMiddle(stored, limit)
	}
	return ref
}

// formatRange renders one range; summaryCap < 0 keeps the whole summary.
func formatRange(s *Snapshot, r *Range, endCap, summaryCap int) string {
	head := r.ID + ": " + r.StartRef + " → " + r.EndRef
	if r.Topic != "" {
		head += " | " + truncateMiddle(r.Topic, endpointCap)
	}
	if r.Summary == "" {
		head += " [pending summary]"
	} else {
		head += " [summarized]"
	}
	summary := "<pending>"
	if r.Summary != "" {
		summary = r.Summary
		if summaryCap >= 0 {
			summary = truncateMiddle(r.Summary, summaryCap)
		}
	}
	return strings.Join([]string{
		head,
		"from: " + endpoint(s, r.StartRef, r.StartPreview, endCap),
		"to: " + endpoint(s, r.EndRef, r.EndPreview, endCap),
		"summary: " + summary,
		"metrics: " + itoa(r.OriginalContentChars) + " → " + itoa(r.ReplacementContentChars) + " content chars · " +
			itoa(r.OriginalImageCount) + " images (" + itoa(r.OriginalImagePayloadBytes) + " payload bytes)",
	}, "\n")
}

// PlanShow is the telemetry header, the plan headline and every range in
// brief, within a 12,000-unit budget; it is read-only.
func PlanShow(s *Snapshot, tx *Transaction, d *Draft) string {
	out := telemetryHeader(tx, d) + "\n\n" + d.Headline()
	for i := range d.Ranges {
		block := formatRange(s, &d.Ranges[i], endpointCap, summaryBriefCap)
		if jsLen(out)+2+jsLen(block) > planShowBudget {
			return out + "\n\n" + sprintfInts(planShowOverflow, i, len(d.Ranges))
		}
		out += "\n\n" + block
	}
	return out
}

// PlanRead is the telemetry header and one range with 700-unit endpoints
// and its whole summary, middle-truncated only past the 40,000-unit budget.
func PlanRead(s *Snapshot, tx *Transaction, d *Draft, id string) (string, error) {
	r := d.Range(id)
	if r == nil {
		return "", unknownRange(id)
	}
	head := telemetryHeader(tx, d) + "\n\n"
	out := head + formatRange(s, r, endpointReadCap, -1)
	if jsLen(out) > planReadBudget {
		probe := *r
		probe.Summary = "x"
		fixed := jsLen(head+formatRange(s, &probe, endpointReadCap, -1)) - 1
		out = head + formatRange(s, r, endpointReadCap, max(32, planReadBudget-fixed))
	}
	return out, nil
}

// MutationText reports a plan change: `Plan vN: <verb> <id> · K range(s) ·
// P pending summary.` and, except for removals, the range in brief.
func MutationText(s *Snapshot, d *Draft, verb string, r *Range, id string) string {
	out := "Plan v" + itoa(d.Revision) + ": " + verb + " " + id + " · " + itoa(len(d.Ranges)) + " range(s) · " + itoa(d.PendingCount()) + " pending summary."
	if r != nil {
		out += "\n" + formatRange(s, r, endpointCap, summaryBriefCap)
	}
	return out
}
