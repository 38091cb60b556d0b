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
// map[string]any. Files are canonical JSON (keys sorted by UTF-16 code units,
// JS number formatting, raw U+2028/2029, no HTML escaping) through
// internal/jsjson. No null is ever stored; null in a patch deletes a key.
// [ApplyPatch] merges, [Prune] drops empty objects, [Replay] diffs two
// states into the record stored on disk, [Equal] compares structurally.
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
// # Artifacts and Skills (reference §1.10, §1.11)
//
// [AssessArtifacts] classifies every registered artifact path per owning
// scope with [CompilationNeed] (new, invalid-metadata, source-changed,
// compiler-changed; explicit-refresh is reserved, nothing requests it);
// proven-missing paths are removed by [RemoveArtifactsPatches]. The Active
// head carries knowledge_rehydration and artifact_invalidations after
// lazy_navigation, and each stale effective card the runtime-only hint
// [MsgSourceChangedHint] ([WithArtifactHints]); [ContextUpdate] renders a
// tail notice. A [Compilation] checks that a patch writes the compiler
// output owed after a read of an invalidated source
// ([MsgRequiresCompilerOutput] + `<scope>.artifacts["<path>"]`) and places
// registered Skill cards at their scope, and yields the provenance for
// cards written for sources read. Decisions where the reference is silent:
// knowledge_rehydration is [{path, scope, output}] with output the location
// the next patch must write; a null deletion of the card also discharges
// it; every invalidated card gets the hint (also "new" ones); a registered
// Skill's card (whenever a patch writes one) must have kind "skill", a
// non-empty description and a non-empty compilation (that text is ours); a
// Skill read owes nothing; read_state shows stored cards without hints.
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
//
// # Example
//
//	roots := stateflow.BuiltinRoots()
//	args, err := stateflow.DecodePatchArgs(roots, []byte(`{"cwd":{"contract":{"db":"postgres"}}}`))
//	staged, err := stateflow.Stage(roots, current, args)
//	// staged.Replays holds what the store appends to each changed scope.
package stateflow
