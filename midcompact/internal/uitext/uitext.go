// Package uitext holds midcompact's user- and model-visible texts that
// more than one of its packages shows or tests compare: notices of the
// transaction commands and planning surfaces, tool results and
// registration texts, the start chooser (reference §1.1, §1.3, §5).
// Nothing here is midcompact API.
package uitext

// Texts of the transaction commands (reference §5.1).
const (
	MsgNoTransaction     = "No active midcompact transaction."
	MsgAbortAgentLocked  = "The Agent is currently processing the midcompact plan. Abort after the Agent turn ends."
	MsgCommitAgentLocked = "The Agent is currently processing the midcompact plan. Commit after the Agent turn ends."
	MsgCommitCancelled   = "Midcompact commit cancelled by tree navigation."
	MsgAborted           = "Midcompact transaction aborted; returned to anchor."
	MsgStartCancelled    = "Midcompact start cancelled."
)

// Tool texts (reference §1.3).
const (
	MsgToolNoTransaction = "No active midcompact transaction. Ask the user to run `/midcompact:start` first."
	MsgToolBlocked       = "Agent operation blocked: a user editing UI holds the planning lock."
	NoticeToolBlocked    = "A Selection/Review UI is currently editing the midcompact plan. Close it before the Agent can continue."
)

// ToolLabel and ToolDescription are the registration texts of the tool
// midcompact.ToolName (reference §1.1).
const (
	ToolLabel       = "Midcompact"
	ToolDescription = "Inspect, measure, locate, plan, or recall mid-context compression. Use the `midcompact` skill to route planning versus recall; during an active transaction, follow the runtime prompt for the state-specific first action."
)

// Texts of the planning surfaces and the workbench lifecycle (reference
// §5.3–§5.6). User-facing copy says "can't compress" where the tool says
// "protected".
const (
	MsgUIAlreadyOpen     = "A planning UI is already open. Close it before opening another; use /midcompact:close-webui if its WebUI is stuck."
	MsgSelectAgentLocked = "The Agent is currently processing the midcompact plan. Try Selection after the Agent turn ends."
	MsgReviewAgentLocked = "The Agent is currently processing the midcompact plan. Try opening review after the Agent turn ends."
	MsgPlanSaved         = "Plan saved. Tell the Agent to continue processing it when ready."
	MsgSelectionClosed   = "Selection closed. The plan remains available; reopen select or tell the Agent to continue."
	MsgNoWebUI           = "No midcompact WebUI is open in this session. No planning lock was changed."
	CloseWebUITitle      = "Close midcompact WebUI?"
	CloseWebUIMessage    = "The saved plan and transaction will be kept. Unsaved browser edits will not be saved."
	MsgWebUIClosed       = "Midcompact WebUI closed. The saved plan and transaction are unchanged."
	SurfaceWebOption     = "Web UI — Recommended"
	SurfaceTUIOption     = "TUI — Built into Pi"
	SurfaceCancelOption  = "Cancel"
)

// Start-mode chooser (reference §5.3): Agent direct first so Enter picks
// it. The option labels are midcompact's own (the reference gives only
// their order and the title's subject).
const (
	StartChooserTitle = "Midcompact: freeze the current context as an anchor and plan compression"
	StartOptionAgent  = "Agent direct — the Agent plans first"
	StartOptionUser   = "User manual — you select ranges first"
	StartOptionDrop   = "Drop"
)

// StartPromptPrefix is the first line of the start prompt; a prompt that
// starts with it gets no handoff message (reference §5.2).
const StartPromptPrefix = "A mid-compaction transaction is active on a frozen anchor snapshot."

// AbortLabel is the tree label an abort's navigation puts on the anchor
// when the anchor has none (an existing label is put again unchanged, so a
// user's bookmark survives): Pi 1.6.0 persists that label as a `label`
// entry whose parent is the anchor, the session's new last entry, which is
// where `pi -c` resumes.
const AbortLabel = "midcompact aborted"
