package stateflow

import (
	"fmt"
	"sort"
)

// Availability is the state of one module root in one scope (seed 003
// "Available", "Unavailable", "Legacy").
type Availability int

const (
	// Available: a registered definition whose policy matches the retained
	// descriptor exactly, or no descriptor and no raw value yet.
	Available Availability = iota
	// Unavailable: no registered definition (missing or disposed), or its
	// apiVersion, schemaVersion or immutable differ from the descriptor.
	// The retained data is opaque: exact reads return it raw; context and
	// model writes are refused before any validator runs.
	Unavailable
	// Legacy: a raw x_* value in a scope holding no descriptor for it
	// (written by a v1–v3 store or before modules existed). Never adopted:
	// reads return it raw; writes and context are refused.
	Legacy
)

func (a Availability) String() string {
	return [...]string{"available", "unavailable", "legacy"}[a]
}

// ModuleBasis is what module staging knows besides the current states: the
// catalog the call was made under and, per scope, the retained descriptors
// and the x_* roots present anywhere in the retained stream (checkpoint or
// tail). The store builds it from one snapshot.
type ModuleBasis struct {
	Catalog Catalog
	// Descriptors: scope → root → retained descriptor.
	Descriptors map[string]map[string]Descriptor
	// Retained: scope → x_* roots present in any retained record.
	Retained map[string]map[string]bool
}

// Classify returns the availability of root in scope and, unless it is
// Available, the refusal to report. The registered module is returned when
// there is one. A nil basis knows no module: every root is missing (or
// legacy when raw data is retained).
func (b *ModuleBasis) Classify(scope, root string) (Availability, Module, *ModuleError) {
	var desc Descriptor
	hasDesc, retained := false, false
	var m Module
	registered := false
	if b != nil {
		desc, hasDesc = b.Descriptors[scope][root]
		retained = b.Retained[scope][root]
		m, registered = b.Catalog.Lookup(root)
	}
	switch {
	case !hasDesc && retained:
		return Legacy, m, &ModuleError{Root: root, Scope: scope, Reason: ReasonLegacy}
	case !registered:
		return Unavailable, nil, &ModuleError{Root: root, Scope: scope, Reason: ReasonMissing}
	}
	p := m.Policy()
	detail := ""
	switch {
	case p.APIVersion != ModuleAPIVersion:
		detail = fmt.Sprintf("apiVersion %d, supported %d", p.APIVersion, ModuleAPIVersion)
	case hasDesc && desc.SchemaVersion != p.SchemaVersion:
		detail = fmt.Sprintf("retained schemaVersion %d, registered %d", desc.SchemaVersion, p.SchemaVersion)
	case hasDesc && desc.Immutable != p.Immutable:
		detail = fmt.Sprintf("retained immutable %t, registered %t", desc.Immutable, p.Immutable)
	}
	if detail != "" {
		return Unavailable, m, &ModuleError{Root: root, Scope: scope, Reason: ReasonIncompatible, Detail: detail}
	}
	return Available, m, nil
}

// Participating returns the in-reach scopes (overlay order) that hold a
// retained descriptor for root: its participating owners (seed 003
// "sole participating owner").
func (b *ModuleBasis) Participating(root string, inReach map[string]map[string]any) []string {
	var out []string
	for _, scope := range Scopes {
		if _, ok := inReach[scope]; !ok || b == nil {
			continue
		}
		if _, ok := b.Descriptors[scope][root]; ok {
			out = append(out, scope)
		}
	}
	return out
}

// resolveUnscoped assigns each unscoped module patch (args[ScopeUnscoped])
// its owner scope and returns new args without ScopeUnscoped: the sole
// participating owner; with none, Session, or CWD when no session is in
// reach (current holds the in-reach scopes). Two or more participating
// owners refuse the patch ([ReasonAmbiguousOwner]); a root given both
// unscoped and inside its owner's wrapper is refused too. Errors are
// *ToolError.
func resolveUnscoped(args PatchArgs, b *ModuleBasis, current map[string]map[string]any) (PatchArgs, error) {
	un, ok := args[ScopeUnscoped]
	if !ok {
		return args, nil
	}
	out := PatchArgs{}
	for k, v := range args {
		if k != ScopeUnscoped {
			out[k] = cloneShallow(v)
		}
	}
	roots := make([]string, 0, len(un))
	for k := range un {
		roots = append(roots, k)
	}
	sort.Strings(roots)
	for _, root := range roots {
		owners := b.Participating(root, current)
		var owner string
		switch {
		case len(owners) == 1:
			owner = owners[0]
		case len(owners) > 1:
			return nil, toolCause(&ModuleError{Root: root, Reason: ReasonAmbiguousOwner, Owners: owners})
		default:
			owner = ScopeSession
			if _, ok := current[ScopeSession]; !ok {
				owner = ScopeCWD
			}
		}
		if out[owner] == nil {
			out[owner] = map[string]any{}
		}
		if _, dup := out[owner][root]; dup {
			return nil, toolErr("patch_state names %s both unscoped and in %s; give it once", root, owner)
		}
		out[owner][root] = un[root]
	}
	return out, nil
}

func cloneShallow(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// RetainedExternal returns the x_* roots present in a stream's checkpoint
// or any retained tail record.
func RetainedExternal(s *Stream) map[string]bool {
	out := map[string]bool{}
	if s == nil {
		return out
	}
	for k := range s.Checkpoint.State {
		if IsExternalRoot(k) {
			out[k] = true
		}
	}
	for _, r := range s.Patches {
		for k := range r.Patch {
			if IsExternalRoot(k) {
				out[k] = true
			}
		}
	}
	return out
}
