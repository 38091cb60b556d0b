package midcompact

import (
	"errors"

	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
)

// ToolEnv is what one tool call sees of the session and the runtime. The
// piext tool fills it from `ctx.sessionManager` and the extension's
// runtime; [Execute] reads it and never writes the session.
type ToolEnv struct {
	// Branch is the current branch, root → leaf (getBranch()).
	Branch []pisession.Entry
	// Lookup finds any entry of the session tree (getEntries()).
	Lookup EntryLookup
	// AnchorBranch returns the branch root → anchorEntryId (required for
	// every action but recall).
	AnchorBranch func(anchorEntryID string) ([]pisession.Entry, error)
	// Memory is the runtime's last known state, transaction and draft,
	// used when the branch has none (reference §1.3 steps 3–4).
	Memory Restored
	// Lock is the runtime's planning lock; the call takes it for the agent.
	Lock *PlanningLock
	// NowMs stands in for Date.now() in the snapshot projection.
	NowMs float64
}

// ToolResult is one call's outcome. Text is the tool result text (errors
// are `Error: <message>`, the tool never fails). Draft is non-nil after a
// plan mutation: the caller appends it as a `midcompact-draft` entry and
// refreshes the footer status. Warning, when set, goes to ui.notify.
type ToolResult struct {
	Text        string
	Draft       *Draft
	Transaction *Transaction
	Warning     string
}

// Execute runs one midcompact tool call in the upstream dispatch order
// (reference §1.3): field backstop; recall (no transaction, no lock);
// transaction and draft restore; the agent lock; a fresh anchor snapshot;
// the action. The tool never starts or commits a transaction (seed 001
// §External contracts).
func Execute(params []byte, env *ToolEnv) ToolResult {
	req, err := DecodeRequest(params)
	if err != nil {
		return errorResult(err)
	}
	switch req.Action {
	case actRecallList:
		return ToolResult{Text: RecallList(currentState(env), req.Pattern, clampInt(req.Limit, recallListDefault, 1, recallListMax))}
	case ActRecallRead:
		text, err := RecallRead(currentState(env), req.Block, req.Detail == "full", env.Lookup)
		if err != nil {
			return errorResult(err)
		}
		return ToolResult{Text: text}
	}
	restored := Restore(env.Branch)
	tx, draft := restored.Transaction, restored.Draft
	if tx == nil {
		tx = env.Memory.Transaction
	}
	if tx == nil {
		return ToolResult{Text: uitext.MsgToolNoTransaction}
	}
	if draft == nil || draft.TransactionID != tx.ID {
		draft = env.Memory.Draft
	}
	if draft == nil || draft.TransactionID != tx.ID {
		draft = NewDraft(tx.ID)
	}
	if env.Lock != nil && !env.Lock.AcquireAgent() {
		return ToolResult{Text: uitext.MsgToolBlocked, Warning: uitext.NoticeToolBlocked}
	}
	if env.AnchorBranch == nil {
		return errorResult(errors.New("midcompact: no anchor branch source"))
	}
	branch, err := env.AnchorBranch(tx.AnchorEntryID)
	if err != nil && !errors.Is(err, pisession.ErrMissingParent) {
		return errorResult(err)
	}
	snap, err := NewSnapshot(branch, env.NowMs)
	if err != nil {
		return errorResult(err)
	}
	res := ToolResult{Transaction: tx}
	res.Text, res.Draft, err = runAction(req, snap, tx, draft)
	if err != nil {
		return errorResult(err)
	}
	return res
}

func runAction(req *Request, snap *Snapshot, tx *Transaction, d *Draft) (string, *Draft, error) {
	switch req.Action {
	case actInspect:
		return FormatInventory(snap, tx, req.PageSize, req.Cursor), nil, nil
	case actMeasure:
		text, err := measure(snap, req.Candidates)
		return text, nil, err
	case actLocateRef:
		text, err := LocateRef(snap, req.Ref, req.Detail == "full")
		return text, nil, err
	case actLocateSearch:
		return LocateSearch(snap, SearchFilter{
			Pattern: req.Pattern, Source: req.Source, ToolName: req.ToolName, Newest: req.Direction == "newest",
			Limit: clampInt(req.Limit, locateDefaultHits, 1, locateDefaultHits),
		}), nil, nil
	case actPlanShow:
		return PlanShow(snap, tx, d), nil, nil
	case actPlanRead:
		text, err := PlanRead(snap, tx, d, req.RangeID)
		return text, nil, err
	case actPlanAdd:
		n, r, err := d.AddRange(snap, req.Start, req.End, deref(req.Summary), deref(req.Topic))
		if err != nil {
			return "", nil, err
		}
		return MutationText(snap, n, "added", r, r.ID), n, nil
	case actPlanUpdate:
		n, r, err := d.UpdateRange(req.RangeID, req.Summary, req.Topic)
		if err != nil {
			return "", nil, err
		}
		return MutationText(snap, n, "updated", r, r.ID), n, nil
	case actPlanRemove:
		n, err := d.RemoveRange(req.RangeID)
		if err != nil {
			return "", nil, err
		}
		return MutationText(snap, n, "removed", nil, req.RangeID), n, nil
	}
	return "", nil, badRequest("unhandled action " + string(req.Action) + ".")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// currentState is the state of the current branch, else the runtime's.
func currentState(env *ToolEnv) *State {
	if s := Restore(env.Branch).State; s != nil {
		return s
	}
	return env.Memory.State
}

// errorResult is `Error: <message>`; a *toolError contributes its exact
// text.
func errorResult(err error) ToolResult {
	return ToolResult{Text: "Error: " + err.Error()}
}
