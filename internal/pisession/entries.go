package pisession

import (
	"encoding/json"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// Message is the AgentMessage of a "message" entry, in pikit's one model of
// Pi's data: Raw as written, Role() its role ("user", "assistant",
// "toolResult", "system", "custom", …).
type Message = pimessage.Message

// Custom is a "custom" entry (pi.appendEntry; never in the model's
// context). Data is nil when the entry has none.
type Custom struct {
	CustomType string
	Data       json.RawMessage
}

// CustomMessage is a "custom_message" entry (in the model's context as user
// content). Content and Details are raw; Details is nil when absent.
type CustomMessage struct {
	CustomType string
	Content    json.RawMessage
	Display    bool
	Details    json.RawMessage
}

// Compaction is a "compaction" entry: Summary replaces the entries before
// FirstKeptEntryID in the model's context. Details is nil when absent.
type Compaction struct {
	Summary          string
	FirstKeptEntryID string
	TokensBefore     float64
	Details          json.RawMessage
}

// BranchSummary is a "branch_summary" entry: a summary of the branch left at
// FromID. Details is nil when absent.
type BranchSummary struct {
	FromID  string
	Summary string
	Details json.RawMessage
}

// Label is a "label" entry; Cleared is true when it removes the label of
// TargetID (no label, or an empty one).
type Label struct {
	TargetID string
	Label    string
	Cleared  bool
}

// SessionInfo is a "session_info" entry; Name is "" when unset.
type SessionInfo struct {
	Name string
}

// ModelChange is a "model_change" entry.
type ModelChange struct {
	Provider string
	ModelID  string
}

// ThinkingLevelChange is a "thinking_level_change" entry.
type ThinkingLevelChange struct {
	ThinkingLevel string
}

// decodeAs checks the type and decodes e.Raw into v (case-sensitive names,
// duplicate names allowed with the last value winning, as JSON.parse).
func (e Entry) decodeAs(typ string, v any) error {
	if e.Type != typ {
		return &TypeError{Want: typ, Got: e.Type}
	}
	if err := jsonv2.Unmarshal(e.Raw, v, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)); err != nil {
		return fmt.Errorf("pisession: %s entry %q (line %d): %w", typ, e.ID, e.Line, err)
	}
	return nil
}

// Field returns the raw value of the top-level member name (its last
// occurrence), and whether it is present.
func (e Entry) Field(name string) (json.RawMessage, bool) { return pimessage.Lookup(e.Raw, name) }

// Message returns a "message" entry's message. Errors: a *[TypeError] for
// another entry type, or a decode error when the members have the wrong
// JSON types (a message object whose role is not a string).
func (e Entry) Message() (Message, error) {
	var w struct {
		Message jsontext.Value `json:"message"`
	}
	if err := e.decodeAs(pimessage.TypeMessage, &w); err != nil {
		return Message{}, err
	}
	if len(w.Message) > 0 && w.Message.Kind() == '{' {
		var role struct {
			Role string `json:"role"`
		}
		if err := jsonv2.Unmarshal(w.Message, &role, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)); err != nil {
			return Message{}, fmt.Errorf("pisession: message entry %q (line %d): %w", e.ID, e.Line, err)
		}
	}
	return pimessage.NewMessage(raw(w.Message)), nil
}

// Custom returns a "custom" entry's customType and data.
func (e Entry) Custom() (Custom, error) {
	var w struct {
		CustomType string         `json:"customType"`
		Data       jsontext.Value `json:"data"`
	}
	if err := e.decodeAs(pimessage.TypeCustom, &w); err != nil {
		return Custom{}, err
	}
	return Custom{CustomType: w.CustomType, Data: raw(w.Data)}, nil
}

// CustomMessage returns a "custom_message" entry.
func (e Entry) CustomMessage() (CustomMessage, error) {
	var w struct {
		CustomType string         `json:"customType"`
		Content    jsontext.Value `json:"content"`
		Display    bool           `json:"display"`
		Details    jsontext.Value `json:"details"`
	}
	if err := e.decodeAs(pimessage.TypeCustomMessage, &w); err != nil {
		return CustomMessage{}, err
	}
	return CustomMessage{CustomType: w.CustomType, Content: raw(w.Content), Display: w.Display, Details: raw(w.Details)}, nil
}

// Compaction returns a "compaction" entry.
func (e Entry) Compaction() (Compaction, error) {
	var w struct {
		Summary          string         `json:"summary"`
		FirstKeptEntryID string         `json:"firstKeptEntryId"`
		TokensBefore     float64        `json:"tokensBefore"`
		Details          jsontext.Value `json:"details"`
	}
	if err := e.decodeAs(pimessage.TypeCompaction, &w); err != nil {
		return Compaction{}, err
	}
	return Compaction{Summary: w.Summary, FirstKeptEntryID: w.FirstKeptEntryID, TokensBefore: w.TokensBefore, Details: raw(w.Details)}, nil
}

// BranchSummary returns a "branch_summary" entry.
func (e Entry) BranchSummary() (BranchSummary, error) {
	var w struct {
		FromID  string         `json:"fromId"`
		Summary string         `json:"summary"`
		Details jsontext.Value `json:"details"`
	}
	if err := e.decodeAs(pimessage.TypeBranchSummary, &w); err != nil {
		return BranchSummary{}, err
	}
	return BranchSummary{FromID: w.FromID, Summary: w.Summary, Details: raw(w.Details)}, nil
}

// Label returns a "label" entry.
func (e Entry) Label() (Label, error) {
	var w struct {
		TargetID string  `json:"targetId"`
		Label    *string `json:"label"`
	}
	if err := e.decodeAs(pimessage.TypeLabel, &w); err != nil {
		return Label{}, err
	}
	l := Label{TargetID: w.TargetID, Cleared: w.Label == nil || *w.Label == ""}
	if w.Label != nil {
		l.Label = *w.Label
	}
	return l, nil
}

// SessionInfo returns a "session_info" entry.
func (e Entry) SessionInfo() (SessionInfo, error) {
	var w struct {
		Name string `json:"name"`
	}
	if err := e.decodeAs(pimessage.TypeSessionInfo, &w); err != nil {
		return SessionInfo{}, err
	}
	return SessionInfo{Name: w.Name}, nil
}

// ModelChange returns a "model_change" entry.
func (e Entry) ModelChange() (ModelChange, error) {
	var w struct {
		Provider string `json:"provider"`
		ModelID  string `json:"modelId"`
	}
	if err := e.decodeAs(pimessage.TypeModelChange, &w); err != nil {
		return ModelChange{}, err
	}
	return ModelChange{Provider: w.Provider, ModelID: w.ModelID}, nil
}

// ThinkingLevelChange returns a "thinking_level_change" entry.
func (e Entry) ThinkingLevelChange() (ThinkingLevelChange, error) {
	var w struct {
		ThinkingLevel string `json:"thinkingLevel"`
	}
	if err := e.decodeAs(pimessage.TypeThinkingLevelChange, &w); err != nil {
		return ThinkingLevelChange{}, err
	}
	return ThinkingLevelChange{ThinkingLevel: w.ThinkingLevel}, nil
}

// raw turns an absent value into nil.
func raw(v jsontext.Value) json.RawMessage {
	if len(v) == 0 {
		return nil
	}
	return json.RawMessage(v)
}
