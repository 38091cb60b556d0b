package pimessage

// Roles of an AgentMessage (reference §1.5). Pi may send others: a reader
// keeps messages of unknown roles.
const (
	RoleSystem            = "system"
	RoleUser              = "user"
	RoleAssistant         = "assistant"
	RoleToolResult        = "toolResult"
	RoleBashExecution     = "bashExecution"
	RoleCustom            = "custom"
	RoleBranchSummary     = "branchSummary"
	RoleCompactionSummary = "compactionSummary"
)

// Kinds of a content part: the part's "type" (reference §1.5). User and
// tool result content holds text and image parts; assistant content holds
// text, thinking and toolCall parts.
const (
	KindText     = "text"     // {"type":"text","text"}
	KindImage    = "image"    // {"type":"image","data":<base64>,"mimeType"}
	KindThinking = "thinking" // {"type":"thinking","thinking"}
	KindToolCall = "toolCall" // {"type":"toolCall","id","name","arguments"}
)

// Entry types Pi 1.6.0 writes in a session file (reference §4). The
// header line has type [TypeSession] and is not an entry.
const (
	TypeSession             = "session"
	TypeMessage             = "message"
	TypeModelChange         = "model_change"
	TypeThinkingLevelChange = "thinking_level_change"
	TypeCompaction          = "compaction"
	TypeBranchSummary       = "branch_summary"
	TypeCustom              = "custom"
	TypeCustomMessage       = "custom_message"
	TypeLabel               = "label"
	TypeSessionInfo         = "session_info"
	TypeContextEdit         = "context_edit" // {targetId, replacement: {content} | null}
	TypeUsage               = "usage"        // {kind, provider, model, usage, note?}
)
