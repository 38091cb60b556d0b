package stateflow

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Exact upstream messages of state validation (reference §1.7).
const (
	msgStoredNull     = "Materialized state cannot contain null; use null only as an object-key deletion marker"
	msgCompiledSkills = "contract.compiled_skills is retired; Skill compilations belong only in source-addressed artifacts"
)

// StateError is a materialized state that breaks a rule; Msg is the exact
// text reported to the model or operator.
type StateError struct{ Msg string }

func (e *StateError) Error() string { return e.Msg }

// provenanceFields may never appear in an artifact card: the runtime keeps
// them in meta.json (reference §1.7).
var provenanceFields = []string{"hash", "compiler", "compiled_at", "sourceHash", "sourceFingerprint",
	"compilerRevision", "compiledAt", "source_hash_verified", "hint"}

// validateState checks one scope's materialized state: no null anywhere, the
// known roots of the right JSON type, response only in Session, no retired
// contract.compiled_skills and a valid artifact registry. scope is
// "global", "cwd" or "session".
func validateState(roots *Roots, scope string, state map[string]any) error {
	for k, v := range state {
		if ContainsNull(v) {
			return &StateError{Msg: msgStoredNull}
		}
		root, ok := roots.Lookup(k)
		if !ok {
			if IsExternalRoot(k) {
				continue // opaque
			}
			return &StateError{Msg: fmt.Sprintf("Unknown State Flow plane %q", k)}
		}
		switch root.Kind {
		case StringRoot:
			if _, ok := v.(string); !ok {
				return &StateError{Msg: fmt.Sprintf("State Flow plane %s must be a string", k)}
			}
		default:
			if _, ok := v.(map[string]any); !ok {
				return &StateError{Msg: fmt.Sprintf("State Flow plane %s must be a JSON object", k)}
			}
		}
		if root.SessionOnly && scope != "session" {
			return &StateError{Msg: fmt.Sprintf("State Flow plane %s belongs only to the session scope", k)}
		}
	}
	if c, ok := state[PlaneContract].(map[string]any); ok {
		if _, ok := c["compiled_skills"]; ok {
			return &StateError{Msg: msgCompiledSkills}
		}
	}
	if a, ok := state[PlaneArtifacts].(map[string]any); ok {
		for _, path := range sortedKeys(a) {
			if err := validateArtifactCard(scope, path, a[path]); err != nil {
				return err
			}
		}
	}
	return nil
}

// artifactLocation is `<scope>.artifacts["<path>"]` with the path as a JSON
// string.
func artifactLocation(scope, path string) string {
	return scope + ".artifacts[" + mustCanonical(path) + "]"
}

// validateArtifactCard checks one routing card (reference §1.5, §1.7): the key
// an exact absolute path, the card an object with a non-empty description,
// optional kind (non-empty string), tags (unique, non-empty, trimmed strings)
// and compilation (object), and no runtime provenance field.
func validateArtifactCard(scope, path string, card any) error {
	loc := artifactLocation(scope, path)
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return &StateError{Msg: fmt.Sprintf("Artifact metadata at %s must be keyed by an exact absolute source path", loc)}
	}
	m, ok := card.(map[string]any)
	if !ok {
		return &StateError{Msg: fmt.Sprintf("Artifact metadata at %s must have a non-empty description", loc)}
	}
	if d, ok := m["description"].(string); !ok || strings.TrimSpace(d) == "" {
		return &StateError{Msg: fmt.Sprintf("Artifact metadata at %s must have a non-empty description", loc)}
	}
	for _, f := range provenanceFields {
		if _, ok := m[f]; ok {
			return &StateError{Msg: fmt.Sprintf("Artifact metadata at %s cannot contain runtime provenance field %s", loc, f)}
		}
	}
	if k, ok := m["kind"]; ok {
		if s, ok := k.(string); !ok || strings.TrimSpace(s) == "" {
			return &StateError{Msg: fmt.Sprintf("Artifact metadata at %s kind must be a non-empty string", loc)}
		}
	}
	if c, ok := m["compilation"]; ok {
		if _, ok := c.(map[string]any); !ok {
			return &StateError{Msg: fmt.Sprintf("Artifact metadata at %s compilation must be a JSON object", loc)}
		}
	}
	if t, ok := m["tags"]; ok {
		if !validTags(t) {
			return &StateError{Msg: fmt.Sprintf("Artifact metadata at %s tags must be unique non-empty trimmed strings", loc)}
		}
	}
	return nil
}

func validTags(t any) bool {
	arr, ok := t.([]any)
	if !ok {
		return false
	}
	seen := map[string]bool{}
	for _, e := range arr {
		s, ok := e.(string)
		if !ok || s == "" || strings.TrimSpace(s) != s || seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}

// checkProvenancePatch rejects a patch that names a runtime provenance field
// inside an artifact card, including null deletions of one (reference §1.7).
func checkProvenancePatch(scope string, planePatch map[string]any) error {
	for _, path := range sortedKeys(planePatch) {
		card, ok := planePatch[path].(map[string]any)
		if !ok {
			continue
		}
		for _, f := range provenanceFields {
			if _, ok := card[f]; ok {
				return &StateError{Msg: fmt.Sprintf("Artifact metadata at %s cannot contain runtime provenance field %s", artifactLocation(scope, path), f)}
			}
		}
	}
	return nil
}
