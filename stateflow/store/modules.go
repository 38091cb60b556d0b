package store

import (
	"sort"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// catalog returns the current module catalog (the zero Catalog without a
// source).
func (s *Store) catalog() sf.Catalog {
	if s.opts.Catalog == nil {
		return sf.Catalog{}
	}
	return s.opts.Catalog.Current()
}

// ModuleBasis builds what module staging needs from one snapshot: cat, the
// retained descriptors of every scope in reach and the x_* roots present in
// each scope's retained stream.
func (sn *Snapshot) ModuleBasis(cat sf.Catalog) *sf.ModuleBasis {
	b := &sf.ModuleBasis{Catalog: cat, Descriptors: map[string]map[string]sf.Descriptor{}, Retained: map[string]map[string]bool{}}
	for i, scope := range sf.Scopes {
		if m := sn.decoded.metas[i]; m != nil && len(m.Descriptors) > 0 {
			b.Descriptors[scope] = m.Descriptors
		}
		if st := sn.View.Streams[i]; st != nil {
			b.Retained[scope] = sf.RetainedExternal(st)
		}
	}
	return b
}

// ModuleOwner is one (scope, module root) of a snapshot as the extension
// sees it when it builds context or runs producers.
type ModuleOwner struct {
	Scope        string
	Module       sf.Module
	Availability sf.Availability
	// Err is the refusal when not Available.
	Err *sf.ModuleError
	// Content is a detached copy of the root's current value (nil: absent).
	Content map[string]any
	// Basis is what a producer's proposal is rechecked against.
	Basis ProposalBasis
}

// ModuleOwners lists, for every scope in reach (overlay order) and every
// module of cat (definition order), the root's availability and content.
// Callbacks may run only for Available owners.
func (sn *Snapshot) ModuleOwners(cat sf.Catalog) []ModuleOwner {
	b := sn.ModuleBasis(cat)
	var out []ModuleOwner
	for i, scope := range sf.Scopes {
		st := sn.View.Streams[i]
		if st == nil || (scope == sf.ScopeSession && sn.decoded.sessionAbsent) {
			continue
		}
		cur := st.Current()
		for _, m := range cat.Modules {
			root := m.Policy().ID
			avail, _, merr := b.Classify(scope, root)
			o := ModuleOwner{Scope: scope, Module: m, Availability: avail, Err: merr, Basis: sn.proposalBasis(i, root, cur)}
			if c, ok := cur[root].(map[string]any); ok {
				o.Content = sf.CloneObject(c)
			}
			out = append(out, o)
		}
	}
	return out
}

func (sn *Snapshot) proposalBasis(i int, root string, cur map[string]any) ProposalBasis {
	pb := ProposalBasis{Revision: sn.View.Streams[i].Revision}
	if c, ok := cur[root]; ok {
		pb.Content = sf.Clone(c)
		pb.Present = true
	}
	if m := sn.decoded.metas[i]; m != nil {
		if d, ok := m.Descriptors[root]; ok {
			pb.Descriptor = &d
		}
	}
	return pb
}

// withDescriptors returns metas with the staged descriptors added (copies;
// the snapshot's metas are not changed). A scope without a meta yet gets a
// fresh v2 one.
func withDescriptors(metas [3]*Meta, add map[string]map[string]sf.Descriptor) [3]*Meta {
	out := metas
	for i, scope := range sf.Scopes {
		ds := add[scope]
		if len(ds) == 0 {
			continue
		}
		m := &Meta{Version: 2, Extra: map[string]any{}, Artifacts: map[string]any{}}
		if metas[i] != nil {
			cp := *metas[i]
			m = &cp
		}
		merged := make(map[string]sf.Descriptor, len(m.Descriptors)+len(ds))
		for k, v := range m.Descriptors {
			merged[k] = v
		}
		for k, v := range ds {
			if _, kept := merged[k]; !kept {
				merged[k] = v // first write mints; a retained descriptor is never replaced
			}
		}
		m.Descriptors = merged
		out[i] = m
	}
	return out
}

// rawExternal reports whether a stream retains an x_* root that m holds no
// descriptor for (the v3 fence of [Meta.metaVersion]).
func rawExternal(st *sf.Stream, m *Meta) bool {
	for root := range sf.RetainedExternal(st) {
		if m == nil {
			return true
		}
		if _, ok := m.Descriptors[root]; !ok {
			return true
		}
	}
	return false
}

// fenceCatalog refuses a patch naming module roots when the catalog it was
// staged under is no longer current (a registration or disposal happened
// while it queued; equal-id re-registration included).
func (s *Store) fenceCatalog(args sf.PatchArgs, cat sf.Catalog) error {
	names := false
	for _, sp := range args {
		for k := range sp {
			names = names || sf.IsExternalRoot(k)
		}
	}
	if names && s.catalog().Generation != cat.Generation {
		return &sf.ToolError{Msg: sf.ErrCatalogRevoked.Error(), Cause: sf.ErrCatalogRevoked}
	}
	return nil
}

// LegacyRoots lists the raw x_* roots of the snapshot that have no
// descriptor in their scope ("<scope>.<root>", overlay order then name):
// legacy collisions that no module may adopt (seed 003 "Legacy"). Listing
// them converts nothing.
func (sn *Snapshot) LegacyRoots() []string {
	var out []string
	for i, scope := range sf.Scopes {
		st := sn.View.Streams[i]
		if st == nil {
			continue
		}
		var roots []string
		for root := range sf.RetainedExternal(st) {
			if m := sn.decoded.metas[i]; m != nil {
				if _, ok := m.Descriptors[root]; ok {
					continue
				}
			}
			roots = append(roots, root)
		}
		sort.Strings(roots)
		for _, r := range roots {
			out = append(out, scope+"."+r)
		}
	}
	return out
}
