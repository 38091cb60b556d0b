package store

import (
	"context"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// PatchOptions adjusts [Store.Patch].
type PatchOptions struct {
	// CreateSession lets the call initialize an absent session (fresh origin,
	// step 0, mode Options.NewSessionMode, identity from the session key).
	CreateSession bool
	// Projection is the id of the model's frozen head, echoed in
	// state_updates ("" omits it).
	Projection string
	// Compile carries the session's artifact acquisitions, owed compiler
	// outputs and registered Skills (reference §1.7 step 4, §1.10; nil:
	// none). Its provenance reaches meta.json even when the state is
	// already current.
	Compile *sf.Compilation
}

// Patch runs one patch_state transaction (reference §1.7, §2.8
// withPatchTransaction): under the store lock it captures the current files
// (adopting shared drift), stages args, advances the temporal view and
// publishes the cohort crash-atomically. It returns the tool result; the
// error is a *sf.ToolError (rejected patch, nothing written), *Error or
// *sf.TemporalError (store unusable), or an I/O error.
func (s *Store) Patch(ctx context.Context, args sf.PatchArgs, po *PatchOptions) (*sf.PatchResult, error) {
	if po == nil {
		po = &PatchOptions{}
	}
	var res *sf.PatchResult
	cat := s.catalog() // the call's catalog: fenced if it changes (seed 003)
	err := s.withLock(ctx, func(ctx context.Context) error {
		snap, err := s.load()
		if err != nil {
			return err
		}
		res, err = s.patchLocked(ctx, snap, args, po, cat)
		return err
	})
	return res, err
}

func (s *Store) patchLocked(ctx context.Context, snap *Snapshot, args sf.PatchArgs, po *PatchOptions, cat sf.Catalog) (*sf.PatchResult, error) {
	d, v := snap.decoded, snap.View
	creating := s.layout.SessionKey != "" && d.sessionAbsent && po.CreateSession
	sessionLive := s.layout.SessionKey != "" && (!d.sessionAbsent || creating)
	current := map[string]map[string]any{}
	for i, scope := range sf.Scopes {
		if scope == "session" && !sessionLive {
			continue
		}
		current[scope] = v.Streams[i].Current()
	}
	if err := po.Compile.Check(args); err != nil {
		return nil, err
	}
	staged, err := sf.StageModules(ctx, s.opts.Roots, current, args, snap.ModuleBasis(cat))
	if err != nil {
		return nil, err
	}
	if err := s.fenceCatalog(args, cat); err != nil {
		return nil, err
	}
	metas, provChanged := compiledMetas(po.Compile, args, staged.After, withDescriptors(d.metas, staged.Descriptors))
	if len(staged.Changed) == 0 {
		return s.publishProvenance(snap, metas, provChanged, staged)
	}
	changed, err := v.Advance(s.opts.NewID(), staged.Replays, s.opts.HistoryLimit)
	if err != nil {
		return nil, err
	}
	step := snap.Step
	var writes []write
	for i, scope := range sf.Scopes {
		if !contains(changed, scope) && !(scope == "session" && creating) && !contains(provChanged, scope) {
			continue
		}
		w, err := s.scopeWrites(scope, v.Streams[i], metas[i])
		if err != nil {
			return nil, err
		}
		if !contains(changed, scope) && !(scope == "session" && creating) {
			w = w[2:] // provenance only: meta.json
		}
		writes = append(writes, w...)
	}
	if sessionLive {
		step++
		w, err := s.runtimeWrites(d, v, step, creating)
		if err != nil {
			return nil, err
		}
		writes = append(writes, w...)
	}
	if err := s.publish(snap, writes); err != nil {
		return nil, err
	}
	effBefore := overlayOf(staged.Before)
	effAfter := overlayOf(staged.After)
	updates := sf.BuildStateUpdates(s.opts.Roots, args, staged, effBefore, effAfter, po.Projection)
	return sf.NewPatchResult(changed, step, updates, staged.Hints)
}

func overlayOf(states map[string]map[string]any) map[string]any {
	var layers []map[string]any
	for _, scope := range sf.Scopes {
		if st, ok := states[scope]; ok {
			layers = append(layers, st)
		}
	}
	return sf.Overlay(layers...)
}

// scopeWrites renders a stream's checkpoint, tail and meta.
func (s *Store) scopeWrites(scope string, st *sf.Stream, old *Meta) ([]write, error) {
	dir := s.layout.ScopeDir(scope)
	cp, err := sf.CanonicalLine(st.Checkpoint.State)
	if err != nil {
		return nil, err
	}
	tail, err := encodeTail(st.Patches)
	if err != nil {
		return nil, err
	}
	m := &Meta{Version: 2, Extra: map[string]any{}, Artifacts: map[string]any{}}
	if old != nil {
		m = old
	}
	m.Revision, m.Checkpoint, m.Patches = st.Revision, st.Checkpoint.Through, nil
	for _, r := range st.Patches {
		m.Patches = append(m.Patches, r.Transition)
	}
	cards, _ := st.Current()[sf.PlaneArtifacts].(map[string]any)
	for k := range m.Artifacts {
		if _, ok := cards[k]; !ok {
			delete(m.Artifacts, k)
		}
	}
	m.OwnerCWD = s.layout.CWD
	meta, err := m.encode(scope, rawExternal(st, m))
	if err != nil {
		return nil, err
	}
	return []write{
		{Rel: rel(dir, fileCheckpoint), Data: cp},
		{Rel: rel(dir, filePatches), Data: tail},
		{Rel: rel(dir, fileMeta), Data: meta},
	}, nil
}

// runtimeWrites renders the session runtime.json (and config.json for a new
// session) for the view's lineage and step.
func (s *Store) runtimeWrites(d *decoded, v *sf.View, step int, creating bool) ([]write, error) {
	dir := s.layout.ScopeDir("session")
	rt := d.runtime
	if rt == nil {
		id, _ := SessionID(s.layout.SessionKey)
		if id == "" {
			id = s.layout.SessionKey
		}
		rt = &Runtime{CWD: s.layout.CWD, SessionID: id}
	}
	next := *rt
	next.Lineage, next.Step = v.Lineage, step
	data, err := next.encode()
	if err != nil {
		return nil, err
	}
	out := []write{{Rel: rel(dir, fileRuntime), Data: data}}
	if creating {
		cfg, err := encodeSessionConfig(s.opts.NewSessionMode)
		if err != nil {
			return nil, err
		}
		out = append([]write{{Rel: rel(dir, fileConfig), Data: cfg}}, out...)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
