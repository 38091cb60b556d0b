// Package extension is the StateFlow Pi extension on piext (reference
// stateflow.md §1.2–§1.12, §2.10, Appendix A): the patch_state and
// read_state tools, the /state-flow-active|passive|off|status commands and
// the hooks that inject memory into Pi's context. The memory itself, its
// texts and its files are package stateflow and stateflow/store; this
// package only wires them to Pi's events.
//
// # Where things live
//
// The store is <agentDir>/state-flow/ (agent dir handed over by cmd/pikit:
// PI_CODING_AGENT_DIR, else ~/.pi/agent). The session key is the basename of
// Pi's session file without ".jsonl" (the session id with --no-session).
// config.json is read once per extension load (the first session bound).
//
// # Mode
//
// A session's mode is the last "state-flow-snapshot" custom entry on its
// branch (reference §2.2 "Pi native session entries"): resume, reload,
// fork and /tree (session_tree) carry it with the branch, and Off
// therefore needs no store I/O. Memory is never rewound to a branch point
// (§2.10). A branch without one is a new session and takes config.json's
// mode. The session's config.json in the store is kept in step
// (store.SetMode) for other readers. A config.json that fails loading
// leaves every session Off, and the tools and commands answer its exact
// error.
//
// Snapshot entries: {mode} when a session is first bound or a mode is
// selected ({mode, bootstrap: true} inside a conversation); {boundary,
// mode, step, bootstrap?, specification} at an Active run's first context;
// {boundary, mode, step} when turn_end accepts its answer. Leaving Active
// adds a "state-flow-passive-stop" {at, from, mode}.
//
// A fork follows its direct parent only: the child's header names the
// parent file as parentSession, and the parent file's header line is a
// session of the same cwd whose id is the one its key carries. In Active
// or Passive the parent's current session memory is copied at once
// (store.Fork). In Off nothing is copied: a child-owned
// "state-flow-passive-stop" {at, mode: "off", owner: <child key>,
// forkPending: <parent key>} is recorded, and the first mode command that
// leaves Off copies the parent's memory then (a child already occupied,
// or a parent that never had memory, starts empty).
//
// # Context
//
// The state_flow section is set on the last system message of each
// request at context_with_system (reference §1.11: Active or passive
// protocol, BOOTSTRAP RUN: while bootstrapping; removed with null in Off),
// the other sections and their order untouched. It is not set at
// before_agent_start: a Go hook cannot edit systemPromptOptions in place,
// and returning a whole systemPrompt would turn Pi's structured prompt into
// one opaque string. Pi's persisted system messages therefore never carry
// it.
//
// Run-end compaction (reference §1.12 step 7): at agent_settled, after an
// Active run whose answer turn_end accepted and that was not a bootstrap,
// when ctx.getContextUsage() reports at least 24,000 tokens and some
// conversation precedes the run, the extension calls ctx.compact with the
// custom instructions "state-flow-boundary:<entry id of the run's first
// user message>". Its session_before_compact answers that compaction with
// firstKeptEntryId = that entry (the whole latest run is kept), Pi's
// tokensBefore, details {stateFlowBoundary: <id>} and a fixed summary of
// ours (no model call: Active projects completed runs out anyway; the
// summary only shows after leaving Active). Other compactions run as Pi
// prepares them. session_compact rebases the heads: a run in flight
// freezes a new head at its next context.
//
// # Decisions where the reference is silent
//
//   - The mode commands' notices ("State Flow active." …) are ours.
//   - Tail notices carry state_updates for changes the run's model has not
//     been shown: memory changed elsewhere (another session or Pi process)
//     after the head froze. Its own accepted patches are not repeated (their
//     receipt is the patch_state result). A changed key whose old value was
//     not an object is reported whole.
//   - Artifact sources (reference §1.10) are observed at the run's first
//     context, in the transaction that publishes the specification (which
//     also removes proven-missing cards), and again before each later
//     inference: invalidations and owed compiler outputs the run has not
//     been shown become a tail notice {artifact_invalidations?,
//     knowledge_rehydration?}. A read is Pi's read tool succeeding
//     (tool_result; a relative path resolves against the session cwd, "@"
//     dropped); what it observed is the acquisition the next card for that
//     path is compiled from. Reads, owed outputs and the Skills registry
//     (pi.getCommands(), refreshed per run) live in the sidecar only: a
//     restart forgets them. Passive observes nothing (its head has no
//     artifact members); /state-flow-status lists the invalidations;
//     read_state shows stored cards without the hint.
//   - The Active head is frozen per run (first context of the run); the
//     Passive head is rebuilt once per run (at before_agent_start), so a
//     new run sees patches made since.
//   - The exit handoff ({state, continuation: the latest response})
//     replaces the Passive head after leaving Active, until the session is
//     bound again.
//   - The branch is read through the session.getBranch row directly:
//     piext's Pi.GetBranch decodes each entry object into Entry{Raw}, which
//     leaves Raw empty.
//   - The barrier hook fails open: a dead sidecar must not block every
//     other tool.
//   - Tail-notice state_updates diff the model projections of what the run
//     was shown and of the current memory: lazy bodies, empty responses
//     and x_* roots never appear; lazy_navigation when lazy changed;
//     cascaded never (a foreign cascade shows as its deletions). No
//     notice when nothing projected changed.
//   - Not done: Git backup (agent_before_settle; optional and never
//     authoritative upstream, out of scope); the tool definitions'
//     promptGuidelines and renderResult (TUI only); ctx.hasPendingMessages
//     (a queued follow-up after an accepted answer starts a new Active
//     iteration without a specification of its own); tool_execution_* and
//     session_shutdown hooks (upstream's owned-wait bookkeeping: here every
//     store wait ends with its hook's context); a rebase when the anchor of
//     a run in flight disappears without a compaction (the run keeps every
//     message instead).
//
// # Semantic modules (seed 003)
//
// `pikit ext install stateflow` writes modules.ts (registerStateFlowModule
// and the seed's types) and host.ts beside the bridge; companions import
// modules.ts by the absolute path `pikit ext list` prints or as
// ../pikit-stateflow/modules.ts. The bridge creates the host from State
// Flow's factory on globalThis[Symbol.for("pikit.stateflow.host/1")]
// ([HostSymbol]); Go reaches the companions' callbacks through it
// (piext Pi.CallHost). Go-native modules are [Options.Modules] of
// [NewWithOptions] (examples/stateflow-module). Decisions where the seed is
// silent:
//
//   - Registration errors (host.ts, stable texts): "State Flow module host
//     is not loaded: ...", "... owned by another State Flow host", "<id> is
//     already registered for this session", "<id>: apiVersion N is not
//     supported (this host speaks 1)", bad id / schemaVersion / immutable /
//     missing validate or context are TypeErrors. A Go-native id is
//     reserved: a companion registering it fails.
//   - The catalog is keyed by the session manager object (WeakMap) and
//     remembers the manager's session id and file; a manager that now
//     serves another session has an empty catalog (old calls fenced, old
//     signals aborted, old disposers inert). A manager is owned by the first
//     host that registered for it until that host retires.
//   - Every catalog change (register, dispose, identity fence) takes a new
//     generation, aborts the old catalog's AbortSignal and drops its input
//     receipts; Go's calls carry (host generation, catalog generation) and
//     are refused (sf.ErrCatalogRevoked) when either changed.
//   - Pi reloads extensions on every session replacement, so each
//     new/resume/fork/reload makes a new host; the old one is retired at
//     session_shutdown (binding removed only if still its own, then its
//     signals abort). Companions register again in their session_start.
//   - The catalog is refreshed (one host call) before patch_state,
//     read_state and every context; Go-native modules come first in
//     definition order, then companions in registration order.
//   - Module data goes after the core head as one more user-level message
//     (sf.RenderModuleData); a module whose callback fails or whose input
//     receipt is obsolete contributes nothing; a catalog change during
//     evaluation withholds the request's module data.
//   - The Session frame's conversation is the native segment before the
//     current run's anchor: in Active the run's first user message (its
//     timestamp, so steering stays in the run), else the last user message;
//     a timestamp shared by another user message, or an anchor not found,
//     withholds the segment (nil), so no selection applies. A selection
//     applies in Active and Passive alike: selected completed messages and
//     the foreign (custom) frames the core kept come first in original
//     order, byte-identical repeats dropped, then the current run.
//   - The provider checkpoint is before_provider_request (payload not sent
//     to Go): when the request carries module context and a receipt, the
//     catalog generation, the model/thinking change count or the session
//     changed since that context, the inference is aborted (Pi's abort);
//     nothing is written or rolled back.
//   - The context hook declares ModulePreparationTimeout (60 s) as its piext
//     Hook.Timeout, so a slow producer in the Active preparation is awaited
//     beyond piext's 5 s HookTimeout; past it the hook fails open. Pi's
//     abort of the run cancels the preparation (the producers' context).
//   - captureInput runs once per Active run at its preparation and the
//     receipt is asserted before and after each context call; in Passive
//     it runs per provider request. Producers run only in the Active
//     preparation; their proposals and the run's specification are one
//     store.PublishRun cohort. A rejected cohort leaves the specification to
//     the ordinary path (published alone); nothing accepted is rolled back.
//   - Model and thinking-level changes are counted in host.ts as Pi emits
//     model_select / thinking_level_select (a Go hook would queue behind
//     the context hook running the producers); the fence compares counts,
//     so A→B→A revokes. An unreadable count fails closed.
//   - The patch_state schema admits any x_[a-z][a-z0-9_]* root
//     (patternProperties, object or null) at the top level and in each
//     scope: companions register after the manifest is installed.
package extension
