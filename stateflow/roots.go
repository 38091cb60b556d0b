package stateflow

import (
	"fmt"
	"regexp"
	"strings"
)

// RootKind is the JSON type a top-level root holds.
type RootKind int

const (
	// ObjectRoot holds a JSON object (every plane but response).
	ObjectRoot RootKind = iota
	// StringRoot holds a string (response).
	StringRoot
)

// Root describes one top-level root of semantic state (reference §1.5). The
// six planes are built in; semantic modules (seed 003) add x_* roots.
type Root struct {
	Name string
	Kind RootKind
	// Patchable: the model may write it through patch_state.
	Patchable bool
	// Projected: its body is part of the automatic model projection (lazy
	// and unregistered external roots are not).
	Projected bool
	// SessionOnly: only the Session scope may hold it (response).
	SessionOnly bool
}

// Plane names (reference §1.5).
const (
	PlaneIntents   = "intents"
	PlaneContract  = "contract"
	PlaneWorking   = "working"
	PlaneArtifacts = "artifacts"
	PlaneResponse  = "response"
	PlaneLazy      = "lazy"
)

// externalRoot is the identity grammar of module roots (seed 003 "Identity").
var externalRoot = regexp.MustCompile(`^x_[a-z][a-z0-9_]*$`)

// IsExternalRoot reports whether name is a module root id (x_[a-z][a-z0-9_]*).
// Such roots found in a store are retained opaquely even when no module
// is registered (seed 003 "Unavailable").
func IsExternalRoot(name string) bool { return externalRoot.MatchString(name) }

// Roots is the ordered set of known top-level roots: the data-driven
// known-plane filter, patch_state schema and context head all read it. The
// zero value is not usable; start from [BuiltinRoots]. A Roots is not
// changed after construction by its users; [Roots.With] returns a copy.
type Roots struct {
	list []Root
	// namespace: the patch_state schema admits every x_* id (see
	// [Roots.WithModuleNamespace]).
	namespace bool
}

// moduleRootPattern is the JSON Schema pattern of module root ids.
const moduleRootPattern = `^x_[a-z][a-z0-9_]*$`

// WithModuleNamespace returns a copy of r whose patch_state schema admits
// any module root id (object or null) at the top level and in every scope
// (patternProperties [moduleRootPattern]), for a tool registered before its
// session's modules are: Pi validates arguments against the schema it was
// given, and staging decides whether the root may be written.
func (r *Roots) WithModuleNamespace() *Roots {
	return &Roots{list: r.list, namespace: true}
}

// BuiltinRoots returns the six planes in upstream order.
func BuiltinRoots() *Roots {
	return &Roots{list: []Root{
		{Name: PlaneIntents, Patchable: true, Projected: true},
		{Name: PlaneContract, Patchable: true, Projected: true},
		{Name: PlaneWorking, Patchable: true, Projected: true},
		{Name: PlaneArtifacts, Patchable: true, Projected: true},
		{Name: PlaneResponse, Kind: StringRoot, Projected: true, SessionOnly: true},
		{Name: PlaneLazy, Patchable: true},
	}}
}

// With returns a copy of r with a registered module root appended. The name
// must be an external root id not yet known.
func (r *Roots) With(root Root) (*Roots, error) {
	if !IsExternalRoot(root.Name) {
		return nil, fmt.Errorf("stateflow: module root %q is not an x_* id", root.Name)
	}
	if _, ok := r.Lookup(root.Name); ok {
		return nil, fmt.Errorf("stateflow: module root %q is already registered", root.Name)
	}
	return &Roots{list: append(append([]Root(nil), r.list...), root), namespace: r.namespace}, nil
}

// moduleRoot is the root a module adds: an object root, model-patchable
// unless immutable, not in the automatic projection (modules contribute
// context through their own callback).
func moduleRoot(p ModulePolicy) Root {
	return Root{Name: p.ID, Patchable: !p.Immutable}
}

// WithCatalog returns r with each catalog module's root appended in
// definition order ([Roots.With] of [moduleRoot]); an id already known is
// an error.
func (r *Roots) WithCatalog(c Catalog) (*Roots, error) {
	out := r
	for _, m := range c.Modules {
		next, err := out.With(moduleRoot(m.Policy()))
		if err != nil {
			return nil, err
		}
		out = next
	}
	return out, nil
}

// Lookup returns the root called name.
func (r *Roots) Lookup(name string) (Root, bool) {
	for _, x := range r.list {
		if x.Name == name {
			return x, true
		}
	}
	return Root{}, false
}

// All returns the roots in order.
func (r *Roots) All() []Root { return append([]Root(nil), r.list...) }

// PatchKeys lists the patchable roots in order ("intents", "contract",
// "working", "artifacts", "lazy" for the built-ins).
func (r *Roots) PatchKeys() []string {
	var out []string
	for _, x := range r.list {
		if x.Patchable {
			out = append(out, x.Name)
		}
	}
	return out
}

// Names lists every root name.
func (r *Roots) Names() []string {
	out := make([]string, len(r.list))
	for i, x := range r.list {
		out[i] = x.Name
	}
	return out
}

// expectedKeys is the "expected one of" list of patch errors.
func (r *Roots) expectedKeys() string { return strings.Join(r.PatchKeys(), ", ") }

// Filter keeps the known roots of a decoded state and every external root
// (retained opaquely, seed 003); other unknown top-level fields are dropped,
// as upstream readers ignore them (reference §1.5).
func (r *Roots) Filter(state map[string]any) map[string]any {
	out := make(map[string]any, len(state))
	for k, v := range state {
		if _, ok := r.Lookup(k); ok || IsExternalRoot(k) {
			out[k] = v
		}
	}
	return out
}

// hasExternal reports whether state holds an x_* root.
func hasExternal(state map[string]any) bool {
	for k := range state {
		if IsExternalRoot(k) {
			return true
		}
	}
	return false
}
