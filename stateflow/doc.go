// Package stateflow is the pure core of StateFlow, durable scoped semantic
// memory for Pi (reference stateflow.md, upstream @llblab/pi-state-flow
// 0.26.3): JSON values and the merge-patch algebra, the six planes and the
// Global → CWD → Session overlay, the temporal model (checkpoint + tail per
// scope, lineage, folding at historyLimit, revisions, offset reads), and the
// patch_state / read_state tools as functions from typed inputs to upstream's
// exact texts. It does no I/O; package stateflow/store persists it. The Pi
// extension (on piext) only wires these functions to Pi's events.
//
// # Values
//
// A value is what JSON.parse yields: nil, bool, float64, string, []any,
// map[string]any; a lone surrogate escape in JSON text is kept (WTF-8 in the
// Go string). Files are canonical JSON (keys sorted by UTF-16 code units,
// JS number formatting, raw U+2028/2029, no HTML escaping, lone surrogates
// as \udxxx) through internal/jsjson. No null is ever stored; null in a
// patch deletes a key.
// [ApplyPatch] merges, [Prune] drops empty objects, [Replay] diffs two
// states into the record stored on disk, [Equal] compares structurally.
//
// # Nesting
//
// Every walk over a value (decode, validation, merge-patch, replay,
// canonical encoding, clone, comparison, projections, state_updates, the
// dangling-reference scan, the read and head caches) costs time and memory
// linear in the value's size, whatever its depth. Documents nest at most
// [MaxDepth] (1000) levels of arrays and objects — ours: V8's JSON.parse
// has no bound, but Node 22's structuredClone fails at about 1,600 levels
// of objects (JSON.stringify at about 4,170), and Pi structuredClones tool
// arguments and the conversation. A deeper tool argument, CLI input or
// store file is refused as "… is nested too deeply (more than 1000
// levels)" ([ErrTooDeep]), after reading no further than the bound.
//
// # Roots and modules (seed 003 groundwork)
//
// The known top-level roots are data ([Roots]): the built-in planes plus
// registered x_* module roots ([Roots.With]). The known-root filter, the
// patch_state schema ([PatchStateSchema]), the accepted patch keys and the
// head's state all read it. x_* roots found in a store are retained as
// opaque data even when no module is registered: never dropped, never
// rewritten, not projected into model context, readable exactly.
//
// # Semantic modules (seed 003)
//
// A [Module] (Go-native in-process, or JS-backed through the bridge) owns
// one root x_[a-z][a-z0-9_]* with an immutable [ModulePolicy] snapshot
// ([ModulePolicy.Check]). A [Catalog] is the ordered module set of one
// session manager with a generation. Decisions where the seed is silent:
//
//   - Availability per (scope, root) ([ModuleBasis.Classify]): Legacy when
//     the scope's retained stream (checkpoint or any tail record) holds the
//     root without a descriptor — checked first, so a raw value is never
//     adopted by a registering module; else Unavailable when no definition
//     is registered, or apiVersion ≠ 1, or schemaVersion/immutable differ
//     from the descriptor; else Available (also: registered, no
//     descriptor, no raw value).
//   - Participating owner: an in-reach scope holding a descriptor for the
//     root. An unscoped patch {"x_…": …} beside the scope wrappers goes to
//     the sole participating owner; with none to Session (CWD when no
//     session is in reach); with two or more it is refused
//     ([ReasonAmbiguousOwner]); explicit wrappers are always accepted; the
//     same root both unscoped and in its owner's wrapper is refused.
//   - Model writes ([StageModules]): every named module root of every scope
//     is checked (available, not immutable) before any validator runs. A
//     module root's patch is a merge patch like a plane's (null deletes the
//     root; empty objects are pruned as in planes, so the stored replay
//     reproduces it); the complete resulting object goes to Validate on a
//     detached copy, once per (scope, root), only when it changed; an empty
//     result deletes the root. The first non-empty accepted write in a
//     scope mints its descriptor in the same cohort; a retained descriptor
//     is never replaced (not by deletion, folding, fork or {}).
//   - x_* roots a patch does not name keep their exact prior value
//     (unpruned), whatever their availability; no callback is called for
//     them. read_state returns x_* values exactly as stored (planes are
//     pruned as upstream, module data is not).
//   - Context ([AssembleModuleContext]): data contributions in scope order
//     (global, cwd, session), then catalog definition order, then the
//     module's own order, rendered after the core head by
//     [RenderModuleData] as user-level text, one line "<id> (<owner>):
//     <canonical JSON>" under [moduleDataHeader]. A conversation selection
//     is {kind:"conversation", indices:[…]} into the Session frame's
//     completed segment; only Session owners may select; two or more
//     selecting modules fail closed (none applies); an index out of range,
//     or a selection keeping part of a tool-call/result unit
//     ([conversationUnits]: an assistant message with toolCall parts plus
//     the toolResult messages answering those ids), refuses that selection
//     (no selection) rather than widening it; duplicate indices are
//     removed. Diagnostics are returned, never sent to the model.
//   - Error texts ([ModuleError], [ErrCatalogRevoked], [ModulePolicy.Check])
//     are ours and stable; they start "State Flow module".
//
// # Artifacts and Skills (reference §1.10, §1.11)
//
// [AssessArtifacts] classifies every registered artifact path per owning
// scope with [compilationNeed] (new, invalid-metadata, source-changed,
// compiler-changed; explicit-refresh is reserved, nothing requests it);
// proven-missing paths are removed by [RemoveArtifactsPatches]. The Active
// head carries knowledge_rehydration and artifact_invalidations after
// lazy_navigation, and each stale effective card the runtime-only hint
// [msgSourceChangedHint] ([withArtifactHints]); [ContextUpdate] renders a
// tail notice. A [Compilation] checks that a patch writes the compiler
// output owed after a read of an invalidated source
// ([msgRequiresCompilerOutput] + `<scope>.artifacts["<path>"]`) and places
// registered Skill cards at their scope, and yields the provenance for
// cards written for sources read. Decisions where the reference is silent:
// knowledge_rehydration is [{path, scope, output}] with output the location
// the next patch must write; a null deletion of the card also discharges
// it; every invalidated card gets the hint (also "new" ones); a registered
// Skill's card (whenever a patch writes one) must have kind "skill", a
// non-empty description and a non-empty compilation (that text is ours); a
// Skill read owes nothing; read_state shows stored cards without hints.
//
// # Reads and the read cache
//
// Reads never publish (reference §1.8), so what they derive from a view is a
// function of the view: each view keeps a read cache of materialized scope
// states (per tail position, a new one replayed from the nearest cached
// one), effective overlays per offset, read_state result texts and the
// Active head's view members (state, lazy_navigation, recent_transitions)
// as encoded JSON. [View.ReadClone] shares it, so the store's read clones of
// one decoded cohort reuse the first reader's work; [View.Validate] seeds it
// with the current states its replay built. The cache is bound to a
// fingerprint of the view (lineage, and per stream its revision, checkpoint
// and the identity of each record's map); a view that advanced, folded,
// adopted an origin or had a field replaced gets a fresh one;
// [View.ValidateReusing] lets a view decoded again share an earlier view's
// identical streams' states, or its whole cache when the shape is the
// same; a stream that is the earlier one advanced by another writer (its
// records shifted by a fold, plus new ones, over a checkpoint identical to
// the earlier replay's) has only its boundaries and new records checked.
// Encodings carry over too, by map identity: planes of at least 4 KiB
// (64 entries or 8 MiB per memo) and each record of recent_transitions
// (1024 entries or 4 MiB), so the first head after another process's
// change encodes only what changed. Cached states
// are shared read-only (as [View.ScopeAt] and [View.EffectiveAt] say);
// [Stream.Current] still returns an owned copy. Bounds: 32 states, 32
// overlays, 64 texts or 16 MiB per view.
//
// The cache containers (their bounds, locking and identity keys) live in
// stateflow/internal/memo; this package decides what goes in them.
//
// # Files
//
// The algebra:
//
//   - value.go: JSON values, [DecodeValue], depth bound, [Equal], [Clone];
//   - patch.go, replay.go, cascade.go: merge-patch ([ApplyPatch]), the
//     records replayed on disk ([Replay]), dangling-reference cascades;
//   - overlay.go: [Overlay] and the model/passive/read projections;
//   - roots.go, validate.go: known roots ([Roots]) and state validation;
//   - temporal.go, temporal_check.go: [View], [Stream], boundaries, the
//     temporal model and its validation; offset reads ([View.ScopeAt]);
//   - stage.go, patchargs.go, ack.go, receipt.go: patch_state from
//     arguments to staged writes and the acknowledgement and state_updates
//     texts;
//   - readpath.go, readtool.go: read_state's paths and results;
//   - contexthead.go, status.go, tooldefs.go, policy.go, config.go: the
//     Active/Passive heads, /state-flow-status, tool definitions, the
//     config and the mode policy;
//   - artifact_source.go, artifact_compile.go: Artifacts and Skills;
//   - module*.go: semantic modules (seed 003).
//
// stateflow/internal/sftext holds upstream's texts that this package and
// stateflow/store both report (an invalid materialized state, a document
// nested too deeply).
//
// The performance caches over it (results are the same without them):
//
//   - readcache.go: a view's read cache, its fingerprint and
//     [View.ValidateReusing];
//   - validate_reuse.go: validating a stream advanced by another writer
//     from the earlier view's replay;
//   - headmemo.go: recent_transitions from memoized record encodings;
//   - prunememo.go: pruning that skips planes known clean.
//
// # Decisions where the reference is silent
//
//   - Missing-deletion hints are {type:"missing-deletion", target, unavailable}
//     with escaped JSON Pointers; they ride in the result details.
//   - "State already current." carries the leading newline of every other
//     acknowledgement.
//   - Artifact rule texts other than the description rule, the read_state
//     argument type errors, the config error text and the system-prompt
//     protocol wording are ours.
//   - Array slots are not pruned (only object fields).
//   - Model context shows keys in sorted order (reference §6.3 allows it).
//   - A tail line that is JSON but not an object reads as upstream's state
//     error with the reason "expected a semantic object" (upstream's exact
//     text for that record is not known).
//   - /state-flow-status lists the session's modules ("Modules: x_a
//     (schema 1, mutable)") and each registration refused in the session
//     ("Module registration refused: <message>").
//
// # Example
//
//	roots := stateflow.BuiltinRoots()
//	args, err := stateflow.DecodePatchArgs(roots, []byte(`{"cwd":{"contract":{"db":"postgres"}}}`))
//	staged, err := stateflow.StageModules(ctx, roots, current, args, nil)
//	// staged.Replays holds what the store appends to each changed scope.
package stateflow
