package piext

import "github.com/pikit-dev/pikit/internal/pimessage"

// Roles of a Pi message: what [Message.Role] returns for the messages of a
// [ContextEvent] and of a "message" [Entry] ([Entry.Message]), the "role"
// member of the message JSON (reference §1.5). Pi may send other roles; a
// handler keeps a message of a role it does not know as it is.
const (
	RoleUser              = pimessage.RoleUser              // "user": a prompt
	RoleAssistant         = pimessage.RoleAssistant         // "assistant": the model's answer, with its tool calls
	RoleToolResult        = pimessage.RoleToolResult        // "toolResult": one tool call's result: toolCallId, toolName, content, isError
	RoleSystem            = pimessage.RoleSystem            // "system"
	RoleBashExecution     = pimessage.RoleBashExecution     // "bashExecution": a shell command the user ran, with its output
	RoleCustom            = pimessage.RoleCustom            // "custom": an extension's message (customType)
	RoleBranchSummary     = pimessage.RoleBranchSummary     // "branchSummary": the summary of a branch left in the session tree
	RoleCompactionSummary = pimessage.RoleCompactionSummary // "compactionSummary": the summary a compaction left in place of older messages
)

// Kinds of a content part, its "type" member: [Content.Type] (text and
// image parts, in a [ToolResult] or a message), and each part of a
// message's content array ([Message.Field]("content")). User and tool
// result content holds text and image parts; assistant content holds text,
// thinking and toolCall parts (reference §1.5).
const (
	KindText     = pimessage.KindText     // {"type":"text","text"}
	KindImage    = pimessage.KindImage    // {"type":"image","data":<base64>,"mimeType"}
	KindThinking = pimessage.KindThinking // {"type":"thinking","thinking"}
	KindToolCall = pimessage.KindToolCall // {"type":"toolCall","id","name","arguments"}
)
