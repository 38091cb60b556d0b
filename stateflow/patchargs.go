package stateflow

import (
	"errors"
	"fmt"

	"github.com/pikit-dev/pikit/stateflow/internal/sftext"
)

// ToolError is a tool call answered with an exact upstream error text
// (reference §1.7, §1.8). The Pi extension reports Msg, after a leading
// newline, as the tool's error result.
type ToolError struct {
	Msg string
	// Cause, when set, is the typed error Msg renders (a *ModuleError or
	// ErrCatalogRevoked).
	Cause error
}

func (e *ToolError) Error() string { return e.Msg }

// Unwrap returns Cause.
func (e *ToolError) Unwrap() error { return e.Cause }

// toolCause wraps a typed error as a tool error with its text.
func toolCause(err error) *ToolError { return &ToolError{Msg: err.Error(), Cause: err} }

func toolErr(format string, a ...any) error { return &ToolError{Msg: fmt.Sprintf(format, a...)} }

// PatchArgs is a decoded, validated patch_state argument: per scope, per
// root, one merge patch object. Absent scopes are not in the map. Module
// roots (x_*) given at the top level, beside the scope wrappers, are kept
// under [ScopeUnscoped] until [resolveUnscoped] assigns them an owner.
type PatchArgs map[string]map[string]any

// ScopeUnscoped is the PatchArgs key of unscoped module patches
// ({"x_acme_notes": …} at the top level of patch_state arguments).
const ScopeUnscoped = ""

// DecodePatchArgs decodes and validates a patch_state argument (reference
// §1.7 "Parameters", "Validation errors"), checking in this order: a JSON
// object; no unknown top-level field; at least one scope; each scope a
// non-empty object of patchable roots whose values are objects; no runtime
// provenance field in an artifact card. Module roots (x_*) are accepted
// syntactically inside a scope and, unscoped, at the top level; their value
// is an object (merge patch) or null (delete the root); whether the root may
// be written is decided at staging. Errors are *ToolError with the exact
// message; text that is not JSON has upstream's "requires at least one
// scope patch" with Cause ErrInvalidJSON, text nested deeper than
// [MaxDepth] "patch_state argument is nested too deeply (more than 1000
// levels)" (ours) with Cause ErrTooDeep.
func DecodePatchArgs(roots *Roots, raw []byte) (PatchArgs, error) {
	v, err := DecodeValue(raw)
	if errors.Is(err, ErrTooDeep) {
		return nil, &ToolError{Msg: sftext.TooDeepMsg("patch_state argument"), Cause: err}
	}
	if err != nil {
		return nil, &ToolError{Msg: "patch_state requires at least one scope patch", Cause: err}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, toolErr("patch_state requires at least one scope patch")
	}
	return validatePatchArgs(roots, obj)
}

// validatePatchArgs validates an already decoded argument object; see
// [DecodePatchArgs].
func validatePatchArgs(roots *Roots, obj map[string]any) (PatchArgs, error) {
	args := PatchArgs{}
	for _, k := range sortedKeys(obj) {
		if IsExternalRoot(k) {
			if err := checkModulePatch(k, obj[k]); err != nil {
				return nil, err
			}
			if args[ScopeUnscoped] == nil {
				args[ScopeUnscoped] = map[string]any{}
			}
			args[ScopeUnscoped][k] = obj[k]
			continue
		}
		if scopeIndex(k) < 0 {
			return nil, toolErr("patch_state does not accept field %s", k)
		}
	}
	for _, scope := range Scopes {
		raw, present := obj[scope]
		if !present {
			continue
		}
		sp, ok := raw.(map[string]any)
		if !ok {
			return nil, toolErr("patch_state %s must be a semantic patch object", scope)
		}
		if len(sp) == 0 {
			return nil, toolErr("patch_state %s cannot be empty; omit it when unchanged", scope)
		}
		for _, k := range sortedKeys(sp) {
			if IsExternalRoot(k) {
				if err := checkModulePatch(k, sp[k]); err != nil {
					return nil, err
				}
				continue
			}
			root, known := roots.Lookup(k)
			if !known || !root.Patchable {
				return nil, toolErr("Unknown State Flow patch key %q; expected one of: %s", k, roots.expectedKeys())
			}
			pm, ok := sp[k].(map[string]any)
			if !ok {
				return nil, toolErr("Scoped State Flow patch field %s must be a JSON object", k)
			}
			if k == PlaneArtifacts {
				if err := checkProvenancePatch(scope, pm); err != nil {
					return nil, &ToolError{Msg: err.Error()}
				}
			}
		}
		args[scope] = sp
	}
	if len(args) == 0 {
		return nil, toolErr("patch_state requires at least one scope patch")
	}
	return args, nil
}

// checkModulePatch admits a module root's patch value: an object or null.
func checkModulePatch(root string, v any) error {
	if _, ok := v.(map[string]any); ok || v == nil {
		return nil
	}
	return toolErr("Scoped State Flow patch field %s must be a JSON object", root)
}
