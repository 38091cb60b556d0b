package midcompact

import (
	"encoding/json"

	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/internal/strictjson"
)

// Restored is what a branch says about midcompact (seed 001 §Persistence):
// the latest valid state, and the latest valid transaction with the latest
// valid draft that follows it with the same transaction id. Any of them may
// be nil. A transaction without a draft restores with an empty plan.
type Restored struct {
	State       *State
	Transaction *Transaction
	Draft       *Draft
	// StateEntryID is the id of the entry that holds State.
	StateEntryID string
}

// Restore scans a branch (root → leaf) in order, latest entry wins: a valid
// `midcompact-transaction` sets the transaction and clears the draft; a
// `midcompact-draft` counts only when valid and its transactionId matches the
// current transaction; a valid `midcompact-state` sets the state on its own.
// Invalid payloads are skipped (reference §3.4). It never fails.
func Restore(branch []pisession.Entry) Restored {
	var r Restored
	for _, e := range branch {
		if e.Type != pimessage.TypeCustom {
			continue
		}
		obj := members(e.Raw)
		ct, _ := obj.String("customType")
		switch ct {
		case StateEntryType:
			if s, ok := DecodeState(obj["data"]); ok {
				r.State, r.StateEntryID = s, e.ID
			}
		case TransactionEntryType:
			if t, ok := DecodeTransaction(obj["data"]); ok {
				r.Transaction, r.Draft = t, nil
			}
		case DraftEntryType:
			if d, ok := DecodeDraft(obj["data"]); ok && r.Transaction != nil && d.TransactionID == r.Transaction.ID {
				r.Draft = d
			}
		}
	}
	return r
}

// DecodeTransaction shape-checks a transaction payload (version 1, string
// id, anchorEntryId, startedAt) and coerces a missing or unknown startMode
// to agent.
func DecodeTransaction(raw json.RawMessage) (*Transaction, bool) {
	obj := members(raw)
	if obj == nil || !isVersion1(obj) {
		return nil, false
	}
	t := &Transaction{Version: entryVersion}
	var ok1, ok2, ok3 bool
	t.ID, ok1 = obj.String("id")
	t.AnchorEntryID, ok2 = obj.String("anchorEntryId")
	t.StartedAt, ok3 = obj.String("startedAt")
	if !ok1 || !ok2 || !ok3 {
		return nil, false
	}
	t.StartMode = StartAgent
	if m, _ := obj.String("startMode"); m == string(StartUser) {
		t.StartMode = StartUser
	}
	t.AnchorUsage = decodeAnchorUsage(obj["anchorUsage"])
	return t, true
}

// DecodeDraft shape-checks a draft payload (version 1, string
// transactionId, number revision, array ranges) and coerces every range.
func DecodeDraft(raw json.RawMessage) (*Draft, bool) {
	obj := members(raw)
	if obj == nil || !isVersion1(obj) {
		return nil, false
	}
	d := &Draft{Version: entryVersion}
	var ok bool
	if d.TransactionID, ok = obj.String("transactionId"); !ok {
		return nil, false
	}
	if _, ok = numberField(obj, "revision"); !ok || !isArray(obj["ranges"]) {
		return nil, false
	}
	d.Revision = coerceInt(obj, "revision")
	var elems []json.RawMessage
	_ = json.Unmarshal(obj["ranges"], &elems)
	d.Ranges = make([]Range, 0, len(elems))
	for _, e := range elems {
		if r, ok := coerceRange(e); ok {
			d.Ranges = append(d.Ranges, r)
		}
	}
	return d, true
}

// coerceRange reads a persisted range; factual char/image and legacy token
// fields that are not numbers become 0 (reference §3.4 `coerceDraftRange`).
// A non-object element is dropped.
func coerceRange(raw json.RawMessage) (Range, bool) {
	obj := members(raw)
	if obj == nil {
		return Range{}, false
	}
	r := Range{
		StartIndex:  coerceInt(obj, "startIndex"),
		EndIndex:    coerceInt(obj, "endIndex"),
		EntryIDs:    stringList(obj["entryIds"]),
		MessageKeys: stringList(obj["messageKeys"]),
		Sizes:       coerceSizes(obj),
	}
	r.ID, _ = obj.String("id")
	r.StartRef, _ = obj.String("startRef")
	r.EndRef, _ = obj.String("endRef")
	r.Topic, _ = obj.String("topic")
	r.Summary, _ = obj.String("summary")
	r.StartPreview, _ = obj.String("startPreview")
	r.EndPreview, _ = obj.String("endPreview")
	return r, true
}

// coerceSizes reads the sizes of a persisted range or block: a member
// that is not a number reads as 0 (reference §3.4 `coerceDraftRange`).
func coerceSizes(obj pimessage.Object) Sizes {
	return Sizes{
		OriginalContentChars:      coerceInt(obj, "originalContentChars"),
		OriginalImageCount:        coerceInt(obj, "originalImageCount"),
		OriginalImagePayloadBytes: coerceInt(obj, "originalImagePayloadBytes"),
		ReplacementContentChars:   coerceInt(obj, "replacementContentChars"),
		OriginalApproxTokens:      coerceInt(obj, "originalApproxTokens"),
		CompressedApproxTokens:    coerceInt(obj, "compressedApproxTokens"),
	}
}

// DecodeState shape-checks a state payload (version 1, string createdAt,
// array blocks, every block with string id and summary and array entryIds
// and messageKeys); block char/image fields read as 0 when absent.
func DecodeState(raw json.RawMessage) (*State, bool) {
	obj := members(raw)
	if obj == nil || !isVersion1(obj) || !isArray(obj["blocks"]) {
		return nil, false
	}
	s := &State{Version: entryVersion}
	var ok bool
	if s.CreatedAt, ok = obj.String("createdAt"); !ok {
		return nil, false
	}
	var elems []json.RawMessage
	_ = json.Unmarshal(obj["blocks"], &elems)
	s.Blocks = make([]Block, 0, len(elems))
	for _, e := range elems {
		b, ok := decodeBlock(e)
		if !ok {
			return nil, false
		}
		s.Blocks = append(s.Blocks, b)
	}
	if lc := obj["lastCommit"]; pimessage.FirstByte(lc) == '{' {
		var c LastCommit
		// A struct read from the session file: names exact, a repeated
		// member refuses the record.
		if strictjson.Unmarshal(lc, &c, &strictjson.Policy{AllowInvalidUTF8: true}) == nil {
			s.LastCommit = &c
		}
	}
	return s, true
}

func decodeBlock(raw json.RawMessage) (Block, bool) {
	obj := members(raw)
	if obj == nil || !isArray(obj["entryIds"]) || !isArray(obj["messageKeys"]) {
		return Block{}, false
	}
	b := Block{
		EntryIDs:    stringList(obj["entryIds"]),
		MessageKeys: stringList(obj["messageKeys"]),
		Sizes:       coerceSizes(obj),
	}
	var ok1, ok2 bool
	b.ID, ok1 = obj.String("id")
	b.Summary, ok2 = obj.String("summary")
	if !ok1 || !ok2 {
		return Block{}, false
	}
	b.Topic, _ = obj.String("topic")
	b.CreatedAt, _ = obj.String("createdAt")
	return b, true
}
