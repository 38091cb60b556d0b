package midcompact

import (
	"errors"
	"math"
	"strconv"
	"time"
)

// Exact user-facing texts of the transaction commands (reference §5.1).
const (
	msgAlreadyActive      = "A midcompact transaction is already active on this branch."
	msgNoLeaf             = "Cannot start midcompact without a session leaf."
	msgAbortCancelled     = "Midcompact abort cancelled by tree navigation."
	msgEmptyPlan          = "Plan is empty; nothing to commit."
	msgStartUnrecognized  = "Midcompact start cancelled: the dialog returned an unrecognized choice."
	commitRejectedPrefix  = "Midcompact commit rejected: "
	transactionIDAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
)

// ErrCommitRejected wraps every commit validation failure.
var ErrCommitRejected = errors.New("commit rejected")

// NewTransaction builds the `midcompact-transaction` payload for a start at
// leaf (the leaf before the entry is appended). now is the start time and
// random5 five characters of [a-z0-9] (the id is `tx-<now ms base36>-<5>`).
// usage is Pi's getContextUsage() (nil when it reported none); it is
// dropped unless its context window is finite and > 0, and tokens are
// rounded to ≥ 0 (reference §3.1).
func NewTransaction(leaf string, mode StartMode, now time.Time, random5 string, usage *AnchorUsage) (*Transaction, error) {
	if leaf == "" {
		return nil, errors.New(msgNoLeaf)
	}
	tx := &Transaction{
		Version:       entryVersion,
		ID:            "tx-" + strconv.FormatInt(now.UnixMilli(), 36) + "-" + random5,
		AnchorEntryID: leaf,
		StartedAt:     jsISOTime(now),
		StartMode:     mode,
	}
	if usage != nil && !math.IsInf(usage.ContextWindow, 0) && !math.IsNaN(usage.ContextWindow) && usage.ContextWindow > 0 {
		u := *usage
		u.ContextWindow = max(1, math.Round(u.ContextWindow))
		if u.Tokens != nil {
			t := max(0, math.Round(*u.Tokens))
			u.Tokens = &t
		}
		u.CapturedAt = tx.StartedAt
		tx.AnchorUsage = &u
	}
	return tx, nil
}

// StartNotice is the info text after a start.
func StartNotice(tx *Transaction) string {
	return "Midcompact started at anchor " + tx.AnchorEntryID + " (" + string(tx.StartMode) + "-first). " + usageSentence(tx.AnchorUsage)
}

// jsISOTime is Date.prototype.toISOString (UTC, milliseconds).
func jsISOTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// CommitResult is what a commit appends and reports once the session is
// back at the anchor: the new cumulative state, the tree label of its entry
// and the info notice.
type CommitResult struct {
	State  *State
	Label  string
	Notice string
}

// ValidateCommit checks a plan against a fresh snapshot of the anchor
// (seed 001 §Atoms and ranges); the first failure wins, in this order: an
// empty plan, then per range pending summary, unknown or reversed
// boundaries, a protected atom inside, then overlapping ranges. The error
// text is the user notice (`Midcompact commit rejected: …`, or the
// empty-plan warning); it wraps [ErrCommitRejected].
func ValidateCommit(d *Draft, snap *Snapshot) error {
	if d == nil || len(d.Ranges) == 0 {
		return &toolError{msg: msgEmptyPlan, err: ErrCommitRejected}
	}
	reject := func(msg string) error { return &toolError{msg: commitRejectedPrefix + msg, err: ErrCommitRejected} }
	for i := range d.Ranges {
		r := &d.Ranges[i]
		if r.Summary == "" {
			return reject("Range " + r.ID + " has an empty (pending) summary; commit rejected.")
		}
		s, e := snap.Atom(r.StartRef), snap.Atom(r.EndRef)
		if s == nil || e == nil {
			return reject("Range " + r.ID + " refers to an atom missing from the anchor snapshot.")
		}
		if s.Index > e.Index {
			return reject("Range " + r.ID + " has reversed boundaries.")
		}
		for k := s.Index; k <= e.Index; k++ {
			if snap.Atoms[k].Protected() {
				return reject("Range " + r.ID + " crosses protected atom " + snap.Atoms[k].Ref + ".")
			}
		}
	}
	for i := range d.Ranges {
		for j := i + 1; j < len(d.Ranges); j++ {
			a, b := &d.Ranges[i], &d.Ranges[j]
			if snap.Atom(a.StartRef).Index <= snap.Atom(b.EndRef).Index && snap.Atom(b.StartRef).Index <= snap.Atom(a.EndRef).Index {
				return reject("Ranges " + a.ID + " and " + b.ID + " overlap.")
			}
		}
	}
	return nil
}

// PlanCommit validates d against snap and builds the next state: the anchor
// branch's blocks copied, one new block per range (ids `c0001`… after the
// highest existing), and lastCommit (reference §3.3). It only computes; the
// caller navigates to the anchor, then appends State (never mutating an old
// state entry, seed 001 §Persistence) and sets Label on it.
func PlanCommit(tx *Transaction, d *Draft, snap *Snapshot, now time.Time) (*CommitResult, error) {
	if err := ValidateCommit(d, snap); err != nil {
		return nil, err
	}
	at := jsISOTime(now)
	st := &State{Version: entryVersion, CreatedAt: at}
	highest := 0
	if snap.AnchorState != nil {
		st.Blocks = append(st.Blocks, snap.AnchorState.Blocks...)
		for _, b := range snap.AnchorState.Blocks {
			if len(b.ID) > 1 && b.ID[0] == 'c' {
				if n, err := strconv.Atoi(b.ID[1:]); err == nil && n > highest {
					highest = n
				}
			}
		}
	}
	t := draftTotals(d)
	lc := &LastCommit{
		TransactionID: tx.ID, CommittedAt: at, AddedBlockIDs: []string{}, AddedRangeCount: len(d.Ranges),
		SelectedOriginalContentChars: t.orig, SelectedReplacementContentChars: t.repl,
		SelectedImageCount: t.images, SelectedImagePayloadBytes: t.payload, AnchorUsage: tx.AnchorUsage,
		SelectedOriginalApproxTokens: t.origApprox, SelectedCompressedApproxTokens: t.compApprox,
		EstimatedSavedTokens: max(0, t.origApprox-t.compApprox),
	}
	if u := tx.AnchorUsage; u != nil && u.Tokens != nil {
		p := max(0, *u.Tokens-float64(lc.EstimatedSavedTokens))
		pct := p / u.ContextWindow * 100
		lc.ProjectedTokens, lc.ProjectedPercent = &p, &pct
	}
	for i, r := range d.Ranges {
		id := "c" + pad4(highest+1+i)
		st.Blocks = append(st.Blocks, Block{
			ID: id, Topic: r.Topic, Summary: r.Summary, EntryIDs: r.EntryIDs, MessageKeys: r.MessageKeys, CreatedAt: at,
			Sizes: r.Sizes,
		})
		lc.AddedBlockIDs = append(lc.AddedBlockIDs, id)
	}
	st.LastCommit = lc
	label := "midcompact +" + strconv.Itoa(len(d.Ranges)) + " · " + strconv.Itoa(t.orig) + " → " + strconv.Itoa(t.repl) + " chars"
	if u := tx.AnchorUsage; u != nil && u.Percent != nil {
		label += " · anchor " + formatPercent(u.Percent) + "% [Pi]"
	}
	notice := "Midcompact committed: " + strconv.Itoa(len(d.Ranges)) + " new range(s), " + strconv.Itoa(t.orig) + " → " + strconv.Itoa(t.repl) + " content chars"
	if t.images > 0 {
		notice += " · " + strconv.Itoa(t.images) + " images"
	}
	notice += ". Original history retained; use recall for exact details."
	return &CommitResult{State: st, Label: label, Notice: notice}, nil
}

// pad4 formats n zero-padded to 4 digits (wider past 9999).
func pad4(n int) string {
	s := strconv.Itoa(n)
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}
