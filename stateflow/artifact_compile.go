package stateflow

import (
	"strings"
)

// Skill scopes: where a registered Pi Skill's card belongs, by the
// sourceInfo.scope Pi's getCommands() reports (reference §1.10).
var skillScopes = map[string]string{"user": ScopeGlobal, "project": ScopeCWD, "temporary": ScopeSession}

// SkillScope maps a Pi sourceInfo.scope ("user", "project", "temporary")
// to the State Flow scope that owns the Skill's card; ok is false for any
// other value.
func SkillScope(piScope string) (string, bool) {
	s, ok := skillScopes[piScope]
	return s, ok
}

// Acquisition is one successful read of a source by the model in this
// session: what was observed when the read returned. Skill is the scope
// of a registered Pi Skill ("" for a plain source).
type Acquisition struct {
	Observation Observation
	Skill       string
}

// Rehydration is one knowledge_rehydration entry (reference §1.11): an
// invalidated source the model has read again, whose compiler output the
// next patch_state must put at Output (`<scope>.artifacts["<path>"]`).
type Rehydration struct {
	Path   string `json:"path"`
	Scope  string `json:"scope"`
	Output string `json:"output"`
}

// NewRehydration is the entry owed for an invalidation.
func NewRehydration(inv Invalidation) Rehydration {
	return Rehydration{Path: inv.Path, Scope: inv.Scope, Output: artifactLocation(inv.Scope, inv.Path)}
}

// Compilation is what patch_state compiles alongside the authored patch
// (reference §1.7 step 4, §1.10): provenance for the cards of acquired
// sources, and the compiler output owed for invalidated sources read since.
type Compilation struct {
	// Acquired maps a source path to its latest successful read.
	Acquired map[string]Acquisition
	// Required lists the compiler outputs owed (invalidated sources read).
	Required []Rehydration
	// Skills maps each registered Skill's source path to its scope.
	Skills map[string]string
	// Now is the compiledAt timestamp (ISO 8601, "" omits it).
	Now string
}

// msgRequiresCompilerOutput is the error for a patch that leaves an owed
// compiler output out; the location follows.
const msgRequiresCompilerOutput = "Successfully read invalidated artifact requires compiler output at "

// Check validates args against the compilation before staging: every owed
// output is written (a card object, or a null deletion that drops the card)
// at its scope, and every card written for a registered Skill sits at the
// Skill's scope with kind "skill", a non-empty description and a non-empty
// compilation. Errors are *ToolError.
func (c *Compilation) Check(args PatchArgs) error {
	if c == nil {
		return nil
	}
	for _, r := range c.Required {
		cards, _ := args[r.Scope][PlaneArtifacts].(map[string]any)
		v, has := cards[r.Path]
		if _, isObj := v.(map[string]any); !has || (v != nil && !isObj) {
			return &ToolError{Msg: msgRequiresCompilerOutput + r.Output}
		}
	}
	for _, scope := range Scopes {
		cards, _ := args[scope][PlaneArtifacts].(map[string]any)
		for _, path := range sortedKeys(cards) {
			want, skill := c.Skills[path]
			card, isObj := cards[path].(map[string]any)
			if !skill || !isObj {
				continue
			}
			if want != scope {
				return toolErr("Registered Skill compiler output for %s belongs at %s, not %s.artifacts", path, artifactLocation(want, path), scope)
			}
			if !validSkillCard(card) {
				return toolErr("Registered Skill compiler output at %s must have kind \"skill\", a non-empty description and a non-empty compilation", artifactLocation(scope, path))
			}
		}
	}
	return nil
}

// validSkillCard: kind "skill", a non-empty description, a non-empty
// compilation object (the patch is merged, so only what it names is
// checked against these rules when it names them).
func validSkillCard(card map[string]any) bool {
	if k, ok := card["kind"].(string); !ok || k != "skill" {
		return false
	}
	if d, ok := card["description"].(string); !ok || strings.TrimSpace(d) == "" {
		return false
	}
	comp, ok := card["compilation"].(map[string]any)
	return ok && len(comp) > 0
}

// Provenance returns scope → path → the meta.json entry to record for each
// card args writes (an object) for an acquired source, when the staged state
// after (scope → state) still holds that card: {sourceFingerprint,
// compilerRevision:"artifact-v1", compiledAt?} for a plain source,
// {sourceHash, compilerRevision:"skill-artifact-v1", compiledAt?} for a
// Skill. A source that was not a regular file when read gets none.
func (c *Compilation) Provenance(args PatchArgs, after map[string]map[string]any) map[string]map[string]any {
	if c == nil || len(c.Acquired) == 0 {
		return nil
	}
	out := map[string]map[string]any{}
	for _, scope := range Scopes {
		cards, _ := args[scope][PlaneArtifacts].(map[string]any)
		kept, _ := after[scope][PlaneArtifacts].(map[string]any)
		for path, v := range cards {
			acq, ok := c.Acquired[path]
			if _, isObj := v.(map[string]any); !ok || !isObj || acq.Observation.Status != SourceRegular {
				continue
			}
			if _, still := kept[path]; !still {
				continue
			}
			e := map[string]any{}
			if acq.Skill != "" && acq.Observation.Hash != "" {
				e["sourceHash"], e["compilerRevision"] = acq.Observation.Hash, CompilerSkill
			} else {
				e["sourceFingerprint"], e["compilerRevision"] = acq.Observation.Fingerprint.JSON(), CompilerArtifact
			}
			if c.Now != "" {
				e["compiledAt"] = c.Now
			}
			if out[scope] == nil {
				out[scope] = map[string]any{}
			}
			out[scope][path] = e
		}
	}
	return out
}

// Discharged returns the owed outputs args did not write (what is still
// owed after it was accepted).
func (c *Compilation) Discharged(args PatchArgs) []Rehydration {
	var left []Rehydration
	for _, r := range c.Required {
		cards, _ := args[r.Scope][PlaneArtifacts].(map[string]any)
		if _, has := cards[r.Path]; !has {
			left = append(left, r)
		}
	}
	return left
}

// ContextUpdate is a tail notice (reference §1.11): the prefix plus JSON
// {state_updates?, artifact_invalidations?, knowledge_rehydration?}; nil
// or empty members are left out.
func ContextUpdate(u *StateUpdates, inv []Invalidation, kr []Rehydration) (string, error) {
	var members []Member
	if u != nil && !u.Empty() {
		members = append(members, Member{"state_updates", u})
	}
	if len(inv) > 0 {
		members = append(members, Member{"artifact_invalidations", inv})
	}
	if len(kr) > 0 {
		members = append(members, Member{"knowledge_rehydration", kr})
	}
	body, err := encodeMembers(members)
	return PrefixTailNotice + body, err
}

// artifactMembers returns the head members knowledge_rehydration and
// artifact_invalidations (in the reference's order, each only when
// non-empty), to follow lazy_navigation (reference §1.11).
func artifactMembers(inv []Invalidation, kr []Rehydration) []Member {
	var out []Member
	if len(kr) > 0 {
		out = append(out, Member{"knowledge_rehydration", kr})
	}
	if len(inv) > 0 {
		out = append(out, Member{"artifact_invalidations", inv})
	}
	return out
}
