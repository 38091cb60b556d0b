package midcompact

import (
	"strconv"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
)

// NoticeLevel is a ui.notify level.
type NoticeLevel string

// The notify levels Pi accepts.
const (
	NoticeInfo    NoticeLevel = "info"
	NoticeWarning NoticeLevel = "warning"
	NoticeError   NoticeLevel = "error"
)

// Notice is one ui.notify call a command makes.
type Notice struct {
	Level NoticeLevel
	Text  string
}

// CheckStart decides whether `/midcompact:start` may proceed on the current
// branch (restored from it) at leaf: an active transaction is a warning,
// a missing leaf an error, else nil.
func CheckStart(r Restored, leaf string) *Notice {
	if r.Transaction != nil {
		return &Notice{NoticeWarning, msgAlreadyActive}
	}
	if leaf == "" {
		return &Notice{NoticeError, msgNoLeaf}
	}
	return nil
}

// PrepareAbort decides `/midcompact:abort`: refused while the agent holds
// the lock, a no-op notice without a transaction; otherwise it returns the
// anchor to navigate to (summarize:false, label "midcompact aborted" or the
// anchor's own label). Abort appends no midcompact entry (seed 001
// §Persistence); the navigation's label entry is Pi's own (see the
// package doc, "Abort and the resumed position"). After navigation report
// [AbortDone].
func PrepareAbort(r Restored, lock LockOwner) (anchor string, n *Notice) {
	if lock == LockAgent {
		return "", &Notice{NoticeWarning, uitext.MsgAbortAgentLocked}
	}
	if r.Transaction == nil {
		return "", &Notice{NoticeInfo, uitext.MsgNoTransaction}
	}
	return r.Transaction.AnchorEntryID, nil
}

// AbortNavigationLabel is the label the abort navigation sets on the anchor:
// its current label (existing, "" for none) or "midcompact aborted".
func AbortNavigationLabel(existing string) string {
	if existing != "" {
		return existing
	}
	return uitext.AbortLabel
}

// AbortDone is the notice after the abort navigation (cancelled or not).
func AbortDone(cancelled bool) Notice {
	if cancelled {
		return Notice{NoticeWarning, msgAbortCancelled}
	}
	return Notice{NoticeInfo, uitext.MsgAborted}
}

// PrepareCommit decides `/midcompact:commit`: refused while the agent holds
// the lock; a warning without a transaction; otherwise the plan is validated
// against a fresh snapshot of the anchor (snap) and the next state built.
// The caller then navigates to res.State's anchor (the transaction's
// anchorEntryId), appends res.State, sets res.Label on the new entry and,
// unless navigation was cancelled (a "commit cancelled" notice), notifies
// res.Notice.
func PrepareCommit(r Restored, lock LockOwner, snap *Snapshot, now time.Time) (*CommitResult, *Notice) {
	if lock == LockAgent {
		return nil, &Notice{NoticeWarning, uitext.MsgCommitAgentLocked}
	}
	if r.Transaction == nil {
		return nil, &Notice{NoticeWarning, uitext.MsgNoTransaction}
	}
	d := r.Draft
	if d == nil {
		d = NewDraft(r.Transaction.ID)
	}
	res, err := PlanCommit(r.Transaction, d, snap, now)
	if err != nil {
		return nil, &Notice{NoticeWarning, err.Error()}
	}
	return res, nil
}

// StartPrompt is the user message `/midcompact:start` sends (reference
// §5.2): the fixed first line, the telemetry header, the capabilities, the
// ownership rule, the optional user focus and the final state line for the
// start mode. Wording the reference elides is this package's own.
func StartPrompt(tx *Transaction, d *Draft, focus string) string {
	if d == nil {
		d = NewDraft(tx.ID)
	}
	lines := []string{
		uitext.StartPromptPrefix,
		telemetryHeader(tx, d),
		"Capabilities: midcompact inspect, measure, locate_ref, locate_search, plan_show, plan_read, plan_add, plan_update, plan_remove, recall_list and recall_read.",
		"The user owns the final compression decision. You may edit the plan, but you must not commit. Local character and image counts are not token estimates.",
	}
	if f := strings.TrimSpace(focus); f != "" {
		lines = append(lines, "User focus: "+f)
	}
	if tx.StartMode == StartUser {
		lines = append(lines, "FINAL STATE: USER MANUAL. The user selects ranges first. Acknowledge with OK only. Do not call any midcompact action; wait until the user asks you to continue the plan. On that later request, read the `midcompact` skill before doing any planning work, then call plan_show first.")
	} else {
		lines = append(lines, "FINAL STATE: AGENT DIRECT. The new plan is empty. Read the `midcompact` skill before doing any planning work, then call inspect first, propose ranges with summaries, and report the plan. Stop before commit.")
	}
	return strings.Join(lines, "\n\n")
}

// HandoffMessage is the hidden `midcompact-handoff` custom message content
// returned from before_agent_start while a transaction exists and the
// prompt is not the start prompt (reference §5.2); "" means none.
func HandoffMessage(tx *Transaction, d *Draft, prompt string) string {
	if tx == nil || strings.HasPrefix(prompt, uitext.StartPromptPrefix) {
		return ""
	}
	if d == nil {
		d = NewDraft(tx.ID)
	}
	return "An active midcompact transaction exists with a persisted plan.\n" +
		"Plan revision " + strconv.Itoa(d.Revision) + "; " + strconv.Itoa(len(d.Ranges)) + " existing range(s), which may have been created by the user.\n" +
		"If the current user request asks to continue midcompact, read the `midcompact` skill first, then call midcompact(request={action:\"plan_show\"}) before any other midcompact action. Treat the existing plan as the shared starting point. Infer from the request whether to preserve, refine, or extend it; ask only if materially ambiguous."
}
