package midcompact

import (
	"errors"
	"strconv"
	"strings"

	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/internal/pisession"
)

// Recall budgets in UTF-16 code units (reference §1.2).
const (
	recallBriefCap    = 12_000
	recallFullCap     = 40_000
	recallListMax     = 20
	recallListDefault = 8
	recallTruncated   = "\n\n[truncated; refine the recall request or inspect the source session for more]"
)

// EntryLookup finds an entry anywhere in the session tree (not only on the
// current branch), as `sessionManager.getEntries()` does for recall.
type EntryLookup func(id string) (pisession.Entry, bool)

// RecallList lists the blocks of the state active on the current branch in
// stored (oldest-first) order, filtered by a case-insensitive pattern over
// `id\ntopic\nsummary`, at most limit of them (reference §1.4; ordering
// choice in the package doc). It needs no transaction and never touches
// the projection (seed 001 §Projection).
func RecallList(state *State, pattern string, limit int) string {
	if state == nil || len(state.Blocks) == 0 {
		return "No compressed blocks are active on this branch."
	}
	var parts []string
	for i := range state.Blocks {
		b := &state.Blocks[i]
		if pattern != "" && !containsFold(b.ID+"\n"+b.Topic+"\n"+b.Summary, pattern) {
			continue
		}
		if len(parts) == limit {
			break
		}
		head := b.ID
		if b.Topic != "" {
			head += " | " + b.Topic
		}
		head += " | " + strconv.Itoa(b.OriginalContentChars) + " original chars"
		if b.OriginalImageCount > 0 {
			head += " · " + strconv.Itoa(b.OriginalImageCount) + " images"
		}
		parts = append(parts, head+"\n"+b.Summary)
	}
	if len(parts) == 0 {
		return "No compressed blocks matched."
	}
	return strings.Join(parts, "\n\n")
}

// errUnknownBlock is the recall_read error for an id not in the state.
var errUnknownBlock = errors.New("unknown compressed block")

// RecallRead renders the exact original messages of a block: for each of
// its entry ids that names a `message` entry, `[<entryId>] <messageText>`,
// joined by a blank line, cut at 12,000 code units (40,000 with full) with
// the truncation notice (reference §1.4, §4.4). An unknown block is an
// error whose text is `Unknown compressed block <id>.`.
func RecallRead(state *State, blockID string, full bool, lookup EntryLookup) (string, error) {
	b := state.Block(blockID)
	if b == nil {
		return "", &toolError{msg: "Unknown compressed block " + blockID + ".", err: errUnknownBlock}
	}
	var parts []string
	for _, id := range b.EntryIDs {
		e, ok := lookup(id)
		if !ok || e.Type != pimessage.TypeMessage {
			continue
		}
		m, err := ParseMessage(members(e.Raw)["message"])
		if err != nil {
			continue
		}
		parts = append(parts, "["+id+"] "+messageText(&m))
	}
	text := strings.Join(parts, "\n\n")
	limit := recallBriefCap
	if full {
		limit = recallFullCap
	}
	if jsLen(text) > limit {
		text = jsSlice(text, 0, limit) + recallTruncated
	}
	return text, nil
}
