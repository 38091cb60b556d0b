package extension

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/piext"
)

// host is the part of Pi a handler calls back into. *piext.Pi is the real
// one; tests of edge cases real Pi cannot produce on demand pass a fake.
type host interface {
	Notify(ctx context.Context, message, level string) error
	SetStatus(ctx context.Context, key, text string) error
	WaitForIdle(ctx context.Context) error
	IsIdle(ctx context.Context) (bool, error)
	Call(ctx context.Context, target, method string, args ...any) (json.RawMessage, error)
	GetLeafID(ctx context.Context) (string, error)
	AppendEntry(ctx context.Context, customType string, data any) error
	SetLabel(ctx context.Context, entryID, label string) error
	NavigateTree(ctx context.Context, targetID string, opts piext.NavigateOptions) (bool, error)
	SendUserMessage(ctx context.Context, text, deliverAs string) error
	Select(ctx context.Context, title string, options []string, o piext.DialogOptions) (piext.DialogResult, error)
	Confirm(ctx context.Context, title, message string, o piext.DialogOptions) (piext.DialogResult, error)
	HasUI(ctx context.Context) (bool, error)
	Mode(ctx context.Context) (string, error)
	GetContextUsage(ctx context.Context) (json.RawMessage, error)
}

var _ host = (*piext.Pi)(nil)

// sessionEntries converts Pi's entries (a JSON array) to the core's reader
// type, reading each entry's top-level strings as pisession does (a
// non-string reads as ""). It decodes the raw array itself: piext.Entry keeps no Raw
// when decoded from JSON (Pi.GetBranch/GetEntries return empty entries).
func sessionEntries(raw json.RawMessage) ([]pisession.Entry, error) {
	var es []json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &es); err != nil {
			return nil, fmt.Errorf("session entries: %w", err)
		}
	}
	return pisession.EntriesOf(es), nil
}

// branch returns the session branch root → fromID ("" = the leaf).
func branch(ctx context.Context, h host, fromID string) ([]pisession.Entry, error) {
	args := []any{}
	if fromID != "" {
		args = append(args, fromID)
	}
	raw, err := h.Call(ctx, "session", "getBranch", args...)
	if err != nil {
		return nil, err
	}
	return sessionEntries(raw)
}

// ownEntries returns the branch's midcompact entries (custom entries of
// the transaction, draft and state types), root first: all
// [midcompact.Restore] reads, without the transcript (the bridge's
// session.getBranchCustom filters in Pi).
func ownEntries(ctx context.Context, h host) ([]pisession.Entry, error) {
	types := []string{midcompact.TransactionEntryType, midcompact.DraftEntryType, midcompact.StateEntryType}
	raw, err := h.Call(ctx, "session", "getBranchCustom", types)
	if err != nil {
		return nil, err
	}
	return sessionEntries(raw)
}
