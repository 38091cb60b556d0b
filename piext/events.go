package piext

import (
	"encoding/json"

	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// Pi 1.6.0's events, the values of [Hook.Event]. The package doc's table
// says, for each, its payload, what a handler may return, its default
// failure mode and its timeout.
const (
	EventProjectTrust          = "project_trust"
	EventResourcesDiscover     = "resources_discover"
	EventMCPServersChange      = "mcp_servers_change"
	EventSessionStart          = "session_start"
	EventSessionInfoChanged    = "session_info_changed"
	EventSessionBeforeSwitch   = "session_before_switch"
	EventSessionBeforeFork     = "session_before_fork"
	EventSessionBeforeCompact  = "session_before_compact"
	EventSessionCompact        = "session_compact"
	EventSessionCompactFailed  = "session_compact_failed"
	EventSessionShutdown       = "session_shutdown"
	EventSessionBeforeTree     = "session_before_tree"
	EventSessionTree           = "session_tree"
	EventContext               = "context"
	EventContextWithSystem     = "context_with_system"
	EventBeforeProviderHeaders = "before_provider_headers"
	EventBeforeProviderRequest = "before_provider_request"
	EventAfterProviderResponse = "after_provider_response"
	EventProviderStreamEvent   = "provider_stream_event"
	EventCacheWarmingDecision  = "cache_warming_decision"
	EventBeforeAgentStart      = "before_agent_start"
	EventAgentStart            = "agent_start"
	EventAgentEnd              = "agent_end"
	EventAgentBeforeSettle     = "agent_before_settle"
	EventAgentSettled          = "agent_settled"
	EventUIPromptStart         = "ui_prompt_start"
	EventUIPromptEnd           = "ui_prompt_end"
	EventTurnStart             = "turn_start"
	EventTurnEnd               = "turn_end"
	EventMessageStart          = "message_start"
	EventMessageUpdate         = "message_update"
	EventMessageEnd            = "message_end"
	EventToolExecutionStart    = "tool_execution_start"
	EventToolExecutionUpdate   = "tool_execution_update"
	EventToolExecutionEnd      = "tool_execution_end"
	EventToolCall              = "tool_call"
	EventToolResult            = "tool_result"
	EventModelSelect           = "model_select"
	EventThinkingLevelSelect   = "thinking_level_select"
	EventUserBash              = "user_bash"
	EventInput                 = "input"
)

// SessionStartEvent is session_start's payload.
type SessionStartEvent struct {
	// Reason is "startup", "reload", "new", "resume" or "fork".
	Reason string `json:"reason"`
	// PreviousSessionFile is the session left behind, for "new", "resume"
	// and "fork"; empty otherwise.
	PreviousSessionFile string `json:"previousSessionFile,omitempty"`
}

// SessionShutdownEvent is session_shutdown's payload.
type SessionShutdownEvent struct {
	// Reason is "quit", "reload", "new", "resume" or "fork".
	Reason string `json:"reason"`
	// TargetSessionFile is the session a replacement goes to; empty
	// otherwise.
	TargetSessionFile string `json:"targetSessionFile,omitempty"`
}

// BeforeAgentStartEvent is before_agent_start's payload.
type BeforeAgentStartEvent struct {
	// MessageType is "user" (a prompt; Prompt and Images are set) or
	// "custom" (pi.sendMessage with triggerTurn; Message is set).
	MessageType string    `json:"messageType"`
	Prompt      string    `json:"prompt,omitempty"`
	Images      []Content `json:"images,omitempty"`
	Message     *Message  `json:"message,omitempty"`
	// SystemPrompt is the system prompt as earlier handlers left it.
	SystemPrompt string `json:"systemPrompt"`
	// SystemPromptOptions are the structured prompt sections (Pi's
	// NormalizedBuildSystemPromptOptions), to read: Pi takes in-place
	// edits of them, which do not cross to Go.
	SystemPromptOptions json.RawMessage `json:"systemPromptOptions,omitempty"`
}

// BeforeAgentStartEventResult is what a before_agent_start handler may
// return: a message Pi stores in the session and sends to the model,
// and/or a replacement of the whole system prompt for this run ("" keeps
// it).
type BeforeAgentStartEventResult struct {
	Message      *CustomMessage `json:"message,omitempty"`
	SystemPrompt string         `json:"systemPrompt,omitempty"`
}

// ContextEvent is the payload of context and context_with_system: the
// messages of one LLM call, rebuilt from the sidecar's mirror (the same as
// [Event.Messages]). A handler returns a *[ContextResult] to change them.
type ContextEvent struct {
	Messages []Message
}

// ContextResult replaces the messages of one LLM call. Messages taken
// unchanged from [Event.Messages] are sent back as references, so only new
// or edited messages cross the pipe.
type ContextResult struct{ Messages []Message }

// ToolCallEvent is tool_call's payload: a call Pi validated and is about
// to execute.
type ToolCallEvent struct {
	ToolCallID string `json:"toolCallId"`
	// ParentToolCallID is set when another tool made this call.
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
	ToolName         string `json:"toolName"`
	// Input is the call's arguments as JSON, to read: Pi takes in-place
	// edits, which do not cross to Go.
	Input json.RawMessage `json:"input"`
}

// DecodeInput unmarshals the call's arguments into v strictly, as
// [Event.Decode] does (for the built-in bash tool, v may be a
// struct{ Command string `json:"command"` }).
func (e ToolCallEvent) DecodeInput(v any) error { return wire.Decode(e.Input, v) }

// ToolCallEventResult is what a tool_call handler may return: Block stops
// the call with Reason as the tool's error text; Terminate, on a blocked
// call, asks the agent to stop after this batch of tool calls. A nil
// result lets the call run.
type ToolCallEventResult struct {
	Block     bool   `json:"block,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Terminate bool   `json:"terminate,omitempty"`
}

// ToolResultEvent is tool_result's payload: a tool's result before Pi
// records it.
type ToolResultEvent struct {
	ToolCallID        string          `json:"toolCallId"`
	ParentToolCallID  string          `json:"parentToolCallId,omitempty"`
	ToolName          string          `json:"toolName"`
	Input             json.RawMessage `json:"input"`
	Content           []Content       `json:"content"`
	Details           json.RawMessage `json:"details,omitempty"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError"`
	Usage             json.RawMessage `json:"usage,omitempty"`
}

// ToolResultEventResult patches a tool's result; a field left at its zero
// value keeps Pi's (a nil Content, a nil Details, a nil IsError). Replacing
// Content without StructuredContent drops the structured content.
type ToolResultEventResult struct {
	Content           []Content `json:"content,omitzero"`
	Details           any       `json:"details,omitempty"`
	StructuredContent any       `json:"structuredContent,omitempty"`
	IsError           *bool     `json:"isError,omitempty"`
}

// InputEvent is input's payload: what the user typed (or an RPC client or
// an extension sent), before skill and template expansion.
type InputEvent struct {
	Text   string    `json:"text"`
	Images []Content `json:"images,omitempty"`
	// Source is "interactive", "rpc" or "extension".
	Source string `json:"source"`
	// StreamingBehavior is "steer" or "followUp" while the agent runs, ""
	// when idle.
	StreamingBehavior string `json:"streamingBehavior,omitempty"`
}

// InputAction is an input handler's decision.
type InputAction string

// Input actions.
const (
	InputContinue  InputAction = "continue"  // pass the input on unchanged
	InputTransform InputAction = "transform" // pass on Text (and Images) instead
	InputHandled   InputAction = "handled"   // the extension handled it; no agent run
)

// InputEventResult is what an input handler may return.
type InputEventResult struct {
	Action InputAction `json:"action"`
	Text   string      `json:"text,omitempty"`   // with InputTransform
	Images []Content   `json:"images,omitempty"` // with InputTransform
}

// Model is the part of Pi's Model most handlers read; the whole object is
// in [Event.Payload].
type Model struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Provider      string `json:"provider"`
	API           string `json:"api"`
	Reasoning     bool   `json:"reasoning"`
	ContextWindow int    `json:"contextWindow"`
	MaxTokens     int    `json:"maxTokens"`
}

// ModelSelectEvent is model_select's payload.
type ModelSelectEvent struct {
	Model         Model  `json:"model"`
	PreviousModel *Model `json:"previousModel,omitempty"` // nil on the first selection
	// Source is "set", "cycle" or "restore".
	Source string `json:"source"`
}

// CompactionPreparation is what Pi prepared for a compaction (Pi's
// CompactionPreparation, without fileOps, whose Sets do not survive JSON;
// the whole object is in [Event.Payload]).
type CompactionPreparation struct {
	FirstKeptEntryID    string    `json:"firstKeptEntryId"`
	MessagesToSummarize []Message `json:"messagesToSummarize"`
	TurnPrefixMessages  []Message `json:"turnPrefixMessages"`
	IsSplitTurn         bool      `json:"isSplitTurn"`
	TokensBefore        float64   `json:"tokensBefore"`
	PreviousSummary     string    `json:"previousSummary,omitempty"`
	// Settings are Pi's CompactionSettings as JSON.
	Settings json.RawMessage `json:"settings,omitempty"`
}

// PreparationEdit changes Pi's preparation before Pi's own summarizer
// runs: the bridge writes these fields into it. An empty FirstKeptEntryID
// and a nil message list keep Pi's; IsSplitTurn is always written (copy
// it from the event to keep it).
type PreparationEdit struct {
	FirstKeptEntryID    string    `json:"firstKeptEntryId,omitempty"`
	MessagesToSummarize []Message `json:"messagesToSummarize,omitzero"`
	TurnPrefixMessages  []Message `json:"turnPrefixMessages,omitzero"`
	IsSplitTurn         bool      `json:"isSplitTurn"`
}

// SessionBeforeCompactEvent is session_before_compact's payload. It
// carries the whole branch: a handler that needs it may want a longer
// [Hook.Timeout].
type SessionBeforeCompactEvent struct {
	Preparation        CompactionPreparation `json:"preparation"`
	BranchEntries      []Entry               `json:"branchEntries"`
	CustomInstructions string                `json:"customInstructions,omitempty"`
	// Reason is "manual", "threshold" or "overflow".
	Reason    string `json:"reason"`
	WillRetry bool   `json:"willRetry"`
}

// CompactionResult is a compaction an extension wrote itself (Pi's
// CompactionResult).
type CompactionResult struct {
	Summary              string  `json:"summary"`
	FirstKeptEntryID     string  `json:"firstKeptEntryId"`
	TokensBefore         float64 `json:"tokensBefore"`
	EstimatedTokensAfter float64 `json:"estimatedTokensAfter,omitempty"`
	Details              any     `json:"details,omitempty"`
}

// SessionBeforeCompactResult is what a session_before_compact handler may
// return: Cancel the compaction, or give the Compaction to record instead
// of Pi's summary, or edit the Preparation Pi's own summarizer works on.
type SessionBeforeCompactResult struct {
	Cancel      bool              `json:"cancel,omitempty"`
	Compaction  *CompactionResult `json:"compaction,omitempty"`
	Preparation *PreparationEdit  `json:"preparation,omitempty"`
}

// typedEvent is implemented by the payload types of this file: the events
// each is the payload of, the first being the default.
type typedEvent interface{ events() []string }

func (SessionStartEvent) events() []string         { return []string{EventSessionStart} }
func (SessionShutdownEvent) events() []string      { return []string{EventSessionShutdown} }
func (BeforeAgentStartEvent) events() []string     { return []string{EventBeforeAgentStart} }
func (ContextEvent) events() []string              { return []string{EventContext, EventContextWithSystem} }
func (ToolCallEvent) events() []string             { return []string{EventToolCall} }
func (ToolResultEvent) events() []string           { return []string{EventToolResult} }
func (InputEvent) events() []string                { return []string{EventInput} }
func (ModelSelectEvent) events() []string          { return []string{EventModelSelect} }
func (SessionBeforeCompactEvent) events() []string { return []string{EventSessionBeforeCompact} }

// typedResult is implemented by the result types of this file: the events
// each answers.
type typedResult interface{ answers() []string }

func (*BeforeAgentStartEventResult) answers() []string { return []string{EventBeforeAgentStart} }
func (*ContextResult) answers() []string               { return []string{EventContext, EventContextWithSystem} }
func (*ToolCallEventResult) answers() []string         { return []string{EventToolCall} }
func (*ToolResultEventResult) answers() []string       { return []string{EventToolResult} }
func (*InputEventResult) answers() []string            { return []string{EventInput} }
func (*SessionBeforeCompactResult) answers() []string  { return []string{EventSessionBeforeCompact} }
