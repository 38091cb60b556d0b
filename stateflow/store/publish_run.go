package store

import (
	"context"
	"errors"
	"fmt"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// ProposalBasis is what a producer computed from: its owner's content
// (Present false: absent), retained descriptor (nil: none) and owner stream
// revision. [Snapshot.ModuleOwners] fills it; [Store.PublishRun] requires it
// unchanged.
type ProposalBasis struct {
	Content    any
	Present    bool
	Descriptor *sf.Descriptor
	Revision   int
}

// Proposal is one producer's complete replacement for one owner scope
// (seed 003 "produce"). Value empty ({}) clears the content and keeps the
// descriptor; "undefined" is expressed by not making a Proposal.
type Proposal struct {
	Owner  string
	Module sf.Module
	Value  map[string]any
	// Input is the captured input whose receipt is rechecked (nil: the
	// module captured none).
	Input *sf.ModuleInput
	Basis ProposalBasis
}

// RunFence is what must not have changed since an Active preparation
// captured its inputs: the catalog generation and the model/thinking change
// counter (a counter, not a value: A→B→A still revokes).
type RunFence struct {
	Generation uint64
	ModelEpoch uint64
	// ModelChanges returns the current counter (nil: not checked).
	ModelChanges func() uint64
}

// RunPublication is one Active preparation's cohort (seed 003 "coalesces
// them with core maintenance/run fields into one ... publication cohort";
// reference §1.12 step 2): the run's core fields (the specification
// published into runtime.json, the removal of proven-missing artifact
// cards) and the producers' proposals, accepted together in one
// transition (step +1 once).
type RunPublication struct {
	// Specification is the current run's prompt (nil: unchanged).
	Specification *string
	Proposals     []Proposal
	Fence         RunFence
	// ObserveArtifacts observes every artifact source of the state being
	// published and removes the cards of proven-missing ones, with their
	// meta.json provenance, from every owning scope in the same transition
	// (reference §1.10). Skills maps a registered Skill's path to its scope
	// (nil: none); Skills are hashed before the lock is taken.
	ObserveArtifacts bool
	Skills           map[string]string
	// CoreOnReject publishes the core fields alone, under the same lock and
	// in one transaction, when the proposals are rejected (a
	// [*ProposalError], [sf.ErrCatalogRevoked] or [ErrModelChanged]); the
	// rejection is then [RunResult.Rejected], not the error.
	CoreOnReject bool
}

// RunResult reports an accepted run publication.
type RunResult struct {
	// Changed lists the scopes whose state changed (overlay order).
	Changed []string
	Step    int
	// Freshness is the verdict on the artifact cards that remain (Missing
	// empty; zero unless ObserveArtifacts).
	Freshness sf.Freshness
	// Rejected is the proposals' rejection when CoreOnReject published the
	// core fields alone (nil: the proposals were accepted).
	Rejected error
}

// ErrModelChanged revokes producer proposals computed under another model
// or thinking level.
var ErrModelChanged = errors.New("State Flow producer proposals revoked: the model or thinking level changed")

// Proposal rejection reasons ([ProposalError].Reason).
const (
	ProposalStaleInput    = "its captured input is obsolete"
	ProposalNoReceipt     = "its captured input has no receipt"
	ProposalStaleContent  = "its owner content changed"
	ProposalStaleRevision = "its owner scope stream advanced"
	ProposalStaleDesc     = "its retained descriptor changed"
	ProposalNotInReach    = "its owner scope is not in reach"
	ProposalDuplicate     = "the cohort proposes it twice"
)

// ProposalError is one invalid or stale proposal; it rejects the whole
// cohort. Err is the receipt's error or the *sf.ModuleError of an
// unavailable module or refused value.
type ProposalError struct {
	Root, Owner, Reason string
	Err                 error
}

func (e *ProposalError) Error() string {
	if e.Err != nil && e.Reason == "" {
		return fmt.Sprintf("State Flow module root %q proposal for %s rejected: %v", e.Root, e.Owner, e.Err)
	}
	return fmt.Sprintf("State Flow module root %q proposal for %s rejected: %s", e.Root, e.Owner, e.Reason)
}

func (e *ProposalError) Unwrap() error { return e.Err }

// PublishRun publishes an Active preparation's cohort through the store's
// publisher (seed 003 "Active producer publication"). Under the store lock
// it rechecks, in order: ctx cancellation, the catalog generation
// ([sf.ErrCatalogRevoked]) and the model counter ([ErrModelChanged]) when
// there are proposals; then every proposal's owner reach, availability
// (immutable does not apply: producers may write immutable roots), input
// receipt, content, descriptor and owner stream revision; then each
// non-empty value (empty objects pruned) through the module's validator.
// One failure rejects the whole cohort, nothing is written, and the error
// is returned (unless CoreOnReject). Accepted proposals advance one
// transition (step +1) with descriptors minted by first non-empty writes;
// the specification and the missing-card removals ride in the same
// transition. Without a session, a specification or ObserveArtifacts is
// [ErrNoSession].
func (s *Store) PublishRun(ctx context.Context, pub *RunPublication) (*RunResult, error) {
	if s.layout.SessionKey == "" && (pub.Specification != nil || pub.ObserveArtifacts) {
		return nil, ErrNoSession
	}
	var observe func(string) sf.Observation
	if pub.ObserveArtifacts {
		observe = observer(pub.Skills)
	}
	var res *RunResult
	err := s.withLock(ctx, func(ctx context.Context) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		snap, err := s.load()
		if err != nil {
			return err
		}
		res, err = s.publishRunLocked(ctx, snap, pub, observe)
		if err == nil || !pub.CoreOnReject || len(pub.Proposals) == 0 || !rejection(err) {
			return err
		}
		// A rejection happens before anything is staged: snap is intact.
		rejected, core := err, *pub
		core.Proposals = nil
		if res, err = s.publishRunLocked(ctx, snap, &core, observe); err != nil {
			return err
		}
		res.Rejected = rejected
		return nil
	})
	return res, err
}

// rejection reports whether err rejects the proposals (rather than the
// store or the call).
func rejection(err error) bool {
	var pe *ProposalError
	return errors.As(err, &pe) || errors.Is(err, sf.ErrCatalogRevoked) || errors.Is(err, ErrModelChanged)
}

// publishRunLocked stages and publishes pub against snap under the store
// lock; observe (nil: no artifact maintenance) gives each artifact
// source's observation.
func (s *Store) publishRunLocked(ctx context.Context, snap *Snapshot, pub *RunPublication, observe func(string) sf.Observation) (*RunResult, error) {
	d, v := snap.decoded, snap.View
	if (pub.Specification != nil || observe != nil) && d.runtime == nil {
		return nil, ErrNoSession
	}
	cat := s.catalog()
	if len(pub.Proposals) > 0 {
		if cat.Generation != pub.Fence.Generation {
			return nil, sf.ErrCatalogRevoked
		}
		if pub.Fence.ModelChanges != nil && pub.Fence.ModelChanges() != pub.Fence.ModelEpoch {
			return nil, ErrModelChanged
		}
	}
	after, descs, err := s.recheckProposals(ctx, snap, cat, pub.Proposals)
	if err != nil {
		return nil, err
	}
	var fresh sf.Freshness
	if observe != nil {
		if fresh, err = removeMissing(snap, after, pub.Skills, observe); err != nil {
			return nil, err
		}
	}
	replays := map[string]map[string]any{}
	for i, scope := range sf.Scopes {
		if st, ok := after[scope]; ok && !sf.Equal(v.Streams[i].Current(), st) {
			replays[scope] = sf.Replay(v.Streams[i].Current(), st)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	step := snap.Step
	var writes []write
	var changed []string
	if len(replays) > 0 {
		if changed, err = v.Advance(s.opts.NewID(), replays, s.opts.HistoryLimit); err != nil {
			return nil, err
		}
		metas := withDescriptors(d.metas, descs)
		for i, scope := range sf.Scopes {
			if !contains(changed, scope) {
				continue
			}
			w, err := s.scopeWrites(scope, v.Streams[i], metas[i])
			if err != nil {
				return nil, err
			}
			writes = append(writes, w...)
		}
		step++
	}
	if d.runtime != nil && (len(changed) > 0 || pub.Specification != nil) {
		next := *d.runtime
		next.Lineage, next.Step = v.Lineage, step
		if pub.Specification != nil {
			next.Specification, next.HasSpec = *pub.Specification, true
		}
		data, err := next.encode()
		if err != nil {
			return nil, err
		}
		w := write{Rel: rel(s.layout.ScopeDir(sf.ScopeSession), fileRuntime), Data: data}
		if string(data) != string(snap.basis[w.Rel].Data) {
			writes = append(writes, w)
		}
	}
	if len(writes) > 0 {
		if err := s.publish(snap, writes); err != nil {
			return nil, err
		}
	}
	return &RunResult{Changed: changed, Step: step, Freshness: fresh}, nil
}

// removeMissing observes the artifact sources of the states being
// published (after: the proposals' resulting states, the current state of
// the other scopes) and replaces, in after, each scope holding a card of a
// proven-missing source by that scope without the card. It returns the
// freshness of what remains (Missing empty); the provenance of a removed
// card leaves meta.json with the scope's writes.
func removeMissing(snap *Snapshot, after map[string]map[string]any, skills map[string]string, observe func(string) sf.Observation) (sf.Freshness, error) {
	states := map[string]map[string]any{}
	for i, scope := range sf.Scopes {
		if st, ok := after[scope]; ok {
			states[scope] = st
		} else if snap.View.Streams[i] != nil {
			states[scope] = snap.View.Streams[i].Current()
		}
	}
	fresh := freshnessOf(states, snap.decoded.metas, skills, observe)
	removals, err := sf.RemoveArtifactsPatches(states, fresh.Missing)
	if err != nil {
		return sf.Freshness{}, err
	}
	for scope, p := range removals {
		next, _, err := sf.ApplyPatch(states[scope], p)
		if err != nil {
			return sf.Freshness{}, err
		}
		after[scope] = sf.Prune(next)
	}
	fresh.Missing = nil
	return fresh, nil
}

// recheckProposals validates every proposal against the locked snapshot
// and returns the resulting states of the scopes they change and the
// descriptors first writes mint.
func (s *Store) recheckProposals(ctx context.Context, snap *Snapshot, cat sf.Catalog, props []Proposal) (map[string]map[string]any, map[string]map[string]sf.Descriptor, error) {
	basis := snap.ModuleBasis(cat)
	type checked struct {
		p     Proposal
		value map[string]any
	}
	var ok []checked
	seen := map[string]bool{}
	for _, p := range props {
		root := p.Module.Policy().ID
		i := scopeIdx(p.Owner)
		rej := func(reason string, err error) error {
			return &ProposalError{Root: root, Owner: p.Owner, Reason: reason, Err: err}
		}
		if seen[p.Owner+"/"+root] {
			return nil, nil, rej(ProposalDuplicate, nil)
		}
		seen[p.Owner+"/"+root] = true
		if i < 0 || snap.View.Streams[i] == nil || (p.Owner == sf.ScopeSession && snap.decoded.sessionAbsent) {
			return nil, nil, rej(ProposalNotInReach, nil)
		}
		if avail, _, merr := basis.Classify(p.Owner, root); avail != sf.Available {
			return nil, nil, rej("", merr)
		}
		if p.Input != nil {
			if p.Input.AssertCurrent == nil {
				return nil, nil, rej(ProposalNoReceipt, nil)
			}
			if err := p.Input.AssertCurrent(); err != nil {
				return nil, nil, rej(ProposalStaleInput, err)
			}
		}
		now := snap.proposalBasis(i, root, snap.View.Streams[i].Current())
		switch {
		case now.Revision != p.Basis.Revision:
			return nil, nil, rej(ProposalStaleRevision, nil)
		case now.Present != p.Basis.Present || !sf.Equal(now.Content, p.Basis.Content):
			return nil, nil, rej(ProposalStaleContent, nil)
		case (now.Descriptor == nil) != (p.Basis.Descriptor == nil) || (now.Descriptor != nil && *now.Descriptor != *p.Basis.Descriptor):
			return nil, nil, rej(ProposalStaleDesc, nil)
		}
		if sf.ContainsNull(p.Value) {
			return nil, nil, rej("", &sf.ModuleError{Root: root, Scope: p.Owner, Reason: sf.ReasonNotObject})
		}
		ok = append(ok, checked{p, sf.Prune(p.Value)})
	}
	after := map[string]map[string]any{}
	descs := map[string]map[string]sf.Descriptor{}
	for _, c := range ok {
		root := c.p.Module.Policy().ID
		if len(c.value) > 0 {
			if err := sf.AdmitModuleValue(ctx, c.p.Module, c.p.Owner, c.value); err != nil {
				return nil, nil, &ProposalError{Root: root, Owner: c.p.Owner, Err: err}
			}
		}
		st, has := after[c.p.Owner]
		if !has {
			st = sf.CloneObject(snap.View.Streams[scopeIdx(c.p.Owner)].Current())
			after[c.p.Owner] = st
		}
		if len(c.value) == 0 {
			delete(st, root) // {} clears; the descriptor is kept, none minted
			continue
		}
		st[root] = c.value
		if c.p.Basis.Descriptor == nil {
			if descs[c.p.Owner] == nil {
				descs[c.p.Owner] = map[string]sf.Descriptor{}
			}
			descs[c.p.Owner][root] = c.p.Module.Policy().Descriptor()
		}
	}
	return after, descs, nil
}

func scopeIdx(scope string) int {
	for i, s := range sf.Scopes {
		if s == scope {
			return i
		}
	}
	return -1
}
