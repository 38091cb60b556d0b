package extension

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/piext"
)

// compactHookTimeout bounds session_before_compact: its payload carries the
// whole branch and the messages to summarize, and a compaction is no
// latency-critical path (Pi waits for the hook).
const compactHookTimeout = 30 * time.Second

// beforeCompact is session_before_compact (Pi's /compact, threshold and
// overflow compaction): with committed blocks on the branch, Pi's
// summarizer gets the conversation as the model sees it (summaries, not
// originals) and a block the cut would split stays kept whole
// (midcompact.ProjectCompaction). It never cancels and never writes the
// summary itself; an event it cannot read is an error, which piext's
// fail-open hook turns into Pi's preparation left as it is (and one
// extension_error).
func (rt *runtime) beforeCompact(_ context.Context, _ *piext.Event, in piext.SessionBeforeCompactEvent) (*piext.SessionBeforeCompactResult, error) {
	raws := make([]json.RawMessage, len(in.BranchEntries))
	for i, e := range in.BranchEntries {
		raws[i] = e.Raw
	}
	branch := pisession.EntriesOf(raws)
	st := midcompact.Restore(branch).State
	if st == nil || len(st.Blocks) == 0 {
		return nil, nil
	}
	parse := func(msgs []piext.Message) ([]midcompact.Message, error) {
		out := make([]midcompact.Message, len(msgs))
		for i, m := range msgs {
			pm, err := midcompact.ParseMessage(m.Raw)
			if err != nil {
				return nil, fmt.Errorf("session_before_compact: message %d: %w", i, err)
			}
			out[i] = pm
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
	msgs := func(ms []midcompact.Message) []piext.Message {
		out := make([]piext.Message, len(ms))
		for i := range ms {
			out[i] = piext.NewMessage(ms[i].Raw)
		}
		return out
	}
	return &piext.SessionBeforeCompactResult{Preparation: &piext.PreparationEdit{
		FirstKeptEntryID: out.FirstKeptEntryID, MessagesToSummarize: msgs(out.MessagesToSummarize),
		TurnPrefixMessages: msgs(out.TurnPrefixMessages), IsSplitTurn: out.IsSplitTurn,
	}}, nil
}
