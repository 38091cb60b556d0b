package midcompact

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// Plan errors, matchable with errors.Is; the tool prints their exact texts
// (reference §1.4, v0.7 wording per the package doc).
var (
	ErrUnknownAtom      = errors.New("unknown atom ref")
	ErrReversedRange    = errors.New("range start after end")
	ErrProtectedAtom    = errors.New("range crosses a protected atom")
	ErrOverlappingRange = errors.New("range overlaps another range")
	ErrUnknownRange     = errors.New("unknown plan range")
)

// NewDraft is the empty plan written at start (revision 0).
func NewDraft(transactionID string) *Draft {
	return &Draft{Version: entryVersion, TransactionID: transactionID, Ranges: []Range{}}
}

// clone copies d deeply enough that mutating the copy leaves d alone.
func (d *Draft) clone() *Draft {
	c := *d
	c.Ranges = append([]Range(nil), d.Ranges...)
	return &c
}

// Range returns the range with id, or nil.
func (d *Draft) Range(id string) *Range {
	for i := range d.Ranges {
		if d.Ranges[i].ID == id {
			return &d.Ranges[i]
		}
	}
	return nil
}

// PendingCount is the number of ranges with an empty summary.
func (d *Draft) PendingCount() int {
	n := 0
	for i := range d.Ranges {
		if d.Ranges[i].Summary == "" {
			n++
		}
	}
	return n
}

// nextRangeID is `d` + (highest numeric id + 1); ids can be reused after the
// highest is removed (reference §3.2).
func (d *Draft) nextRangeID() string {
	highest := 0
	for i := range d.Ranges {
		if n, err := strconv.Atoi(strings.TrimPrefix(d.Ranges[i].ID, "d")); err == nil && n > highest {
			highest = n
		}
	}
	return "d" + strconv.Itoa(highest+1)
}

// AddRange returns a new draft with a range over atoms start..end
// (inclusive) of snap; boundaries are immutable afterwards (seed 001 §Atoms
// and ranges). An empty summary makes it pending.
func (d *Draft) AddRange(snap *Snapshot, startRef, endRef, summary, topic string) (*Draft, *Range, error) {
	s, e := snap.Atom(startRef), snap.Atom(endRef)
	if s == nil || e == nil {
		bad := startRef
		if s != nil {
			bad = endRef
		}
		if h := groupLabelHint(snap, bad); h != "" {
			return nil, nil, &toolError{msg: h, err: ErrUnknownAtom}
		}
		return nil, nil, &toolError{msg: "Unknown atom ref; run locate/inspect again against the current anchor snapshot.", err: ErrUnknownAtom}
	}
	if s.Index > e.Index {
		return nil, nil, &toolError{msg: "start must not occur after end.", err: ErrReversedRange}
	}
	for i := s.Index; i <= e.Index; i++ {
		if a := &snap.Atoms[i]; a.Protected() {
			return nil, nil, &toolError{msg: "Range crosses protected atom " + a.Ref + " (" + string(a.Kind) + "). Split the plan around it.", err: ErrProtectedAtom}
		}
	}
	for i := range d.Ranges {
		if r := &d.Ranges[i]; r.StartIndex <= e.Index && s.Index <= r.EndIndex {
			return nil, nil, &toolError{msg: "Range overlaps an existing plan range.", err: ErrOverlappingRange}
		}
	}
	r := newRange(snap, d.nextRangeID(), s.Index, e.Index, summary, topic)
	n := d.clone()
	n.Ranges = append(n.Ranges, r)
	n.sortRanges()
	n.Revision++
	return n, n.Range(r.ID), nil
}

// UpdateRange returns a new draft with the range's summary and/or topic
// changed (nil leaves a field alone; "" summary makes it pending, "" topic
// clears it).
func (d *Draft) UpdateRange(id string, summary, topic *string) (*Draft, *Range, error) {
	if d.Range(id) == nil {
		return nil, nil, unknownRange(id)
	}
	n := d.clone()
	r := n.Range(id)
	if summary != nil {
		r.Summary = *summary
	}
	if topic != nil {
		r.Topic = *topic
	}
	r.refreshReplacement()
	n.Revision++
	return n, r, nil
}

// RemoveRange returns a new draft without the range.
func (d *Draft) RemoveRange(id string) (*Draft, error) {
	if d.Range(id) == nil {
		return nil, unknownRange(id)
	}
	n := d.clone()
	n.Ranges = n.Ranges[:0:0]
	for _, r := range d.Ranges {
		if r.ID != id {
			n.Ranges = append(n.Ranges, r)
		}
	}
	n.Revision++
	return n, nil
}

func unknownRange(id string) error {
	return &toolError{msg: "Unknown plan range " + id + ".", err: ErrUnknownRange}
}

func (d *Draft) sortRanges() {
	sort.SliceStable(d.Ranges, func(i, j int) bool { return d.Ranges[i].StartIndex < d.Ranges[j].StartIndex })
}

// newRange measures atoms from..to of snap into a range.
func newRange(snap *Snapshot, id string, from, to int, summary, topic string) Range {
	r := Range{
		ID: id, StartRef: snap.Atoms[from].Ref, EndRef: snap.Atoms[to].Ref,
		StartIndex: from, EndIndex: to, Topic: topic, Summary: summary,
		EntryIDs: []string{}, MessageKeys: []string{},
		StartPreview: snap.Atoms[from].Preview(), EndPreview: snap.Atoms[to].Preview(),
	}
	var m Metrics
	for i := from; i <= to; i++ {
		a := &snap.Atoms[i]
		r.EntryIDs = append(r.EntryIDs, a.EntryIDs...)
		r.MessageKeys = append(r.MessageKeys, a.MessageKeys...)
		r.OriginalApproxTokens += a.ApproxTokens
		m.add(a.Metrics)
	}
	r.OriginalContentChars = m.ContentChars
	r.OriginalImageCount = m.ImageCount()
	r.OriginalImagePayloadBytes = m.ImagePayloadBytes()
	r.refreshReplacement()
	return r
}

// refreshReplacement recomputes the wrapper size and the legacy compressed
// token figure after a summary/topic change (reference §3.2).
func (r *Range) refreshReplacement() {
	r.ReplacementContentChars = replacementChars(r.Topic, r.Summary)
	r.CompressedApproxTokens = max(1, (jsLen(r.Topic+"\n"+r.Summary)+3)/4) + 40
}
