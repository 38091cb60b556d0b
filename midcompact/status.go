package midcompact

import "strconv"

// StatusText is `/midcompact:status` (reference §5.1): with a transaction,
// the plan_show text plus `Mode: <agent|user>-first · lock: <owner>`; else
// with committed blocks on the branch, their count and sizes; else that
// there is neither. snap may be nil when the anchor cannot be rebuilt
// (endpoints then fall back to stored previews).
func StatusText(r Restored, snap *Snapshot, lock LockOwner) string {
	if tx := r.Transaction; tx != nil {
		d := r.Draft
		if d == nil {
			d = NewDraft(tx.ID)
		}
		return PlanShow(snap, tx, d) + "\nMode: " + string(tx.StartMode) + "-first · lock: " + string(lock)
	}
	if s := r.State; s != nil && len(s.Blocks) > 0 {
		orig, repl := 0, 0
		for _, b := range s.Blocks {
			orig += b.OriginalContentChars
			repl += b.ReplacementContentChars
		}
		return "Midcompact active on this branch: " + strconv.Itoa(len(s.Blocks)) + " block(s), " + strconv.Itoa(orig) + " → " +
			strconv.Itoa(repl) + " content chars. Original history remains recallable."
	}
	return "No active transaction and no active midcompact blocks on this branch."
}

// FooterStatus is the `midcompact` status-bar text while a transaction
// exists: `MC planning · N ranges[ · P pending] · X chars[ · UI editing|
// · Agent editing]`; "" means clear it (reference §3.5).
func FooterStatus(tx *Transaction, d *Draft, lock LockOwner) string {
	if tx == nil {
		return ""
	}
	if d == nil {
		d = NewDraft(tx.ID)
	}
	s := "MC planning · " + strconv.Itoa(len(d.Ranges)) + " ranges"
	if p := d.PendingCount(); p > 0 {
		s += " · " + strconv.Itoa(p) + " pending"
	}
	s += " · " + strconv.Itoa(draftTotals(d).orig) + " chars"
	switch lock {
	case LockUI:
		s += " · UI editing"
	case LockAgent:
		s += " · Agent editing"
	}
	return s
}
