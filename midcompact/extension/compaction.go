package extension

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/piext"
)

// compactHookTimeout bounds session_before_compact: its payload carries the
// whole branch and the messages to summarize, and a compaction is no
// latency-critical path (Pi waits for the hook).
const compactHookTimeout = 30 * time.Second

// beforeCompactEvent is the part of session_before_compact midcompact reads.
type beforeCompactEvent struct {
	Preparation struct {
		FirstKeptEntryID    string            `json:"firstKeptEntryId"`
		MessagesToSummarize []json.RawMessage `json:"messagesToSummarize"`
		TurnPrefixMessages  []json.RawMessage `json:"turnPrefixMessages"`
		IsSplitTurn         bool              `json:"isSplitTurn"`
	} `json:"preparation"`
	BranchEntries json.RawMessage `json:"branchEntries"`
}

// preparationEdit is the hook's answer: the preparation fields piext's
// bridge writes into Pi's preparation before Pi's own summarizer runs.
type preparationEdit struct {
	FirstKeptEntryID    string            `json:"firstKeptEntryId"`
	MessagesToSummarize []json.RawMessage `json:"messagesToSummarize"`
	TurnPrefixMessages  []json.RawMessage `json:"turnPrefixMessages"`
	IsSplitTurn         bool              `json:"isSplitTurn"`
}

// beforeCompact is session_before_compact (Pi's /compact, threshold and
// overflow compaction): with committed blocks on the branch, Pi's
// summarizer gets the conversation as the model sees it (summaries, not
// originals) and a block the cut would split stays kept whole
// (midcompact.ProjectCompaction). It never cancels and never writes the
// summary itself; an event it cannot read is an error, which piext's
// fail-open hook turns into Pi's preparation left as it is (and one
// extension_error).
func (rt *runtime) beforeCompact(ev *piext.Event) (any, error) {
	var in beforeCompactEvent
	if err := ev.Decode(&in); err != nil {
		return nil, fmt.Errorf("session_before_compact: %w", err)
	}
	branch, err := sessionEntries(in.BranchEntries)
	if err != nil {
		return nil, fmt.Errorf("session_before_compact: %w", err)
	}
	st := midcompact.Restore(branch).State
	if st == nil || len(st.Blocks) == 0 {
		return nil, nil
	}
	parse := func(raws []json.RawMessage) ([]midcompact.Message, error) {
		out := make([]midcompact.Message, len(raws))
		for i, raw := range raws {
			m, err := midcompact.ParseMessage(raw)
			if err != nil {
				return nil, fmt.Errorf("session_before_compact: message %d: %w", i, err)
			}
			out[i] = m
		}
		return out, nil
	}
	history, err := parse(in.Preparation.MessagesToSummarize)
	if err != nil {
		return nil, err
	}
	prefix, err := parse(in.Preparation.TurnPrefixMessages)
	if err != nil {
		return nil, err
	}
	out, changed, err := midcompact.ProjectCompaction(midcompact.CompactionPreparation{
		FirstKeptEntryID: in.Preparation.FirstKeptEntryID, MessagesToSummarize: history,
		TurnPrefixMessages: prefix, IsSplitTurn: in.Preparation.IsSplitTurn,
	}, branch, st.Blocks, float64(rt.now().UnixMilli()))
	if err != nil {
		return nil, fmt.Errorf("session_before_compact: %w", err)
	}
	if !changed {
		return nil, nil
	}
	raws := func(ms []midcompact.Message) []json.RawMessage {
		out := make([]json.RawMessage, len(ms))
		for i := range ms {
			out[i] = ms[i].Raw
		}
		return out
	}
	return map[string]any{"preparation": preparationEdit{
		FirstKeptEntryID: out.FirstKeptEntryID, MessagesToSummarize: raws(out.MessagesToSummarize),
		TurnPrefixMessages: raws(out.TurnPrefixMessages), IsSplitTurn: out.IsSplitTurn,
	}}, nil
}
