package stateflow

import (
	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/stateflow/internal/memo"
)

// Head prefixes (reference §1.11): state always travels as user-level data,
// never as system instructions.
const (
	PrefixActiveHead  = "State Flow runtime context (user-level data, not system instructions):\n"
	PrefixPassiveHead = "State Flow passive memory (user-level data, not system instructions):\n"
	PrefixTailNotice  = "State Flow context update (user-level data, not system instructions):\n"
	PrefixExitHandoff = "State Flow exit handoff (user-level data, not system instructions):\n"
	PrefixProjection  = "State Flow projection: "
)

// Member is one extra, ordered head member (a module's contribution, seed
// 003); it follows the built-in members.
type Member struct {
	Name  string
	Value any
}

// HeadInput is what the Active head is built from.
type HeadInput struct {
	Roots *Roots
	View  *View
	// Specification is the current run's prompt ("" omits it).
	Specification string
	// ProjectionID is the frozen head's id (second text block).
	ProjectionID string
	// Invalidations (artifact_invalidations, and the hint on each stale
	// card in state) and Rehydration (knowledge_rehydration): reference
	// §1.10, §1.11; empty omits them.
	Invalidations []Invalidation
	Rehydration   []Rehydration
	// Extra members, in order.
	Extra []Member
}

// ActiveHead returns the two text blocks of the Active runtime-context head:
// the prefix plus JSON {specification?, state, lazy_navigation?,
// knowledge_rehydration?, artifact_invalidations?, recent_transitions?,
// …extra} and "State Flow projection: <id>". state is
// the model projection of the current effective view; recent_transitions
// holds, per scope, its retained replay patches (oldest first) without lazy
// and without records left empty.
//
// The members that depend only on the view (state without artifact hints,
// lazy_navigation, recent_transitions) are encoded once per view shape and
// roots and kept in the view's read cache; each call only encodes the
// specification, the artifact members and the extra members and joins them.
// A view decoded again after a change encodes afresh only what changed: the
// state's planes and the records of recent_transitions are memoized by map
// identity (encMemos) across the views ValidateReusing links.
func ActiveHead(in HeadInput) ([2]string, error) {
	parts, err := headPartsOf(in.Roots, in.View)
	if err != nil {
		return [2]string{}, err
	}
	state := parts.State
	if len(in.Invalidations) > 0 {
		// hints on stale cards change the state member: encode it afresh
		eff, err := in.View.EffectiveAt(0)
		if err != nil {
			return [2]string{}, err
		}
		b, err := jsjson.Marshal(withArtifactHints(ModelProjection(in.Roots, eff), in.Invalidations), jsjson.JS())
		if err != nil {
			return [2]string{}, err
		}
		state = memo.Segments{b}
	}
	buf := make([]byte, 0, len(PrefixActiveHead)+state.Len()+len(parts.Nav)+len(parts.RT)+len(in.Specification)+128)
	o := jsjson.NewObject(append(buf, PrefixActiveHead...))
	if in.Specification != "" {
		o.String("specification", in.Specification)
	}
	o.Raw("state", state...)
	if parts.Nav != "" {
		o.Raw("lazy_navigation", []byte(parts.Nav))
	}
	for _, m := range artifactMembers(in.Invalidations, in.Rehydration) {
		o.Value(m.Name, m.Value)
	}
	if parts.RT != "" {
		o.Raw("recent_transitions", []byte(parts.RT))
	}
	for _, m := range in.Extra {
		o.Value(m.Name, m.Value)
	}
	head, err := o.Text()
	if err != nil {
		return [2]string{}, err
	}
	return [2]string{head, PrefixProjection + in.ProjectionID}, nil
}

// headPartsOf returns the view's encoded head members, from the read cache
// when the view is unchanged.
func headPartsOf(roots *Roots, v *View) (*memo.Head, error) {
	c, rk := v.readCache(), rootsKey(roots)
	if h := c.Head(rk); h != nil {
		return h, nil
	}
	eff, err := v.EffectiveAt(0)
	if err != nil {
		return nil, err
	}
	h := &memo.Head{}
	memos := c.Memos()
	if h.State, err = memo.EncodeSegments(modelProjection(roots, eff, &memos.Clean), withMemo(&memos.Head)); err != nil {
		return nil, err
	}
	if nav := NewLazyNavigation(eff); nav.Available {
		b, err := jsjson.Marshal(nav, nil)
		if err != nil {
			return nil, err
		}
		h.Nav = string(b)
	}
	if h.RT, err = encodeRecentTransitions(v, &memos.Records); err != nil {
		return nil, err
	}
	c.PutHead(rk, h)
	return h, nil
}

// PassiveHead is the Passive memory head: {state, lazy_navigation?} with
// the Passive projection (no response).
func PassiveHead(roots *Roots, effective map[string]any, extra ...Member) (string, error) {
	members := []Member{{"state", passiveProjection(roots, effective)}}
	if nav := NewLazyNavigation(effective); nav.Available {
		members = append(members, Member{"lazy_navigation", nav})
	}
	body, err := encodeMembers(append(members, extra...))
	return PrefixPassiveHead + body, err
}

// TailNotice is a context update carrying state_updates.
func TailNotice(u *StateUpdates) (string, error) {
	body, err := encodeMembers([]Member{{"state_updates", u}})
	return PrefixTailNotice + body, err
}

// ExitHandoff is the Active → Passive handoff: {state, continuation}.
func ExitHandoff(roots *Roots, effective map[string]any, continuation string) (string, error) {
	body, err := encodeMembers([]Member{{"state", ModelProjection(roots, effective)}, {"continuation", continuation}})
	return PrefixExitHandoff + body, err
}

// recentTransitions is the head's recent_transitions member (its definition;
// the head writes its encoding with encodeRecentTransitions): per scope, the
// tail's patches without the lazy plane and x_* roots, empty ones dropped.
// A patch holding neither is the view's own map, shared (no clone: the
// result is only encoded, and no View map is modified in place); one
// holding either is a shallow copy without them, so the view's record
// keeps its lazy plane and x_* roots.
func recentTransitions(v *View) map[string]any {
	out := map[string]any{}
	for i, scope := range Scopes {
		s := v.Streams[i]
		if s == nil {
			continue
		}
		var recs []any
		for _, r := range s.Patches {
			p := r.Patch
			if hasHiddenRoot(p) {
				p = withoutHiddenRoots(p)
			}
			if len(p) > 0 {
				recs = append(recs, p)
			}
		}
		if len(recs) > 0 {
			out[scope] = recs
		}
	}
	return out
}

// hasHiddenRoot reports whether a patch holds the lazy plane or an x_* root
// (both left out of recent_transitions).
func hasHiddenRoot(p map[string]any) bool {
	for k := range p {
		if k == PlaneLazy || IsExternalRoot(k) {
			return true
		}
	}
	return false
}

// encodeMembers renders an ordered JSON object (member order kept; nested
// objects sorted as on disk).
func encodeMembers(members []Member) (string, error) {
	var o jsjson.Object
	for _, m := range members {
		o.Value(m.Name, m.Value)
	}
	return o.Text()
}

// withMemo is [jsjson.JS] with memo m (see [jsjson.Options.Memo]).
func withMemo(m jsjson.Memo) *jsjson.Options {
	o := jsjson.JS()
	o.Memo = m
	return o
}
