package pirpc

import (
	"encoding/json"
)

// ImageContent is an image attached to a prompt: base64 Data and its MIME type.
type ImageContent struct {
	Type     string `json:"type"` // "image"
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

// Streaming behaviours of a prompt sent while a run is active (reference §1.3).
const (
	StreamingSteer    = "steer"
	StreamingFollowUp = "followUp"
)

// PromptCommand is the "prompt" command. While a run is active Pi needs
// StreamingBehavior ([StreamingSteer] or [StreamingFollowUp]), otherwise the
// command fails.
type PromptCommand struct {
	Message           string         `json:"message"`
	Images            []ImageContent `json:"images,omitempty"`
	StreamingBehavior string         `json:"streamingBehavior,omitempty"`
}

// SteerCommand is the "steer" command.
type SteerCommand struct {
	Message string         `json:"message"`
	Images  []ImageContent `json:"images,omitempty"`
}

// FollowUpCommand is the "follow_up" command.
type FollowUpCommand struct {
	Message string         `json:"message"`
	Images  []ImageContent `json:"images,omitempty"`
}

// NewSessionCommand is the "new_session" command.
type NewSessionCommand struct {
	ParentSession string `json:"parentSession,omitempty"`
}

// Prompt dispositions (reference §1.3). After "started" the run ends with
// [AgentSettled]; after "handled" no run starts; after "queued" the current
// run settles.
const (
	DispositionStarted = "started"
	DispositionQueued  = "queued"
	DispositionHandled = "handled"
)

// PromptResult is the data of a prompt, steer or follow_up response.
// Disposition is empty for Pi versions before 0.99 (reference §2).
type PromptResult struct {
	Disposition string `json:"disposition"`
}

// NewSessionResult is the data of a new_session response. Cancelled is true
// when an extension's session_before_switch vetoed the switch.
type NewSessionResult struct {
	Cancelled bool `json:"cancelled"`
}

// Model is Pi's model object, as far as pikit reads it. Pi sends a full object
// (reference §1.4); a plain string (as in the contract fixtures) is read as ID.
type Model struct {
	ID            string   `json:"id"`
	Name          string   `json:"name,omitempty"`
	API           string   `json:"api,omitempty"`
	Provider      string   `json:"provider,omitempty"`
	BaseURL       string   `json:"baseUrl,omitempty"`
	Reasoning     bool     `json:"reasoning,omitempty"`
	Input         []string `json:"input,omitempty"`
	ContextWindow int64    `json:"contextWindow,omitempty"`
	MaxTokens     int64    `json:"maxTokens,omitempty"`
}

// UnmarshalJSON accepts an object or a string (the model id).
func (m *Model) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*m = Model{}
		return unmarshalStrict(b, &m.ID)
	}
	type plain Model
	return unmarshalStrict(b, (*plain)(m))
}

// State is the data of a get_state response (reference §1.4). SessionFile is
// empty with --no-session. Model is nil when Pi sent none.
type State struct {
	SessionID             string `json:"sessionId"`
	SessionFile           string `json:"sessionFile,omitempty"`
	SessionName           string `json:"sessionName,omitempty"`
	Model                 *Model `json:"model,omitempty"`
	ThinkingLevel         string `json:"thinkingLevel,omitempty"`
	IsStreaming           bool   `json:"isStreaming"`
	IsCompacting          bool   `json:"isCompacting"`
	SteeringMode          string `json:"steeringMode,omitempty"`
	FollowUpMode          string `json:"followUpMode,omitempty"`
	AutoCompactionEnabled bool   `json:"autoCompactionEnabled"`
	MessageCount          int    `json:"messageCount"`
	PendingMessageCount   int    `json:"pendingMessageCount"`
}

// EntriesResult is the data of a get_entries response: raw session entries
// (format v3, reference §4) in append order, and the current leaf (nil when
// the session is empty).
type EntriesResult struct {
	Entries []json.RawMessage `json:"entries"`
	LeafID  *string           `json:"leafId"`
}

// ExtensionUIResponse answers a dialog [ExtensionUIRequest] (reference §1.7).
// Set exactly one of Value (select, input, editor), Confirmed (confirm) or
// Cancelled. Pi sends no response to it.
type ExtensionUIResponse struct {
	ID        string  `json:"id"`
	Value     *string `json:"value,omitempty"`
	Confirmed *bool   `json:"confirmed,omitempty"`
	Cancelled bool    `json:"cancelled,omitempty"`
}
