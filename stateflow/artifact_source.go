package stateflow

import (
	"sort"
)

// Compiler revisions written into meta.json provenance (reference §1.10,
// §2.2): a plain source's card and a registered Pi Skill's card.
const (
	CompilerArtifact = "artifact-v1"
	CompilerSkill    = "skill-artifact-v1"
)

// msgSourceChangedHint is the runtime-only hint an invalidated card carries
// in model context (reference §1.10). It is never stored.
const msgSourceChangedHint = "Source changed since this artifact was compiled. Read and recompile it before relying on it."

// Invalidation reasons (reference §1.10; upstream
// classifyArtifactCompilationNeed, §3.1).
const (
	ReasonNew             = "new"
	ReasonInvalidMetadata = "invalid-metadata"
	ReasonSourceChanged   = "source-changed"
	ReasonCompilerChanged = "compiler-changed"
	ReasonExplicitRefresh = "explicit-refresh" // reserved: nothing asks for a refresh yet
)

// Fingerprint is a plain source's identity as lstat gives it: size in
// bytes and mtime in signed nanoseconds since the epoch, as a decimal
// string (reference §2.2 sourceFingerprint, §6.3).
type Fingerprint struct {
	Size    int64
	MtimeNs string
}

// JSON is the meta.json form {"size": N, "mtimeNs": "…"}.
func (f Fingerprint) JSON() map[string]any {
	return map[string]any{"size": float64(f.Size), "mtimeNs": f.MtimeNs}
}

// SourceStatus is what an lstat of an artifact source proved.
type SourceStatus int

const (
	// SourceRegular: a regular, non-symlink file; Fingerprint is set.
	SourceRegular SourceStatus = iota
	// SourceMissing: ENOENT or ENOTDIR, proven missing (the card goes).
	SourceMissing
	// SourceUnusable: anything else (a symlink, a directory or other
	// non-regular file, a path that is not absolute and canonical, an lstat
	// error such as EACCES, or a Skill that could not be hashed). Not
	// proven missing, so the card stays, but it cannot be fresh.
	SourceUnusable
)

// Observation is one source's state before an inference.
type Observation struct {
	Status      SourceStatus
	Fingerprint Fingerprint
	// Hash is "sha256:<64 hex>" of the content, set only for registered
	// Skills (reference §1.10).
	Hash string
}

// Invalidation is one stale card: {path, scope, reason} (reference §1.10),
// carried by the head's and the tail notices' artifact_invalidations.
type Invalidation struct {
	Path   string `json:"path"`
	Scope  string `json:"scope"`
	Reason string `json:"reason"`
}

// ArtifactSource is one registered artifact path and the scopes whose
// current state holds a card for it, in overlay order.
type ArtifactSource struct {
	Path   string
	Scopes []string
}

// ArtifactSources lists the exact registered artifact paths of the scope
// states (scope → current state), sorted by path.
func ArtifactSources(states map[string]map[string]any) []ArtifactSource {
	by := map[string][]string{}
	for _, scope := range Scopes {
		cards, _ := states[scope][PlaneArtifacts].(map[string]any)
		for p := range cards {
			by[p] = append(by[p], scope)
		}
	}
	out := make([]ArtifactSource, 0, len(by))
	for p, sc := range by {
		out = append(out, ArtifactSource{Path: p, Scopes: sc})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// compilationNeed classifies one card's freshness in one scope: "" when
// fresh, else the invalidation reason. prov is the scope's meta.json
// provenance entry for the path (nil when it has none), malformed says an
// entry existed but was malformed, skill says the path is a registered Pi
// Skill (sha256 content hash, skill-artifact-v1) rather than a plain source
// (lstat fingerprint, artifact-v1). A missing source is not classified here:
// it is removed.
func compilationNeed(prov map[string]any, malformed bool, obs Observation, skill bool) string {
	if prov == nil {
		if malformed {
			return ReasonInvalidMetadata
		}
		return ReasonNew
	}
	rev, ok := prov["compilerRevision"].(string)
	if !ok {
		return ReasonInvalidMetadata
	}
	want := CompilerArtifact
	if skill {
		want = CompilerSkill
	}
	if rev != want {
		return ReasonCompilerChanged
	}
	if skill {
		h, ok := prov["sourceHash"].(string)
		if !ok {
			return ReasonInvalidMetadata
		}
		if obs.Status != SourceRegular || obs.Hash == "" || h != obs.Hash {
			return ReasonSourceChanged
		}
		return ""
	}
	fp, ok := prov["sourceFingerprint"].(map[string]any)
	if !ok {
		return ReasonInvalidMetadata
	}
	if obs.Status != SourceRegular || !Equal(fp, obs.Fingerprint.JSON()) {
		return ReasonSourceChanged
	}
	return ""
}

// FreshnessInput is what [AssessArtifacts] compares.
type FreshnessInput struct {
	// States maps scope → current state.
	States map[string]map[string]any
	// Provenance maps scope → path → well-formed meta.json entry.
	Provenance map[string]map[string]any
	// Malformed maps scope → path → true for malformed entries.
	Malformed map[string]map[string]bool
	// Observations maps each registered path to what its lstat proved.
	Observations map[string]Observation
	// Skills maps a registered Skill's source path to its scope.
	Skills map[string]string
}

// Freshness is the verdict on every registered source.
type Freshness struct {
	// Missing lists the paths proven missing (sorted): their cards and
	// provenance leave every owning scope.
	Missing []string
	// Invalidations lists the stale cards, by path then overlay order.
	Invalidations []Invalidation
}

// AssessArtifacts classifies every registered artifact source (reference
// §1.10): proven missing, or per owning scope fresh or invalidated. A path
// with no observation counts as unusable.
func AssessArtifacts(in FreshnessInput) Freshness {
	var f Freshness
	for _, src := range ArtifactSources(in.States) {
		obs, ok := in.Observations[src.Path]
		if !ok {
			obs = Observation{Status: SourceUnusable}
		}
		if obs.Status == SourceMissing {
			f.Missing = append(f.Missing, src.Path)
			continue
		}
		_, skill := in.Skills[src.Path]
		for _, scope := range src.Scopes {
			prov, _ := in.Provenance[scope][src.Path].(map[string]any)
			if r := compilationNeed(prov, in.Malformed[scope][src.Path], obs, skill); r != "" {
				f.Invalidations = append(f.Invalidations, Invalidation{Path: src.Path, Scope: scope, Reason: r})
			}
		}
	}
	return f
}

// RemoveArtifactsPatches returns, per scope that holds a card for one of
// paths, the replay patch removing those cards (an emptied plane goes too):
// one transition removing proven-missing sources (reference §1.10).
func RemoveArtifactsPatches(states map[string]map[string]any, paths []string) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for _, scope := range Scopes {
		st, ok := states[scope]
		if !ok {
			continue
		}
		cards, _ := st[PlaneArtifacts].(map[string]any)
		del := map[string]any{}
		for _, p := range paths {
			if _, has := cards[p]; has {
				del[p] = nil
			}
		}
		if len(del) == 0 {
			continue
		}
		after, _, err := ApplyPatch(st, map[string]any{PlaneArtifacts: del})
		if err != nil {
			return nil, err
		}
		out[scope] = Replay(st, Prune(after))
	}
	return out, nil
}

// withArtifactHints returns the projected state with the runtime-only hint
// on every effective card that is invalidated in some scope (reference
// §1.10); state itself is not modified (only the changed path is copied).
func withArtifactHints(state map[string]any, inv []Invalidation) map[string]any {
	cards, ok := state[PlaneArtifacts].(map[string]any)
	if !ok || len(inv) == 0 {
		return state
	}
	var nc map[string]any
	for _, i := range inv {
		card, ok := cards[i.Path].(map[string]any)
		if !ok {
			continue
		}
		if nc == nil {
			nc = make(map[string]any, len(cards))
			for k, v := range cards {
				nc[k] = v
			}
		}
		c := make(map[string]any, len(card)+1)
		for k, v := range card {
			c[k] = v
		}
		c["hint"] = msgSourceChangedHint
		nc[i.Path] = c
	}
	if nc == nil {
		return state
	}
	out := make(map[string]any, len(state))
	for k, v := range state {
		out[k] = v
	}
	out[PlaneArtifacts] = nc
	return out
}
