package pirpc

import (
	"encoding/json"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// Record is one decoded line of Pi's stdout: a [*Response] or an [Event].
// The set is closed: only this package implements it.
type Record interface{ isRecord() }

// Event is a record without a command id: the agent events of reference §1.5,
// [*ExtensionUIRequest], [*ExtensionError], a [*RawEvent] for any type this
// package does not know, and (on [Client.Events] only) a [*ProtocolError].
// Events are pointers; switch on the concrete type.
type Event interface {
	Record
	// EventType returns the wire "type" (e.g. "agent_settled").
	EventType() string
}

// Response is {"type":"response","command","success","id"?,"data"?,"error"?}
// (reference §1.2). Data stays raw until the caller knows its shape.
type Response struct {
	ID      string          `json:"id,omitempty"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data,omitempty"`
	Error   string          `json:"error,omitempty"`
}

func (*Response) isRecord() {}

// Usage is the token usage of an assistant message (reference §1.5).
type Usage struct {
	Input       int64     `json:"input"`
	Output      int64     `json:"output"`
	CacheRead   int64     `json:"cacheRead"`
	CacheWrite  int64     `json:"cacheWrite"`
	Reasoning   int64     `json:"reasoning,omitempty"`
	TotalTokens int64     `json:"totalTokens"`
	Cost        UsageCost `json:"cost"`
}

// UsageCost is the cost part of [Usage], in the provider's currency units.
type UsageCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// AgentMessage is a message as Pi sends it in events and get_messages
// (reference §1.5): roles "system", "user", "assistant", "toolResult",
// "custom" and others (unknown roles are kept). Content is a string or an
// array of blocks, so it stays raw; use [AgentMessage.Text].
type AgentMessage struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content,omitempty"`
	Timestamp    int64           `json:"timestamp,omitempty"`
	StopReason   string          `json:"stopReason,omitempty"` // assistant: stop, length, toolUse, error, aborted, pending
	ErrorMessage string          `json:"errorMessage,omitempty"`
	API          string          `json:"api,omitempty"`
	Provider     string          `json:"provider,omitempty"`
	Model        string          `json:"model,omitempty"`
	ResponseID   string          `json:"responseId,omitempty"`
	Usage        *Usage          `json:"usage,omitempty"`
	ToolCallID   string          `json:"toolCallId,omitempty"` // toolResult
	ToolName     string          `json:"toolName,omitempty"`   // toolResult
	IsError      bool            `json:"isError,omitempty"`    // toolResult
	CustomType   string          `json:"customType,omitempty"` // custom
}

// Text returns the concatenated "text" parts of the content, or the content
// itself when it is a string. Other part kinds are skipped (see
// [pimessage.Text]).
func (m *AgentMessage) Text() string { return pimessage.Text(m.Content) }

// AgentStart starts one low-level run; retries and follow-ups start more.
type AgentStart struct{}

// AgentEnd ends one low-level run. WillRetry is true when auto-retry follows.
type AgentEnd struct {
	Messages  []AgentMessage `json:"messages"`
	WillRetry bool           `json:"willRetry"`
}

// AgentSettled is Pi 1.6.0's final idle signal of a session-level run
// (reference §0, §6.1). Aborted is true after an abort.
type AgentSettled struct {
	Aborted bool `json:"aborted"`
}

// TurnStart has no fields on the wire.
type TurnStart struct{}

// TurnEnd ends one assistant turn.
type TurnEnd struct {
	Message     AgentMessage   `json:"message"`
	ToolResults []AgentMessage `json:"toolResults"`
}

// MessageStart announces a message; an assistant placeholder has
// stopReason "pending".
type MessageStart struct {
	Message AgentMessage `json:"message"`
}

// MessageUpdate carries one streaming delta of the assistant message.
type MessageUpdate struct {
	Usage                 *Usage                `json:"usage,omitempty"`
	AssistantMessageEvent AssistantMessageEvent `json:"assistantMessageEvent"`
}

// AssistantMessageEvent is the delta inside [MessageUpdate] (reference §1.5):
// Type is text_start/text_delta/text_end, thinking_*, toolcall_start/
// toolcall_delta/toolcall_end, or (in the union, rarely on the wire) start,
// done, error.
type AssistantMessageEvent struct {
	Type         string          `json:"type"`
	ContentIndex int             `json:"contentIndex"`
	Delta        string          `json:"delta,omitempty"`    // *_delta
	Content      string          `json:"content,omitempty"`  // text_end, thinking_end
	ID           string          `json:"id,omitempty"`       // toolcall_start
	ToolName     string          `json:"toolName,omitempty"` // toolcall_start
	ToolCall     json.RawMessage `json:"toolCall,omitempty"` // toolcall_end
	Reason       string          `json:"reason,omitempty"`   // error, done
	Error        json.RawMessage `json:"error,omitempty"`    // error: message or text
}

// MessageEnd carries the final, authoritative message.
type MessageEnd struct {
	Message AgentMessage `json:"message"`
}

// ToolExecutionStart: a tool call begins.
type ToolExecutionStart struct {
	ToolCallID       string          `json:"toolCallId"`
	ToolName         string          `json:"toolName"`
	Args             json.RawMessage `json:"args,omitempty"`
	ParentToolCallID string          `json:"parentToolCallId,omitempty"`
}

// ToolExecutionUpdate: partial tool output (for bash, accumulated output).
type ToolExecutionUpdate struct {
	ToolCallID       string          `json:"toolCallId"`
	ToolName         string          `json:"toolName"`
	Args             json.RawMessage `json:"args,omitempty"`
	PartialResult    json.RawMessage `json:"partialResult,omitempty"`
	ParentToolCallID string          `json:"parentToolCallId,omitempty"`
}

// ToolExecutionEnd: a tool call finished; IsError marks a failed tool.
type ToolExecutionEnd struct {
	ToolCallID       string          `json:"toolCallId"`
	ToolName         string          `json:"toolName"`
	Result           json.RawMessage `json:"result,omitempty"`
	IsError          bool            `json:"isError"`
	DurationMs       float64         `json:"durationMs,omitempty"`
	ParentToolCallID string          `json:"parentToolCallId,omitempty"`
}

// QueueUpdate carries the full current steering and follow-up queues.
type QueueUpdate struct {
	Steering []string `json:"steering"`
	FollowUp []string `json:"followUp"`
}

// EntryAppended: a session entry was appended (custom entries, context_edit).
type EntryAppended struct {
	Entry json.RawMessage `json:"entry"`
}

// SessionInfoChanged: the session name changed (nil = cleared).
type SessionInfoChanged struct {
	Name *string `json:"name,omitempty"`
}

// ThinkingLevelChanged: the thinking level changed.
type ThinkingLevelChanged struct {
	Level string `json:"level"`
}

// CompactionStart: Reason is "manual", "threshold" or "overflow".
type CompactionStart struct {
	Reason string `json:"reason"`
}

// CompactionEnd ends a compaction; a failure has ErrorMessage set.
type CompactionEnd struct {
	Reason       string          `json:"reason"`
	Result       json.RawMessage `json:"result,omitempty"` // CompactionResult or null
	Aborted      bool            `json:"aborted"`
	WillRetry    bool            `json:"willRetry"`
	ErrorMessage string          `json:"errorMessage,omitempty"`
}

// AutoRetryStart: a provider error is retried. DelayMs is in milliseconds.
type AutoRetryStart struct {
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// AutoRetryEnd ends a retry sequence; Success false means it gave up.
type AutoRetryEnd struct {
	Success    bool   `json:"success"`
	Attempt    int    `json:"attempt"`
	FinalError string `json:"finalError,omitempty"`
}

// SummarizationRetryScheduled: a compaction or branch-summary call is retried.
type SummarizationRetryScheduled struct {
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// SummarizationRetryAttemptStart: Source is "compaction" (with Reason) or
// "branchSummary".
type SummarizationRetryAttemptStart struct {
	Source string `json:"source"`
	Reason string `json:"reason,omitempty"`
}

// SummarizationRetryFinished has no fields.
type SummarizationRetryFinished struct{}

// BashExecutionUpdate streams output of the RPC bash command; ID repeats the
// bash command's id.
type BashExecutionUpdate struct {
	ID    string `json:"id,omitempty"`
	Delta string `json:"delta"`
}

// ExtensionError: an extension handler threw; the run continues.
// ExtensionPath is an absolute path: do not log it.
type ExtensionError struct {
	ExtensionPath string `json:"extensionPath"`
	Event         string `json:"event"`
	Error         string `json:"error"`
}

// ExtensionUIRequest is a UI request of an extension (reference §1.7). Dialog
// methods (select, confirm, input, editor) wait for an answer sent with
// [Client.RespondUI] or [Client.CancelUI]; the others are fire-and-forget.
type ExtensionUIRequest struct {
	ID              string   `json:"id"`
	Method          string   `json:"method"`
	Title           string   `json:"title,omitempty"`
	Message         string   `json:"message,omitempty"`     // confirm, notify
	Options         []string `json:"options,omitempty"`     // select
	Placeholder     string   `json:"placeholder,omitempty"` // input
	Prefill         string   `json:"prefill,omitempty"`     // editor
	Timeout         int64    `json:"timeout,omitempty"`     // ms; Pi resolves the dialog itself on expiry
	NotifyType      string   `json:"notifyType,omitempty"`  // info, warning, error
	StatusKey       string   `json:"statusKey,omitempty"`
	StatusText      *string  `json:"statusText,omitempty"` // nil = clear
	WidgetKey       string   `json:"widgetKey,omitempty"`
	WidgetLines     []string `json:"widgetLines,omitempty"`
	WidgetPlacement string   `json:"widgetPlacement,omitempty"`
	Text            string   `json:"text,omitempty"` // set_editor_text
}

// NeedsResponse reports whether Pi waits for an extension_ui_response
// (methods select, confirm, input, editor).
func (r *ExtensionUIRequest) NeedsResponse() bool {
	switch r.Method {
	case "select", "confirm", "input", "editor":
		return true
	}
	return false
}

// RawEvent is an event whose type this package does not know (forward
// compatibility). Raw is the whole record.
type RawEvent struct {
	Type string
	Raw  json.RawMessage
}

func (*AgentStart) EventType() string                     { return "agent_start" }
func (*AgentEnd) EventType() string                       { return "agent_end" }
func (*AgentSettled) EventType() string                   { return "agent_settled" }
func (*TurnStart) EventType() string                      { return "turn_start" }
func (*TurnEnd) EventType() string                        { return "turn_end" }
func (*MessageStart) EventType() string                   { return "message_start" }
func (*MessageUpdate) EventType() string                  { return "message_update" }
func (*MessageEnd) EventType() string                     { return "message_end" }
func (*ToolExecutionStart) EventType() string             { return "tool_execution_start" }
func (*ToolExecutionUpdate) EventType() string            { return "tool_execution_update" }
func (*ToolExecutionEnd) EventType() string               { return "tool_execution_end" }
func (*QueueUpdate) EventType() string                    { return "queue_update" }
func (*EntryAppended) EventType() string                  { return "entry_appended" }
func (*SessionInfoChanged) EventType() string             { return "session_info_changed" }
func (*ThinkingLevelChanged) EventType() string           { return "thinking_level_changed" }
func (*CompactionStart) EventType() string                { return "compaction_start" }
func (*CompactionEnd) EventType() string                  { return "compaction_end" }
func (*AutoRetryStart) EventType() string                 { return "auto_retry_start" }
func (*AutoRetryEnd) EventType() string                   { return "auto_retry_end" }
func (*SummarizationRetryScheduled) EventType() string    { return "summarization_retry_scheduled" }
func (*SummarizationRetryAttemptStart) EventType() string { return "summarization_retry_attempt_start" }
func (*SummarizationRetryFinished) EventType() string     { return "summarization_retry_finished" }
func (*BashExecutionUpdate) EventType() string            { return "bash_execution_update" }
func (*ExtensionError) EventType() string                 { return "extension_error" }
func (*ExtensionUIRequest) EventType() string             { return "extension_ui_request" }
func (e *RawEvent) EventType() string                     { return e.Type }

func (*AgentStart) isRecord()                     {}
func (*AgentEnd) isRecord()                       {}
func (*AgentSettled) isRecord()                   {}
func (*TurnStart) isRecord()                      {}
func (*TurnEnd) isRecord()                        {}
func (*MessageStart) isRecord()                   {}
func (*MessageUpdate) isRecord()                  {}
func (*MessageEnd) isRecord()                     {}
func (*ToolExecutionStart) isRecord()             {}
func (*ToolExecutionUpdate) isRecord()            {}
func (*ToolExecutionEnd) isRecord()               {}
func (*QueueUpdate) isRecord()                    {}
func (*EntryAppended) isRecord()                  {}
func (*SessionInfoChanged) isRecord()             {}
func (*ThinkingLevelChanged) isRecord()           {}
func (*CompactionStart) isRecord()                {}
func (*CompactionEnd) isRecord()                  {}
func (*AutoRetryStart) isRecord()                 {}
func (*AutoRetryEnd) isRecord()                   {}
func (*SummarizationRetryScheduled) isRecord()    {}
func (*SummarizationRetryAttemptStart) isRecord() {}
func (*SummarizationRetryFinished) isRecord()     {}
func (*BashExecutionUpdate) isRecord()            {}
func (*ExtensionError) isRecord()                 {}
func (*ExtensionUIRequest) isRecord()             {}
func (*RawEvent) isRecord()                       {}

// newEvent returns an empty event for a known wire type, or nil.
func newEvent(typ string) Event {
	switch typ {
	case "agent_start":
		return &AgentStart{}
	case "agent_end":
		return &AgentEnd{}
	case "agent_settled":
		return &AgentSettled{}
	case "turn_start":
		return &TurnStart{}
	case "turn_end":
		return &TurnEnd{}
	case "message_start":
		return &MessageStart{}
	case "message_update":
		return &MessageUpdate{}
	case "message_end":
		return &MessageEnd{}
	case "tool_execution_start":
		return &ToolExecutionStart{}
	case "tool_execution_update":
		return &ToolExecutionUpdate{}
	case "tool_execution_end":
		return &ToolExecutionEnd{}
	case "queue_update":
		return &QueueUpdate{}
	case "entry_appended":
		return &EntryAppended{}
	case "session_info_changed":
		return &SessionInfoChanged{}
	case "thinking_level_changed":
		return &ThinkingLevelChanged{}
	case "compaction_start":
		return &CompactionStart{}
	case "compaction_end":
		return &CompactionEnd{}
	case "auto_retry_start":
		return &AutoRetryStart{}
	case "auto_retry_end":
		return &AutoRetryEnd{}
	case "summarization_retry_scheduled":
		return &SummarizationRetryScheduled{}
	case "summarization_retry_attempt_start":
		return &SummarizationRetryAttemptStart{}
	case "summarization_retry_finished":
		return &SummarizationRetryFinished{}
	case "bash_execution_update":
		return &BashExecutionUpdate{}
	case "extension_error":
		return &ExtensionError{}
	case "extension_ui_request":
		return &ExtensionUIRequest{}
	}
	return nil
}
