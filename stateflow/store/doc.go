// Package store persists StateFlow memory in upstream's file store under
// <agentDir>/state-flow/ (reference stateflow.md §2), byte-compatible with
// the TypeScript writer so both can share one store.
//
// # Layout
//
//	<root>/checkpoint.json patches.jsonl meta.json                      Global
//	<root>/<cwd-key>/…                                                  CWD (meta owner.cwd)
//	<root>/<cwd-key>/<session-key>/… config.json runtime.json           Session
//	<root>/.state-flow-publication.lock                                 store-wide PID lock
//	<root>/.state-flow-cohort.journal                                   ours: cohort journal (transient)
//
// Only those files are read or written (ownership whitelist); every
// directory component is lstat-checked and files are opened O_NOFOLLOW,
// with upstream's texts: "State Flow repository path is not a regular
// directory: <path>" for the root, "Durable State Flow directory is not a
// regular directory: <path>" below it, "Durable State Flow path is not a
// regular file: <path>" for a file (paths JSON-quoted, as upstream's
// JSON.stringify writes them, in every store message).
// meta.json v1 is read (revision credited as the tail length), v2 written;
// unknown meta keys are preserved.
//
// # File formats: meta.json and runtime.json
//
// Both are decoded by one strict typed decode through internal/strictjson,
// whose policy holds for them as for every untrusted JSON: member names
// match exactly (a "Version" member is not version: it is an unknown
// member, kept), and a member name repeated in any object refuses the
// file. Upstream reads these files with JSON.parse, which keeps the last
// of repeated members; but neither upstream nor pikit ever writes one, so
// such a file is a damaged store: refused, every file left as it is,
// with our text "State Flow <scope> metadata repeats member "<name>""
// (or "State Flow session runtime repeats member …"), followed by `within
// "<JSON pointer>"` when the object is not the top level. Text JSON.parse
// itself refuses, or nested too deeply, keeps its text (see Classification
// messages): those are checked first. Otherwise the decode reads as
// JSON.parse does: strings
// and kept members as JSON.parse reads them (lone surrogate escapes kept,
// invalid UTF-8 as U+FFFD; a name is compared with both as U+FFFD, so
// two names differing only there count as repeated), numbers as
// JavaScript's (integers only where safe, a number beyond the float64
// range refused as upstream's value checks refuse it), and every check in
// upstream's order with its texts. The files are not bounded in size
// (upstream does not bound them). A file in the written form (canonical
// JSON, as both writers write it) has its boundaries (meta's temporal,
// runtime's lineage: the bulk of both) read by a scan of that form alone
// and its other members by the strict decode; the reading is the same.
//
// # Classification messages
//
// A cohort is classified in upstream's order and with its exact texts
// (classifyScopeStream, validateScopeStream, parseSessionRuntime,
// validateSessionRuntime), scope by scope, then the session's config and
// runtime: the checkpoint/tail pair; the checkpoint, meta.json and tail as
// JSON; meta's temporal member ("Unsupported State Flow <scope> storage
// format"); the CWD owner; the boundary count against the tail ("State
// Flow <scope> temporal metadata does not match its semantic tail"); the
// revision, the boundaries and the states ("Invalid temporal materialized
// semantic state in <scope> checkpoint|tail: <reason>"); provenance errors
// (meta version, artifacts, descriptors) once every stream validated.
// Scope ids are lower case, as upstream interpolates them; "CWD" appears
// only in the owner messages, where upstream writes it. A file nesting
// deeper than stateflow.MaxDepth is "State Flow <scope> <file> is nested
// too deeply (more than 1000 levels)" (ours; such a file is never written).
//
// # Semantic modules (seed 003)
//
// meta.json versions, decided where the seed is silent: v1–v4 are read.
// A scope's meta stays v2 until its first module descriptor and is written
// v4 from then on, with "descriptors": {"x_…": {"immutable": bool,
// "schemaVersion": n}} (exactly those keys; n 1..2^53-1). v3 is ours and
// declared: the scope retains raw x_* roots without descriptors (legacy
// data, a fence against ≤0.26.3 writers that drop unknown roots); it is
// written only by a publication that writes that scope anyway, never by a
// read. A "descriptors" key below v4 is an invalid provenance document
// (fail closed). A written version is never lower than the one read.
//
// [Options.Catalog] gives patch_state the session's modules: a patch is
// staged against the catalog current when the call starts
// (stateflow.StageModules, descriptors from the locked snapshot) and, if it
// names a module root, refused with stateflow.ErrCatalogRevoked when the
// catalog changed before publication. [Store.PublishRun] publishes an
// Active preparation's producer proposals with the run's specification as
// one cohort after rechecking, under the lock, cancellation, the catalog
// generation, the model change counter, and per proposal its owner,
// availability, input receipt, stream revision, content and descriptor,
// then the validator; any failure rejects the whole cohort and writes
// nothing. A producer may write an immutable root; {} clears the content
// and keeps (never mints) the descriptor. Fork copies descriptors with the
// parent's session meta. [Snapshot.ModuleOwners] lists each (scope,
// module) with its availability, detached content and proposal basis.
//
// # Locking
//
// Upstream's protocol: O_EXCL lock file holding "<pid>\n", 25 ms polls, no
// deadline (only ctx cancellation ends a wait), an empty file tolerated for
// 2 s, a non-regular file → "State Flow publication lock is unavailable at
// …" (followed here by what is there and what to do), a caller that will
// not wait → "State Flow publication lock is busy at …" (followed by the
// holder's PID), re-entry → "Recursive State Flow publication lock at …",
// release only of our own file and content. A waiter's error names the
// holder's PID.
//
// Divergence: upstream never steals a lock (an interrupted owner's lock
// needs an operator). Here an abandoned lock is reclaimed (removed, the
// store recovered, "stale publication lock removed" logged): its PID is
// dead, or alive but started after the lock was written (reused), or it is
// empty or malformed ("garbage", "12" without its newline) past the same
// 2 s grace. Two reclaimers never remove a new holder's lock: every pikit
// process locks the lock file it has open (flock, LockFileEx: the OS drops
// it with the process), a writer holds that lock from creation to release,
// and a reclaimer removes only the exact file it judged, while locking it
// (the argument is at lockWaiter). Upstream writers take no part in that
// lock, which changes nothing for them: they never remove another's file.
//
// # Crash atomicity (beyond upstream)
//
// Upstream renames each file separately with no fsync. Here a publication
// first writes the cohort journal (every target's pre-image identity and
// post-image bytes) with durable.WriteFile, then each file (fsynced, one
// directory fsync per directory), verifies, and removes the journal. An
// acknowledged patch is therefore fsynced. Whoever next takes the lock
// replays a journal only if every target holds its pre- or post-image, and
// otherwise discards it and logs, so it never clobbers another writer. An
// upstream writer ignores the journal file; it can only be left behind by a
// crash of ours, and the next pikit writer resolves it.
//
// # Reads
//
// Every read takes the store lock (so it never sees a half-applied cohort
// and completes an interrupted one), captures the owned files and, when
// their bytes equal the last decoded cohort's, reuses that decoded,
// validated snapshot (a private clone per call) instead of decoding again.
// When some files changed, a scope whose checkpoint, tail and meta are
// byte-identical to the last snapshot's is not decoded or validated again:
// it takes that snapshot's stream (its own Stream and tail slice, shared
// maps) and cached states; when only runtime.json changed and the lineage
// is the same, the new view shares the whole read cache (texts, head). A
// changed scope's tail takes the decoded objects of its lines that are
// byte-identical to the last decode's run of lines (patches.jsonl grows at
// the end and a fold drops lines at the front); only the other lines are
// decoded. A publication of this handle leaves the snapshot of the
// cohort it wrote as the last decoded one (decoded reusing the earlier one,
// under the same lock), so the handle's next read after its own
// patch_state or run preparation finds the files unchanged.
// A read never creates a store that does not exist.
//
// # Where to change what
//
// A durable patch runs, in order: [Store.PatchState] (tools.go: decode the
// arguments, stateflow.DecodePatchArgs), [Store.Patch] (transact.go: take
// the lock, read the cohort), patchLocked (stage with
// stateflow.StageModules, fence the module catalog, compiledMetas, advance
// the view with View.Advance, then the file bytes: scopeWrites per changed
// scope and runtimeWrites for the session), Store.publish (store.go) and
// publisher.publish (publish.go: cohort journal, each file fsynced,
// verify, journal removed), and last the result (stateflow.BuildStateUpdates,
// stateflow.NewPatchResult). Nothing is written before publish.
//
// A new runtime.json member is declared in [Runtime] (runtime.go), decoded
// in runtimeDoc (runtime.go; the strict decode, and the written-form read
// writtenRuntime in written.go, which hands every member but lineage to
// that decode) and carried into Runtime by decodeRuntime (readCounters
// for a counter), and written by Runtime.encode (runtime.go), which
// runtimeWrites (transact.go) calls; a member runtimeDoc does not declare
// is kept as it is (Runtime.Extra). A meta.json member goes the same way
// through metaDoc, decodeMeta and Meta.encode (meta.go).
// The harness that catches a half-wired member is TestInterop
// (interop_test.go): each testdata/interop/<case>/ holds a store authored
// as the TypeScript writer lays it out (before/), the effective view it
// reads as (effective.json), one patch (patch.json, with the history limit
// in limit and any modules in modules) and every file as it must be
// afterwards (after/), compared byte for byte; a member decoded but not
// written, or written but not kept, differs there. Add a case with the
// member in before/ and after/.
//
// # Not here
//
// Git backup (optional and never authoritative upstream) is out of scope.
//
// # Artifact sources (reference §1.10)
//
// [ObserveSource] lstats only the exact registered path (absolute,
// canonical) and fingerprints a regular non-symlink file as {size,
// mtimeNs}; [ObserveSkill] adds the sha256 content hash of a registered
// Skill (opened O_NOFOLLOW; hashed before any lock is taken, so no source
// content is read under the store lock). [Store.PrepareRun] lstats the
// plain sources of the state it publishes under the lock and, in one
// transaction, publishes a run's specification and removes the cards and
// provenance of proven-missing sources (ENOENT/ENOTDIR); [Store.Freshness]
// classifies the cards of a read.
// A patch given a [sf.Compilation] records {sourceFingerprint,
// compilerRevision:"artifact-v1", compiledAt} (or {sourceHash,
// compilerRevision:"skill-artifact-v1", compiledAt}) in the owning scope's
// meta.json for each card it writes for a source read; when the state is
// already current only meta.json is rewritten (no transition). Decisions:
// a permission change alone is no source change ({size, mtimeNs} are
// unchanged); a symlink, directory, other non-regular file or an lstat
// error other than ENOENT/ENOTDIR is not proven missing, so the card stays
// and is invalidated as source-changed; recompiling an unchanged source
// keeps the first compiledAt; compiledAt is Date.toISOString's form.
package store
