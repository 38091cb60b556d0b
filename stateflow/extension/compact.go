package extension

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/internal/strictjson"
	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
)

// Run-end native compaction (reference §1.12 step 7).
const (
	// compactThreshold is the context usage, in tokens, at or above which
	// an accepted Active run that was not a bootstrap asks Pi to compact.
	compactThreshold = 24_000
	// boundaryMarker prefixes the compaction's custom instructions; the
	// rest is the entry id of the latest run's first message, which the
	// compaction keeps.
	boundaryMarker = "state-flow-boundary:"
	// compactSummary is the summary of what the compaction removes (ours:
	// the reference does not give the text). In Active the completed runs
	// are projected out of context anyway; the summary only shows after
	// leaving Active.
	compactSummary = "Earlier runs of this session were completed under State Flow Active mode; " +
		"what they established is in State Flow memory (read it with read_state)."
)

// settle is what agent_settled does about the run turn_end completed: an
// accepted run that was not a bootstrap may be compacted; anchor is the
// timestamp of its first user message (raw JSON).
type settle struct {
	accepted bool
	anchor   json.RawMessage
}

// onAgentSettled asks Pi for a native compaction that keeps the complete
// latest run when that run was accepted in Active, was not a bootstrap,
// and the context holds at least compactThreshold tokens (reference §1.12
// step 7). The compaction itself is shaped in onBeforeCompact.
func (x *ext) onAgentSettled(ctx context.Context, ev *piext.Event) (any, error) {
	sess := x.sessionFor(ctx, ev.Session, ev.Pi)
	var p struct {
		Aborted bool `json:"aborted"`
	}
	_ = ev.Decode(&p)
	sess.mu.Lock()
	st, pol := sess.settle, sess.policy
	sess.settle = settle{}
	sess.mu.Unlock()
	if !st.accepted || p.Aborted || pol.Err != nil || pol.Mode != sf.ModeActive {
		return nil, nil
	}
	raw, err := ev.Pi.GetContextUsage(ctx)
	if err != nil {
		return nil, nil
	}
	if tokens, ok := contextTokens(raw); !ok || tokens < compactThreshold {
		return nil, nil
	}
	es, err := getBranch(ctx, ev.Pi)
	if err != nil {
		return nil, nil
	}
	id := runStart(es, st.anchor)
	if id == "" {
		return nil, nil
	}
	_ = ev.Pi.Compact(ctx, boundaryMarker+id)
	return nil, nil
}

// contextTokens reads the tokens of Pi's getContextUsage() answer
// ({tokens: number|null, contextWindow, percent}, read strictly); ok is
// false when Pi reports none or the answer does not decode.
func contextTokens(raw []byte) (float64, bool) {
	var usage struct {
		Tokens *float64 `json:"tokens"`
	}
	if strictjson.Unmarshal(raw, &usage, payloadPolicy) != nil || usage.Tokens == nil {
		return 0, false
	}
	return *usage.Tokens, true
}

// runStart is the entry id of the latest run's first user message (the
// one whose message timestamp is anchor, else the last user message), or
// "" when no conversation message (system prompts aside) precedes it:
// nothing to compact.
func runStart(es []piext.Entry, anchor json.RawMessage) string {
	at := -1
	for i := len(es) - 1; i >= 0 && at < 0; i-- {
		if isUserEntry(es[i]) && len(anchor) > 0 && bytes.Equal(messageField(es[i], "timestamp"), anchor) {
			at = i
		}
	}
	for i := len(es) - 1; i >= 0 && at < 0; i-- {
		if isUserEntry(es[i]) {
			at = i
		}
	}
	if at < 0 {
		return ""
	}
	for _, e := range es[:at] {
		if m, ok := e.Message(); ok && m.Role() != pimessage.RoleSystem {
			return es[at].ID()
		}
	}
	return ""
}

// onBeforeCompact shapes the compaction onAgentSettled asked for: the
// entries before the latest run are replaced by compactSummary, the run
// is kept whole (firstKeptEntryId is its first message). Compactions
// without the marker, or whose entry is no longer on the branch, run as
// Pi prepared them.
func (x *ext) onBeforeCompact(ctx context.Context, ev *piext.Event, p piext.SessionBeforeCompactEvent) (*piext.SessionBeforeCompactResult, error) {
	id, ok := strings.CutPrefix(p.CustomInstructions, boundaryMarker)
	if !ok || id == "" {
		return nil, nil
	}
	for _, e := range p.BranchEntries {
		if e.Type() == pimessage.TypeMessage && e.ID() == id {
			return &piext.SessionBeforeCompactResult{Compaction: &piext.CompactionResult{
				Summary:          compactSummary,
				FirstKeptEntryID: id,
				TokensBefore:     p.Preparation.TokensBefore,
				Details:          map[string]string{"stateFlowBoundary": id},
			}}, nil
		}
	}
	return nil, nil
}

func isUserEntry(e piext.Entry) bool {
	m, ok := e.Message()
	return ok && m.Role() == pimessage.RoleUser
}

func messageField(e piext.Entry, name string) json.RawMessage {
	m, ok := e.Message()
	if !ok {
		return nil
	}
	return m.Field(name)
}

// onSessionCompact rebases the heads after a native compaction (reference
// §1.11 "Head freeze"): an Active run in flight re-anchors and freezes a
// new head (a new projection id, over the current memory, which also
// covers the tail notices given so far) at its next context; the Passive
// head is rebuilt. The exit handoff stays until the session is bound
// again.
func (x *ext) onSessionCompact(ctx context.Context, ev *piext.Event) (any, error) {
	sess := x.sessionFor(ctx, ev.Session, ev.Pi)
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.run.started {
		sess.run.started, sess.run.notices = false, nil
	}
	if !sess.handoff {
		sess.passive = ""
	}
	return nil, nil
}
