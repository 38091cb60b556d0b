package midcompact

import (
	"encoding/json"
	"math"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// The three custom entry types midcompact persists on the session branch,
// and nothing else (seed 001 §Persistence). Every payload has version 1.
const (
	TransactionEntryType = "midcompact-transaction"
	DraftEntryType       = "midcompact-draft"
	StateEntryType       = "midcompact-state"
	entryVersion         = 1
)

// StartMode is who plans first in a transaction.
type StartMode string

// The start modes; a transaction persisted without one is agent-first
// (seed 001 §Persistence).
const (
	StartAgent StartMode = "agent"
	StartUser  StartMode = "user"
)

// AnchorUsage is Pi's reported context usage captured at start
// (informational only, seed 001 §Transactions). Tokens and Percent are null
// when Pi reported none; ContextWindow is ≥ 1.
type AnchorUsage struct {
	Tokens        *float64 `json:"tokens"`
	ContextWindow float64  `json:"contextWindow"`
	Percent       *float64 `json:"percent"`
	CapturedAt    string   `json:"capturedAt"`
}

// Transaction is the `midcompact-transaction` payload, written once at start
// (reference §3.1).
type Transaction struct {
	Version       int          `json:"version"`
	ID            string       `json:"id"`
	AnchorEntryID string       `json:"anchorEntryId"`
	StartedAt     string       `json:"startedAt"`
	StartMode     StartMode    `json:"startMode,omitempty"`
	AnchorUsage   *AnchorUsage `json:"anchorUsage,omitempty"`
}

// Sizes are what a range's messages measure and what its summary replaces
// them with, kept by the block a commit makes of it (reference §3.2,
// §3.3): content chars, images and their payload bytes. The *ApproxTokens
// fields are legacy and never used for a decision. Embedded in [Range] and
// [Block], its members sit in their JSON objects where the struct is.
type Sizes struct {
	OriginalContentChars      int `json:"originalContentChars"`
	OriginalImageCount        int `json:"originalImageCount"`
	OriginalImagePayloadBytes int `json:"originalImagePayloadBytes"`
	ReplacementContentChars   int `json:"replacementContentChars"`
	OriginalApproxTokens      int `json:"originalApproxTokens"`
	CompressedApproxTokens    int `json:"compressedApproxTokens"`
}

// Range is one member of a plan: a contiguous run of atoms plus a summary
// (reference §3.2). Summary "" means pending.
type Range struct {
	ID          string   `json:"id"`
	StartRef    string   `json:"startRef"`
	EndRef      string   `json:"endRef"`
	StartIndex  int      `json:"startIndex"`
	EndIndex    int      `json:"endIndex"`
	Topic       string   `json:"topic,omitempty"`
	Summary     string   `json:"summary"`
	EntryIDs    []string `json:"entryIds"`
	MessageKeys []string `json:"messageKeys"`
	Sizes
	StartPreview string `json:"startPreview"`
	EndPreview   string `json:"endPreview"`
}

// Draft is the `midcompact-draft` payload: the full plan, appended at start
// and after every mutation (reference §3.2). Ranges are sorted by
// StartIndex.
type Draft struct {
	Version       int     `json:"version"`
	TransactionID string  `json:"transactionId"`
	Revision      int     `json:"revision"`
	Ranges        []Range `json:"ranges"`
}

// Block is a committed range (reference §3.3).
type Block struct {
	ID          string   `json:"id"`
	Topic       string   `json:"topic,omitempty"`
	Summary     string   `json:"summary"`
	EntryIDs    []string `json:"entryIds"`
	MessageKeys []string `json:"messageKeys"`
	CreatedAt   string   `json:"createdAt"`
	Sizes
}

// LastCommit describes the commit that wrote a state (reference §3.3). The
// approx-token and projected fields are legacy, display only.
type LastCommit struct {
	TransactionID                   string       `json:"transactionId"`
	CommittedAt                     string       `json:"committedAt"`
	AddedBlockIDs                   []string     `json:"addedBlockIds"`
	AddedRangeCount                 int          `json:"addedRangeCount"`
	SelectedOriginalContentChars    int          `json:"selectedOriginalContentChars"`
	SelectedReplacementContentChars int          `json:"selectedReplacementContentChars"`
	SelectedImageCount              int          `json:"selectedImageCount"`
	SelectedImagePayloadBytes       int          `json:"selectedImagePayloadBytes"`
	AnchorUsage                     *AnchorUsage `json:"anchorUsage,omitempty"`
	SelectedOriginalApproxTokens    int          `json:"selectedOriginalApproxTokens"`
	SelectedCompressedApproxTokens  int          `json:"selectedCompressedApproxTokens"`
	EstimatedSavedTokens            int          `json:"estimatedSavedTokens"`
	ProjectedTokens                 *float64     `json:"projectedTokens"`
	ProjectedPercent                *float64     `json:"projectedPercent"`
}

// State is the `midcompact-state` payload, cumulative, written only by
// commit and never mutated (seed 001 §Persistence).
type State struct {
	Version    int         `json:"version"`
	CreatedAt  string      `json:"createdAt"`
	Blocks     []Block     `json:"blocks"`
	LastCommit *LastCommit `json:"lastCommit,omitempty"`
}

// Block returns the block with id, or nil.
func (s *State) Block(id string) *Block {
	if s == nil {
		return nil
	}
	for i := range s.Blocks {
		if s.Blocks[i].ID == id {
			return &s.Blocks[i]
		}
	}
	return nil
}

// members reads a JSON object, nil when it is not one.
func members(raw json.RawMessage) pimessage.Object {
	obj, err := decodeObject(raw)
	if err != nil {
		return nil
	}
	return obj
}

func isVersion1(obj pimessage.Object) bool {
	n, ok := numberField(obj, "version")
	return ok && n == entryVersion
}

func isArray(v json.RawMessage) bool { return pimessage.FirstByte(v) == '[' }

// coerceInt reads a number member as an int (truncated, clamped); any
// non-number is 0 (reference §3.4 coercions).
func coerceInt(obj pimessage.Object, name string) int {
	n, ok := numberField(obj, name)
	if !ok || math.IsNaN(n) {
		return 0
	}
	return int(max(min(n, 1<<53), -(1 << 53)))
}

// stringList reads an array member keeping only its string elements.
func stringList(v json.RawMessage) []string {
	var elems []json.RawMessage
	if json.Unmarshal(v, &elems) != nil {
		return []string{}
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		var s string
		if pimessage.FirstByte(e) == '"' && json.Unmarshal(e, &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

func optionalNumber(obj pimessage.Object, name string) *float64 {
	if n, ok := numberField(obj, name); ok {
		return &n
	}
	return nil
}

func decodeAnchorUsage(raw json.RawMessage) *AnchorUsage {
	obj := members(raw)
	if obj == nil {
		return nil
	}
	cw, ok := numberField(obj, "contextWindow")
	if !ok || math.IsInf(cw, 0) || cw <= 0 {
		return nil
	}
	u := &AnchorUsage{ContextWindow: cw, Tokens: optionalNumber(obj, "tokens"), Percent: optionalNumber(obj, "percent")}
	u.CapturedAt, _ = obj.String("capturedAt")
	return u
}
