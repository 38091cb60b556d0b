package extension

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"time"

	"github.com/pikit-dev/pikit/internal/strictjson"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/piext"
)

// rpcDialogTimeout is the RPC chooser timeout (the TUI dialog has none).
const rpcDialogTimeout = midcompact.StartChooserTimeMs * time.Millisecond

func dialogOptions(mode string) piext.DialogOptions {
	if mode == "rpc" {
		return piext.DialogOptions{Timeout: rpcDialogTimeout}
	}
	return piext.DialogOptions{}
}

// start is /midcompact:start [focus] (reference §5.1): freeze the leaf as
// the anchor, append the transaction and an empty plan, send the start
// prompt, and in user-first mode open Selection once the Agent has
// acknowledged (seed 001 §Transactions).
func (rt *runtime) start(ctx context.Context, h, session host, focus string) error {
	if err := h.WaitForIdle(ctx); err != nil {
		return err
	}
	r, err := rt.current(ctx, h)
	if err != nil {
		return err
	}
	leaf, err := h.GetLeafID(ctx)
	if err != nil {
		return err
	}
	if n := midcompact.CheckStart(r, leaf); n != nil {
		return h.Notify(ctx, n.Text, string(n.Level))
	}
	mode, n, err := rt.chooseStart(ctx, h)
	if err != nil {
		return err
	}
	if n != nil {
		return notify(ctx, h, n)
	}
	usage, err := contextUsage(ctx, h)
	if err != nil {
		return err
	}
	tx, err := midcompact.NewTransaction(leaf, mode, rt.now(), random5(), usage)
	if err != nil {
		return err
	}
	d := midcompact.NewDraft(tx.ID)
	if err := h.AppendEntry(ctx, midcompact.TransactionEntryType, tx); err != nil {
		return err
	}
	if err := h.AppendEntry(ctx, midcompact.DraftEntryType, d); err != nil {
		return err
	}
	rt.mem.setPlan(tx, d)
	if err := rt.showStatus(ctx, h); err != nil {
		return err
	}
	if err := h.Notify(ctx, midcompact.StartNotice(tx), "info"); err != nil {
		return err
	}
	if err := h.SendUserMessage(ctx, midcompact.StartPrompt(tx, d, focus), ""); err != nil {
		return err
	}
	if mode != midcompact.StartUser {
		return nil
	}
	if err := h.WaitForIdle(ctx); err != nil {
		return err
	}
	return rt.openPlanning(ctx, h, session, selectCommand, "")
}

// chooseStart picks the start mode: agent without a UI, else the chooser
// (reference §5.3; the core maps the answer).
func (rt *runtime) chooseStart(ctx context.Context, h host) (midcompact.StartMode, *midcompact.Notice, error) {
	ui, err := h.HasUI(ctx)
	if err != nil {
		return "", nil, err
	}
	var answer *string
	if ui {
		mode, err := h.Mode(ctx)
		if err != nil {
			return "", nil, err
		}
		res, err := h.Select(ctx, uitext.StartChooserTitle,
			[]string{uitext.StartOptionAgent, uitext.StartOptionUser, uitext.StartOptionDrop}, dialogOptions(mode))
		if err != nil {
			return "", nil, err
		}
		if res.Status == piext.DialogAnswered {
			answer = &res.Value
		}
	}
	mode, n := midcompact.ResolveStartMode(ui, answer)
	return mode, n, nil
}

// contextUsage reads ctx.getContextUsage() (nil when Pi reports none).
func contextUsage(ctx context.Context, h host) (*midcompact.AnchorUsage, error) {
	raw, err := h.GetContextUsage(ctx)
	if err != nil {
		return nil, err
	}
	var u struct {
		Tokens        *float64 `json:"tokens"`
		ContextWindow *float64 `json:"contextWindow"`
		Percent       *float64 `json:"percent"`
	}
	if strictjson.Unmarshal(raw, &u, &strictjson.Policy{AllowInvalidUTF8: true}) != nil || u.ContextWindow == nil {
		return nil, nil
	}
	return &midcompact.AnchorUsage{Tokens: u.Tokens, ContextWindow: *u.ContextWindow, Percent: u.Percent}, nil
}

// random5 is five random characters of [a-z0-9] for a transaction id.
func random5() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 5)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// abort is /midcompact:abort: back to the anchor (seed 001 §Persistence:
// no midcompact entry). The navigation carries a label for the anchor, so
// Pi persists the position (a `label` entry under the anchor) and a resumed
// session (`pi -c`) starts at the anchor, not on the planning branch.
func (rt *runtime) abort(ctx context.Context, h host) error {
	owner, err := rt.commandLock(ctx, h)
	if err != nil {
		return err
	}
	r, err := rt.current(ctx, h)
	if err != nil {
		return err
	}
	anchor, n := midcompact.PrepareAbort(r, owner)
	if n != nil {
		return h.Notify(ctx, n.Text, string(n.Level))
	}
	existing, err := anchorLabel(ctx, h, anchor)
	if err != nil {
		return err
	}
	cancelled, err := h.NavigateTree(ctx, anchor, piext.NavigateOptions{Label: midcompact.AbortNavigationLabel(existing)})
	if err != nil {
		return err
	}
	if !cancelled {
		rt.mem.ended()
		rt.lock.Reset()
		if err := rt.showStatus(ctx, h); err != nil {
			return err
		}
	}
	done := midcompact.AbortDone(cancelled)
	return h.Notify(ctx, done.Text, string(done.Level))
}

// commandLock is the planning lock's owner as commit and abort see it. They
// do not wait for idle (seed 001 §Concurrency: they refuse while the Agent
// holds the lock; nothing queues), so a command typed during an agent turn
// meets the agent's lock at once. A turn that could not take the lock (a UI
// holds it) still counts as the agent's: Pi refuses to navigate the tree
// during a run.
func (rt *runtime) commandLock(ctx context.Context, h host) (midcompact.LockOwner, error) {
	owner := rt.lock.Owner()
	if owner == midcompact.LockAgent {
		return owner, nil
	}
	idle, err := h.IsIdle(ctx)
	if err != nil {
		return "", err
	}
	if !idle {
		return midcompact.LockAgent, nil
	}
	return owner, nil
}

// anchorLabel is the anchor's current tree label ("" for none).
func anchorLabel(ctx context.Context, h host, id string) (string, error) {
	raw, err := h.Call(ctx, "session", "getLabel", id)
	if err != nil {
		return "", err
	}
	var label string
	_ = json.Unmarshal(raw, &label) // null (undefined): no label
	return label, nil
}

// commit is /midcompact:commit: validate against a fresh anchor snapshot,
// navigate to the anchor, append the new state there, label it (seed 001
// §Transactions). The tool can never do this.
func (rt *runtime) commit(ctx context.Context, h host) error {
	owner, err := rt.commandLock(ctx, h)
	if err != nil {
		return err
	}
	r, err := rt.current(ctx, h)
	if err != nil {
		return err
	}
	var snap *midcompact.Snapshot
	if r.Transaction != nil && owner != midcompact.LockAgent {
		if snap, err = rt.snapshot(ctx, h, r.Transaction.AnchorEntryID); err != nil {
			return err
		}
	}
	res, n := midcompact.PrepareCommit(r, owner, snap, rt.now())
	if n != nil {
		return h.Notify(ctx, n.Text, string(n.Level))
	}
	cancelled, err := h.NavigateTree(ctx, r.Transaction.AnchorEntryID, piext.NavigateOptions{})
	if err != nil {
		return err
	}
	if cancelled {
		return h.Notify(ctx, uitext.MsgCommitCancelled, "warning")
	}
	if err := h.AppendEntry(ctx, midcompact.StateEntryType, res.State); err != nil {
		return err
	}
	id, err := h.GetLeafID(ctx)
	if err != nil {
		return err
	}
	if err := h.SetLabel(ctx, id, res.Label); err != nil {
		return err
	}
	rt.mem.committed(res.State)
	rt.lock.Reset()
	if err := rt.showStatus(ctx, h); err != nil {
		return err
	}
	return h.Notify(ctx, res.Notice, "info")
}

// status is /midcompact:status; read-only, it answers at once, also
// during an agent turn (the lock then reads "agent").
func (rt *runtime) status(ctx context.Context, h host) error {
	r, err := rt.current(ctx, h)
	if err != nil {
		return err
	}
	if r.Transaction == nil && r.State == nil {
		r.State = rt.mem.get().State
	}
	var snap *midcompact.Snapshot
	if r.Transaction != nil {
		if snap, err = rt.snapshot(ctx, h, r.Transaction.AnchorEntryID); err != nil {
			snap = nil // endpoints fall back to stored previews
		}
	}
	return h.Notify(ctx, midcompact.StatusText(r, snap, rt.lock.Owner()), "info")
}
