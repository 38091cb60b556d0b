package midcompact

import (
	"encoding/json"
	"math"
)

// TokenEstimate is the workbench's char-class assumption table (`est`,
// reference §5.6): tokens per narrow char, per wide char and per image, each
// as [low, high]. It feeds only the display band labelled `est.`; nothing in
// this package decides anything with it (seed 001 §Transactions).
type TokenEstimate struct {
	NarrowTokPerChar [2]float64 `json:"narrowTokPerChar"`
	WideTokPerChar   [2]float64 `json:"wideTokPerChar"`
	ImageTok         [2]float64 `json:"imageTok"`
}

// DefaultTokenEstimate is the upstream table.
var DefaultTokenEstimate = TokenEstimate{
	NarrowTokPerChar: [2]float64{0.22, 0.30},
	WideTokPerChar:   [2]float64{0.5, 1.0},
	ImageTok:         [2]float64{700, 1600},
}

// Estimate returns the point (midpoints), low and high token estimates of a
// char mix, each rounded as JS Math.round.
func (e TokenEstimate) Estimate(narrow, wide, images int) (point, low, high int) {
	n, w, i := float64(narrow), float64(wide), float64(images)
	mid := func(r [2]float64) float64 { return (r[0] + r[1]) / 2 }
	round := func(x float64) int { return int(math.Floor(x + 0.5)) }
	point = round(n*mid(e.NarrowTokPerChar) + w*mid(e.WideTokPerChar) + i*mid(e.ImageTok))
	low = round(n*e.NarrowTokPerChar[0] + w*e.WideTokPerChar[0] + i*e.ImageTok[0])
	high = round(n*e.NarrowTokPerChar[1] + w*e.WideTokPerChar[1] + i*e.ImageTok[1])
	return point, low, high
}

// ReviewAtom is one atom of the workbench state payload.
type ReviewAtom struct {
	Ref               string   `json:"ref"`
	Index             int      `json:"index"`
	GroupRef          string   `json:"groupRef"`
	GroupLabel        string   `json:"groupLabel"`
	Kind              AtomKind `json:"kind"`
	Preview           string   `json:"preview"`
	ContentChars      int      `json:"contentChars"`
	ImageCount        int      `json:"imageCount"`
	ImagePayloadBytes int      `json:"imagePayloadBytes"`
	Compressible      bool     `json:"compressible"`
	ProtocolClosed    bool     `json:"protocolClosed"`
	ToolNames         []string `json:"toolNames"`
	Roles             []string `json:"roles"`
	CompressedBlockID string   `json:"compressedBlockId,omitempty"`
	OwningRangeID     string   `json:"owningRangeId,omitempty"`
	IsRangeStart      bool     `json:"isRangeStart,omitempty"`
	IsRangeEnd        bool     `json:"isRangeEnd,omitempty"`
	NarrowChars       int      `json:"narrowChars"`
	WideChars         int      `json:"wideChars"`
}

// ReviewRange is one plan range of the payload; the replacement char
// classes are those of the exact wrapper text.
type ReviewRange struct {
	ID                        string `json:"id"`
	StartRef                  string `json:"startRef"`
	EndRef                    string `json:"endRef"`
	Topic                     string `json:"topic,omitempty"`
	Summary                   string `json:"summary"`
	OriginalContentChars      int    `json:"originalContentChars"`
	OriginalImageCount        int    `json:"originalImageCount"`
	OriginalImagePayloadBytes int    `json:"originalImagePayloadBytes"`
	ReplacementContentChars   int    `json:"replacementContentChars"`
	ReplacementNarrowChars    int    `json:"replacementNarrowChars"`
	ReplacementWideChars      int    `json:"replacementWideChars"`
	AtomCount                 int    `json:"atomCount"`
}

// DraftTelemetry is the payload's factual plan totals plus Pi's anchor
// usage; the approx/projected fields are legacy, display only.
type DraftTelemetry struct {
	AnchorUsage                     *AnchorUsage `json:"anchorUsage,omitempty"`
	ContextWindow                   *float64     `json:"contextWindow"`
	AnchorTokens                    *float64     `json:"anchorTokens"`
	AnchorPercent                   *float64     `json:"anchorPercent"`
	SelectedOriginalContentChars    int          `json:"selectedOriginalContentChars"`
	SelectedReplacementContentChars int          `json:"selectedReplacementContentChars"`
	SelectedImageCount              int          `json:"selectedImageCount"`
	SelectedImagePayloadBytes       int          `json:"selectedImagePayloadBytes"`
	RangeCount                      int          `json:"rangeCount"`
	PendingSummaryCount             int          `json:"pendingSummaryCount"`
	SelectedOriginalApproxTokens    int          `json:"selectedOriginalApproxTokens"`
	SelectedCompressedApproxTokens  int          `json:"selectedCompressedApproxTokens"`
	EstimatedSavedTokens            int          `json:"estimatedSavedTokens"`
	ProjectedTokens                 *float64     `json:"projectedTokens"`
	ProjectedPercent                *float64     `json:"projectedPercent"`
}

// ReviewState is the workbench state payload (`GET /api/state` and the
// page's injected state), view "review" or "selection".
type ReviewState struct {
	View      string         `json:"view"`
	Est       TokenEstimate  `json:"est"`
	Atoms     []ReviewAtom   `json:"atoms"`
	Draft     ReviewDraft    `json:"draft"`
	Telemetry DraftTelemetry `json:"telemetry"`
}

// ReviewDraft is the plan part of the payload.
type ReviewDraft struct {
	Revision int           `json:"revision"`
	Ranges   []ReviewRange `json:"ranges"`
}

// NewReviewState builds the payload from a snapshot and the plan. Groups
// carry the tool inventory's labels (from `g0001`, a prefix group
// included), so the page and the Agent name a group alike.
func NewReviewState(view string, s *Snapshot, tx *Transaction, d *Draft) *ReviewState {
	st := &ReviewState{View: view, Est: DefaultTokenEstimate, Atoms: make([]ReviewAtom, len(s.Atoms)), Draft: ReviewDraft{Revision: d.Revision, Ranges: []ReviewRange{}}}
	owner := map[int]*Range{}
	for i := range d.Ranges {
		r := &d.Ranges[i]
		for k := r.StartIndex; k <= r.EndIndex && k < len(s.Atoms); k++ {
			owner[k] = r
		}
		n, w := charClasses(SummaryContent("draft", r.Topic, r.Summary))
		st.Draft.Ranges = append(st.Draft.Ranges, ReviewRange{
			ID: r.ID, StartRef: r.StartRef, EndRef: r.EndRef, Topic: r.Topic, Summary: r.Summary,
			OriginalContentChars: r.OriginalContentChars, OriginalImageCount: r.OriginalImageCount,
			OriginalImagePayloadBytes: r.OriginalImagePayloadBytes, ReplacementContentChars: r.ReplacementContentChars,
			ReplacementNarrowChars: n, ReplacementWideChars: w, AtomCount: r.EndIndex - r.StartIndex + 1,
		})
	}
	for _, g := range s.Groups() {
		ref := g.Ref
		for i := g.Start; i <= g.End; i++ {
			a := &s.Atoms[i]
			n, w := charClasses(a.FullText)
			ra := ReviewAtom{
				Ref: a.Ref, Index: a.Index, GroupRef: ref, GroupLabel: g.Label, Kind: a.Kind, Preview: a.Preview(),
				ContentChars: a.Metrics.ContentChars, ImageCount: a.Metrics.ImageCount(), ImagePayloadBytes: a.Metrics.ImagePayloadBytes(),
				Compressible: a.Compressible, ProtocolClosed: a.ProtocolClosed, ToolNames: nonNil(a.ToolNames), Roles: nonNil(a.Roles),
				CompressedBlockID: a.CompressedBlockID, NarrowChars: n, WideChars: w,
			}
			if r := owner[i]; r != nil {
				ra.OwningRangeID, ra.IsRangeStart, ra.IsRangeEnd = r.ID, i == r.StartIndex, i == r.EndIndex
			}
			st.Atoms[i] = ra
		}
	}
	st.Telemetry = draftTelemetry(tx, d)
	return st
}

func draftTelemetry(tx *Transaction, d *Draft) DraftTelemetry {
	t := draftTotals(d)
	dt := DraftTelemetry{
		SelectedOriginalContentChars: t.orig, SelectedReplacementContentChars: t.repl,
		SelectedImageCount: t.images, SelectedImagePayloadBytes: t.payload,
		RangeCount: len(d.Ranges), PendingSummaryCount: d.PendingCount(),
		SelectedOriginalApproxTokens: t.origApprox, SelectedCompressedApproxTokens: t.compApprox,
		EstimatedSavedTokens: max(0, t.origApprox-t.compApprox),
	}
	if u := tx.AnchorUsage; u != nil {
		cw := u.ContextWindow
		dt.AnchorUsage, dt.ContextWindow, dt.AnchorTokens, dt.AnchorPercent = u, &cw, u.Tokens, u.Percent
		if u.Tokens != nil {
			p := max(0, *u.Tokens-float64(dt.EstimatedSavedTokens))
			pct := p / cw * 100
			dt.ProjectedTokens, dt.ProjectedPercent = &p, &pct
		}
	}
	return dt
}

// StateScript is the payload as injected into the page's
// `<script id="state" type="application/json">`: JSON with `<`, `>` and
// `&` escaped (\u003c …), so no text can close the script element.
func (s *ReviewState) StateScript() ([]byte, error) {
	return json.Marshal(s) // encoding/json escapes <, > and & by default
}
