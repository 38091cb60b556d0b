package stateflow

// Tool names (reference §1.7, §1.8).
const (
	ToolPatchState = "patch_state"
	ToolReadState  = "read_state"
)

// Barrier messages (reference §1.7 "Barrier").
const (
	msgBarrierExactlyOne = "A State Flow barrier response must contain exactly one patch_state call"
	msgBarrierSibling    = "Blocked by the patch_state barrier; reconsider this action after State Flow rematerializes context"
)

// PatchStateSchema is the patch_state parameter schema as JSON Schema data
// (reference §1.7): each scope optional, additionalProperties false at both
// levels, each patchable root an object. It is built from roots, so
// registered module roots appear without code changes: inside each scope
// and, for unscoped module patches (seed 003), at the top level too; with
// [Roots.WithModuleNamespace] every x_* id is admitted by pattern.
func PatchStateSchema(roots *Roots) map[string]any {
	planes := map[string]any{}
	props := map[string]any{}
	for _, k := range roots.PatchKeys() {
		if IsExternalRoot(k) {
			// null deletes a module root (its descriptor is kept).
			planes[k] = map[string]any{"type": []any{"object", "null"}}
			props[k] = planes[k]
			continue
		}
		planes[k] = map[string]any{"type": "object"}
	}
	scope := map[string]any{"type": "object", "properties": planes, "additionalProperties": false}
	for _, s := range Scopes {
		props[s] = scope
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if roots.namespace {
		pattern := map[string]any{moduleRootPattern: map[string]any{"type": []any{"object", "null"}}}
		scope["patternProperties"] = pattern
		out["patternProperties"] = pattern
	}
	return out
}

// ReadStateSchema is the read_state parameter schema (reference §1.8).
func ReadStateSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"path":       map[string]any{"type": "string"},
			"paths":      map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": float64(1)},
			"projection": map[string]any{"type": "string", "enum": []any{"value", "keys", "patch"}},
		},
		"additionalProperties": false,
	}
}

// Barrier decides the Active barrier for one assistant message's tool calls
// (names in order): when any is patch_state, it must be the only patch_state
// and every sibling is blocked. It returns, per call, "" to allow or the
// exact block reason.
func Barrier(calls []string) []string {
	out := make([]string, len(calls))
	patches := 0
	for _, c := range calls {
		if c == ToolPatchState {
			patches++
		}
	}
	if patches == 0 {
		return out
	}
	for i, c := range calls {
		switch {
		case c == ToolPatchState && patches > 1:
			out[i] = msgBarrierExactlyOne
		case c != ToolPatchState:
			out[i] = msgBarrierSibling
		}
	}
	return out
}
