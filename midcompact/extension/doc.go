// Package extension is midcompact as a Pi extension on piext (seed 001):
// `pikit ext install midcompact` installs it, and a Pi session then starts,
// plans, commits and recalls.
//
// The core (package midcompact) decides everything; this package only wires
// Pi to it:
//
//   - the `midcompact` tool: the core's schema and midcompact.Execute;
//     a plan mutation appends the full `midcompact-draft` entry the core
//     returns and refreshes the footer status (key "midcompact");
//   - the commands midcompact:start|abort|commit|status|review|select and
//     the aliases review-webui, select-webui, plus close-webui (reference
//     §5.1): start freezes the leaf as the anchor, appends transaction and
//     empty plan, sends the start prompt and, user-first, opens Selection;
//     commit validates against a fresh anchor snapshot, navigates to the
//     anchor (summarize off), appends the state there and labels it; abort
//     navigates with a label for the anchor and writes no midcompact entry
//     (the label entry is Pi's; see Decisions); only start waits for idle
//     first (see Decisions);
//   - hooks: session_start and session_tree close registered workbenches,
//     then restore from the branch and reset the planning lock
//     (session_start in the background, piext Hook.Background: Pi's
//     start-up does not wait for it, every later call reaches Go after it);
//     session_shutdown clears everything; agent_start takes the lock for the
//     agent while a transaction exists and agent_settled gives it back;
//     before_agent_start adds the hidden `midcompact-handoff` message;
//     context projects (below); session_before_compact has Pi's own
//     compaction summarize what the model sees (below).
//
// # Projection
//
// The context hook replaces committed blocks by their summary wrappers on
// every LLM request (midcompact.Project: fail-open per block and for
// overlaps) and answers through piext's incremental path: unchanged messages
// go back as references, only wrappers cross the pipe. Messages the bridge
// already sent are parsed and hashed once (keyed by the mirror's bytes).
// The hook makes no call back into Pi: the active state is kept in memory,
// set by restore and by commit. A message it cannot read leaves the request
// unchanged. While no block is active (a session never compacted), the
// hook passes (piext Hook.Pass): the bridge sends no message, so a long
// session's first request does not wait for its transcript to reach Go;
// the first request after a commit sends what the mirror lacks.
//
// # Pi's compaction
//
// Pi 1.6.0 summarizes from its session entries, not through the context
// hook, so after a commit its compaction (/compact, threshold, overflow)
// read the originals of committed blocks. session_before_compact (30 s
// timeout: its payload carries the branch) rewrites the preparation with
// midcompact.ProjectCompaction: the summarizer reads the summary wrappers,
// and a block the cut would split is kept whole (the cut moves back to its
// first entry), so its summary keeps replacing it after the compaction. A
// block wholly inside the summarized part lives on only in Pi's summary:
// its messages leave the context, as far as Pi allows. The hook never
// cancels and never writes a summary.
//
// The answer is a "preparation" edit (piext writes it into the event's
// preparation, which Pi then hands to its own summarizer), not the
// documented {compaction} result: that one needs the extension to run the
// model itself, and Pi records it as an extension's (fromHook), whose file
// lists later compactions do not carry on. The edit keeps Pi's summarizer,
// its prompts, retries and file tracking, and its entry
// (TestRealPi_CompactionSummarizesWhatTheModelSees,
// TestRealPi_ThresholdCompactionSummarizesWhatTheModelSees,
// TestRealPi_CompactionKeepsASplitBlockWhole pin that Pi 1.6.0 honours it).
// Branch summaries of /tree are not rewritten: they summarize the branch
// being left.
//
// # Planning surfaces
//
// The web workbench is behind the [Surfaces] interface
// (Options.Surfaces); the TUI overlays (tui.go) run in every build. The
// extension resolves the surface argument
// or chooser, refuses a second planning UI and an agent-held lock, takes
// the UI lock and hands the surface a [Plan] (read the ReviewState or an
// atom, save a selection, edit or remove a range; Release gives the lock
// back); *Plan is a workbench.Plan. [New] wires the web workbench
// (package midcompact/workbench): one workbench.Manager per extension
// runtime, "webui" opens a workbench and shows its ready notice with the URL
// (no browser is launched from the sidecar: the user opens the URL), and
// close-webui and the session hooks call its CloseAll. Without Surfaces and
// Workbench (NewWith's zero Options) webui answers that the surface is not
// part of this build and close-webui finds no WebUI open (reference §5.6
// text).
//
// The TUI overlays (reference §5.5) are SelectionView and
// ReviewView of midcompact/internal/tui, shown through piext's remote component
// (ctx.ui.custom, overlay, 90% wide, at most 85% of the terminal's rows,
// centred) by the command itself, which holds the UI lock until the
// overlay closes. Review closes for e/t/d, runs ctx.ui.editor, ctx.ui.input
// or ctx.ui.confirm, appends a DRAFT when something changed and opens
// again. Texts the reference leaves open are ours: the dialog titles
// `Summary of d1` and `Topic of d1 (empty clears it)`, the key hint lines,
// `K marks KEEP inside a selection; select the atom first.`, a failed
// overlay `Midcompact TUI <cmd> failed: <error>` (error), a failed edit
// `Review edit failed: <error>` (warning), and no notice when Review
// closes.
//
// # Decisions
//
//   - Abort and "abort writes nothing" (seed 001 §Persistence). Pi 1.6.0
//     keeps the leaf only in memory: a session file is resumed (`pi -c`,
//     `--session`) at its last entry, so after a bare navigateTree the
//     resumed session was back on the planning branch, transaction and plan
//     active again. The abort's navigation therefore carries a label
//     (navigateTree's own option): Pi appends a `label` entry on the anchor
//     whose parent is the anchor, and that entry is where Pi resumes. The
//     label is "midcompact aborted", or the anchor's existing label set
//     again (a user's bookmark survives). Abort still appends no
//     midcompact entry (the three custom types stay the only ones), and
//     commit needs nothing extra: its state entry and tree label already
//     sit under the anchor (TestRealPi_AbortSurvivesRestart).
//   - The planning lock is not exposed to other extensions. Upstream's
//     `pi.midcompactPlanningLock` sits on its own extension API object,
//     which Pi 1.6.0 creates per extension, so no other extension ever saw
//     it (seed 001 §Concurrency: "exposed for UI and tests"); here the UIs
//     and tests use midcompact.PlanningLock in the sidecar directly. A JS
//     mirror (a piext host object on globalThis, or pi.events) could only
//     be a late copy of a lock that lives in Go, which another extension
//     could act on after it changed. The
//     owner is readable, read-only, in the footer status (`UI editing`,
//     `Agent editing`) and in /midcompact:status (`lock: agent|ui|free`)
//     (TestRules_LockOwnerReadableThroughStatus).
//   - The start-mode and surface choosers, the surface argument, the lock
//     refusals and the close-webui texts are the core's (midcompact
//     ResolveStartMode, ParseSurfaceArg, ResolveSurface, OpenPlanningUI).
//   - A workbench that fails to open answers `Midcompact WebUI failed:
//     <error>` (error) and releases the lock.
//   - Without Surfaces: webui answers `Midcompact WebUI failed: the web
//     workbench is not part of this build.` (error) after the lock checks,
//     releasing the lock.
//   - Selection/Review without a transaction warn `No active midcompact
//     transaction.`.
//   - No entry renderer for `midcompact-state` (reference §3.5): piext
//     offers no registerEntryRenderer, and Pi calls one synchronously when
//     the entry is shown (an entry whose component has no content is not
//     shown), so lines computed in the sidecar would need the bridge to
//     hold them beforehand. Without a renderer Pi's chat shows nothing for
//     the entry; the commit's notice and its tree label (`midcompact +N ·
//     X → Y chars[ · anchor P% [Pi]]`) carry the same facts, and
//     midcompact.StateCardLines is the card, ready for a piext renderer.
//     The summary wrappers exist only in LLM requests and the handoff is
//     display:false, so no message renderer is needed either.
//   - Session entries are read with Pi.Call("session", "getBranch" |
//     "getEntries") and decoded here: piext.Entry has no UnmarshalJSON, so
//     Pi.GetBranch/GetEntries return entries without Raw.
//   - The `midcompact` skill the start prompt names ships with the
//     extension (skills/midcompact/SKILL.md, this package's own wording).
//   - Only start waits for idle (it sends the start prompt at the leaf).
//     Upstream's other commands awaited ctx.waitForIdle() first, so in Pi
//     1.6.0, which runs extension commands at once even while the agent
//     streams, commit or abort typed during a turn showed nothing and ran
//     unannounced after it: a queue seed 001 §Concurrency rules out ("Both
//     refuse to run while the Agent holds the planning lock"; "Blocked
//     operations notify and return"). Here commit, abort, select, review
//     and status answer at once: commit and abort refuse with the agent
//     texts while the agent holds the lock, or while Pi runs a turn that
//     could not take it (a UI holds it; Pi would refuse the navigation);
//     select and review refuse through the lock; status reports it
//     (TestRealPi_CommitAbortRefusedDuringAgentTurn; the other direction, a
//     workbench blocks the agent, on the real Pi with a workbench double,
//     internal/testext).
//
// # Performance
//
// BenchmarkContextProjection: 50 blocks over a 15 MB transcript cost a few
// ms over the same bridge path with nothing to project; the bridge's own
// 15 MB round trip dominates the total against a no-op TypeScript handler.
package extension
