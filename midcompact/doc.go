// Package midcompact is planned mid-conversation compaction for Pi (seed
// 001): the agent and the user freeze the conversation as an anchor, cut it
// into atoms, choose ranges, write a summary for each and commit; committed
// ranges (blocks) are replaced by their summaries in every later LLM request
// and the exact original stays recallable.
//
// This package is the Pi-independent core, pure Go over Pi session entries
// ([pisession.Entry]); the Pi extension (on piext) only wires Pi events,
// commands and UI calls to it, and `pikit midcompact atoms|status` reads
// session files offline with it.
//
// # Layers
//
//   - Messages: [BuildSessionContext] ports Pi 1.6.0's branch→messages
//     conversion (compaction, branch summaries, custom messages, context
//     edits, settings); [MessageKey] is the upstream `role:timestamp:
//     fnv1a64(stableStringify)` key, byte-equal to Node (internal/jsjson).
//   - Atoms: [NewSnapshot] builds the anchor snapshot (context, committed
//     blocks projected, message→entry mapping, [buildAtoms] with the
//     tool-protocol classification); [Atom.Protected] is the one protection
//     rule. Group labels ([Snapshot.Groups]) are display only.
//   - Persistence: the three custom entry types ([Transaction], [Draft],
//     [State]), shape checks and coercions ([DecodeTransaction],
//     [DecodeDraft], [DecodeState]) and latest-wins [Restore].
//   - Tool: [ToolSchema] (data), [DecodeRequest] (runtime backstop) and
//     [Execute], a function of (request, branch, runtime memory, lock) to
//     (text, new draft or nil); it never starts or commits.
//   - Transactions: [NewTransaction], [ValidateCommit], [PlanCommit] compute
//     what the commands append; [PlanningLock] is the runtime lock.
//   - Projection and recall: [Project], [RecallList], [RecallRead];
//     [sessionKeyCache] keys each context message once per session;
//     [ProjectCompaction] has Pi's own compaction summarize what the model
//     sees and keeps a block its cut would split whole.
//   - Commands and surfaces: [CheckStart], [PrepareAbort], [PrepareCommit],
//     [StartPrompt], [HandoffMessage], [ResolveStartMode], [ResolveSurface],
//     [OpenPlanningUI], [ExpandSelection], [Draft.ReplaceRanges],
//     [SelectionHeader]; [NewReviewState] is the workbench payload. All
//     return texts and notices; the piext layer shows them. The fixed
//     texts the extension, the overlays and their tests share (notices,
//     tool results, the start chooser) are midcompact/internal/uitext.
//   - [Runtime] is the per-session memory the extension wires to Pi's
//     events (session_start/tree/shutdown, agent_start/settled, context).
//   - The terminal overlays (Selection and Review, reference §5.5) are
//     midcompact/internal/tui, for the extension; the JavaScript text
//     rules they share with the tools are internal/jstext.
//
// # Example
//
//	f, _ := pisession.Read(file, nil)
//	branch, _ := f.Branch("")
//	snap, _ := midcompact.NewSnapshot(branch, 0)
//	for _, a := range snap.Atoms {
//		fmt.Println(a.Ref, a.Kind, a.Protected())
//	}
//
// # v0.6 / v0.7 choices
//
// The reference describes some output texts only at v0.6. Where it lists
// them as open, this package uses the v0.7 vocabulary:
//
//   - Summary wrapper hint: `Use midcompact(request={action:"recall_read",
//     block:"<id>"}) if exact details are needed.` (v0.6: action "recall",
//     ref).
//   - Plan headlines: `Plan vN: K range(s) (ready for review).`, `(P pending
//     summary)`, `Plan vN: no compression ranges.` (v0.6: `Draft vN`).
//   - Mutations: `Plan vN: added|updated|removed dN · K range(s) · P
//     pending summary.` (v0.6: `Draft vN: …`).
//   - Telemetry third line starts `plan:` (v0.6: `draft:`).
//   - plan_show overflow: `Output budget reached: showed K of N range(s).
//     Use plan_read with range_id to inspect one range.` (v0.6: draft_id).
//   - plan_add overlap: `Range overlaps an existing plan range.`; unknown
//     range: `Unknown plan range <id>.` (v0.6: "draft range").
//   - recall_list lists blocks in stored (oldest-first) order, then applies
//     the limit, as the upstream code does (its skill doc says "most
//     recent").
//   - recall_read of an unknown block is a tool error: `Error: Unknown
//     compressed block <id>.`.
//
// # Own decisions and deviations
//
//   - The tool schema's `action` carries both the single-value enum the
//     reference asks for and the same `const` (the reference says "never
//     const"): Pi 1.6.0's validator (pi-schema) treats an anyOf whose
//     branches share a required const member as a tagged union and reports
//     errors against the branch the action names; with the enum alone it
//     guessed a branch and blamed `request.action`. Gemini ignores const
//     and honours the enum, which pi-ai keeps.
//   - Group labels are numbered one way everywhere: the Selection and
//     Review surfaces (web and TUI) use the inventory's labels (from
//     g0001, a prefix group included), where the reference numbers the
//     surfaces' prefix group g0000; a label the user reads is the one the
//     Agent reads.
//   - Saving a selection equal to the plan's ranges appends nothing
//     ([Draft.ReplaceRanges] reports it unchanged).
//   - A group label given where an atom ref belongs (locate_ref, measure,
//     plan_add) answers that it is a group label and names the group's
//     atoms (the reference: "No matching atoms" / unknown ref).
//   - Abort writes no midcompact entry, but its navigation labels the
//     anchor ("midcompact aborted", or the anchor's own label again): Pi 1.6.0
//     persists that as a `label` entry under the anchor, the session's last
//     entry, so a resumed session starts at the anchor with no transaction
//     (without it Pi resumed on the planning branch). Seed 001's "abort
//     writes nothing" holds for midcompact's three entry types; the one
//     entry is Pi's own.
//   - Texts the reference does not give: the decoder's type, enum,
//     required-field, unknown-action and root-field errors ([DecodeRequest]);
//     the commit rejection `Range dN refers to an atom missing from the
//     anchor snapshot.`; excerpt layout (`… ` / ` …`, limit−4 units of
//     text); truncation below 32 units keeps limit−1 units plus `…`;
//     content text drops empty pieces.
//   - stableStringify rebuilds each object with sorted keys, so a JS object
//     still lists integer-like keys first; the Node differential test pins
//     this reading.
//   - Start chooser labels (`Agent direct — the Agent plans first`, `User
//     manual — you select ranges first`, `Drop`), the chooser title, the
//     elided parts of the start prompt, the surface chooser's unrecognized
//     answer (`Midcompact <cmd> was not opened: …`) and the handoff's
//     "Infer from the request whether …" are this package's wording.
//   - The planning lock is not exposed to other extensions (upstream:
//     `pi.midcompactPlanningLock`, on its own per-extension API object, so
//     other extensions never saw it either); UIs and tests use
//     [PlanningLock] directly, and its owner is shown read-only by
//     [FooterStatus] and [StatusText] (`lock: agent|ui|free`). No
//     `midcompact-state` entry renderer is registered (piext has none);
//     [StateCardLines] is its text.
//   - Where Pi would throw (a message entry without a message object, a
//     context_edit without replacement) the entry contributes nothing.
//     Date strings V8 reads only with its legacy heuristics give NaN (a
//     null timestamp). A cut inside a surrogate pair leaves U+FFFD.
//   - An unknown leaf is an error (Pi falls back to the last entry); a
//     missing parent ends the path, as in Pi.
//   - Legacy approx-token fields are computed and persisted for shape
//     compatibility and never read for a decision.
package midcompact
