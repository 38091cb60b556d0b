package stateflow

import (
	"errors"
	"fmt"
)

// Module refusal reasons ([ModuleError].Reason). The texts of
// [ModuleError.Error] are ours (seed 003 names the states, not the words)
// and stable.
const (
	// ReasonMissing: no registered (or a disposed) definition for the root.
	ReasonMissing = "missing"
	// ReasonIncompatible: apiVersion, schemaVersion or immutable differ
	// from the retained descriptor.
	ReasonIncompatible = "incompatible"
	// ReasonLegacy: a raw x_* value without a descriptor (legacy
	// collision), never adopted.
	ReasonLegacy = "legacy"
	// ReasonImmutable: a model write to an immutable module root.
	ReasonImmutable = "immutable"
	// ReasonInvalid: the validator refused the complete resulting value.
	ReasonInvalid = "invalid"
	// ReasonNotObject: the resulting value is not a JSON object.
	ReasonNotObject = "not-object"
	// ReasonAmbiguousOwner: an unscoped module patch with two or more
	// participating owners.
	ReasonAmbiguousOwner = "ambiguous-owner"
)

// ModuleError is a refused module write or context call on one (scope,
// root). Its texts, by Reason (ours, stable):
//
//	missing       State Flow module root "<root>" is unavailable in <scope>: no registered definition; its retained data is readable but not writable
//	incompatible  State Flow module root "<root>" is unavailable in <scope>: the registered definition does not match its retained descriptor (<detail>)
//	legacy        State Flow module root "<root>" in <scope> is a legacy collision: a raw value without a descriptor is never adopted
//	immutable     State Flow module root "<root>" is immutable: the main agent may not write it
//	invalid       State Flow module root "<root>" rejected the resulting value[: <validator error>]
//	not-object    State Flow module root "<root>" must be a JSON object
//	ambiguous     State Flow module root "<root>" has several participating owners (<a, b>); wrap the patch in an explicit scope, e.g. {"<last>":{"<root>":…}}
//
// <detail> is "apiVersion <n>, supported 1", "retained schemaVersion <a>,
// registered <b>" or "retained immutable <a>, registered <b>".
type ModuleError struct {
	Root   string
	Scope  string   // "" for an unscoped patch
	Reason string   // Reason* constants
	Detail string   // for ReasonIncompatible: what differs
	Owners []string // for ReasonAmbiguousOwner: participating owners in scope order
	Err    error    // for ReasonInvalid: the validator's error, if any
}

func (e *ModuleError) Error() string {
	switch e.Reason {
	case ReasonMissing:
		return fmt.Sprintf("State Flow module root %q is unavailable in %s: no registered definition; its retained data is readable but not writable", e.Root, e.Scope)
	case ReasonIncompatible:
		return fmt.Sprintf("State Flow module root %q is unavailable in %s: the registered definition does not match its retained descriptor (%s)", e.Root, e.Scope, e.Detail)
	case ReasonLegacy:
		return fmt.Sprintf("State Flow module root %q in %s is a legacy collision: a raw value without a descriptor is never adopted", e.Root, e.Scope)
	case ReasonImmutable:
		return fmt.Sprintf("State Flow module root %q is immutable: the main agent may not write it", e.Root)
	case ReasonInvalid:
		if e.Err != nil {
			return fmt.Sprintf("State Flow module root %q rejected the resulting value: %v", e.Root, e.Err)
		}
		return fmt.Sprintf("State Flow module root %q rejected the resulting value", e.Root)
	case ReasonNotObject:
		return fmt.Sprintf("State Flow module root %q must be a JSON object", e.Root)
	case ReasonAmbiguousOwner:
		return fmt.Sprintf("State Flow module root %q has several participating owners (%s); wrap the patch in an explicit scope, e.g. {%q:{%q:…}}", e.Root, joinComma(e.Owners), lastOr(e.Owners, ScopeSession), e.Root)
	}
	return fmt.Sprintf("State Flow module root %q refused (%s)", e.Root, e.Reason)
}

func (e *ModuleError) Unwrap() error { return e.Err }

// ErrCatalogRevoked fences a call or publication made under a catalog
// generation that is no longer current (a registration or disposal
// happened since, equal-id re-registration included).
var ErrCatalogRevoked = errors.New("State Flow module catalog changed; the call belongs to a revoked catalog")

// ErrModuleInvalid matches (errors.Is) every ModuleError with ReasonInvalid.
var ErrModuleInvalid = errors.New("State Flow module validator refused the value")

// Is makes errors.Is(err, ErrModuleInvalid) hold for validator refusals.
func (e *ModuleError) Is(target error) bool {
	return target == ErrModuleInvalid && e.Reason == ReasonInvalid
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

func lastOr(s []string, def string) string {
	if len(s) == 0 {
		return def
	}
	return s[len(s)-1]
}
