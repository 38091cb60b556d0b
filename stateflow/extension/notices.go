package extension

import (
	"context"
	"slices"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// seen is the effective memory an Active run's model has been shown: the
// frozen head, plus its own accepted patches (whose receipts it read in
// the tool results), plus the tail notices so far.
type seen struct {
	vector string
	eff    map[string]any
}

// notice is one tail notice (reference §1.11): it sits before the run
// message with index after (counted from the run's first message) and
// stays there in every later context of the run (cache-stable).
type notice struct {
	after int
	msg   piext.Message
}

// freezeHead reads the memory once and builds the run's head from it
// (reference §1.11), recording what the model was shown.
func (x *ext) freezeHead(ctx context.Context, sess *session, r *run) (*store.Snapshot, error) {
	snap, err := sess.store.Read(ctx)
	if err != nil {
		return nil, err
	}
	inv, kr := sess.arts.headMembers()
	head, err := sf.ActiveHead(sf.HeadInput{Roots: x.roots, View: snap.View, Specification: r.spec, ProjectionID: newUUID(), Invalidations: inv, Rehydration: kr})
	if err != nil {
		return nil, err
	}
	msg, err := userMessage(r.anchor, head[0], head[1])
	if err != nil {
		return nil, err
	}
	eff, err := snap.View.EffectiveAt(0)
	if err != nil {
		return nil, err
	}
	r.head, r.headMsg, r.pending, r.started = head, msg, false, true
	r.seen = seen{vector: snap.View.Vector(), eff: eff}
	return snap, nil
}

// ownPatch records that the model saw the memory after its own accepted
// patch (the receipt in the tool result), so it is not noticed again.
func (x *ext) ownPatch(ctx context.Context, sess *session) {
	snap, err := sess.store.Read(ctx)
	if err != nil {
		return
	}
	eff, err := snap.View.EffectiveAt(0)
	if err != nil {
		return
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.run.started {
		sess.run.seen = seen{vector: snap.View.Vector(), eff: eff}
	}
}

// noticeDrift compares the current memory with what the run's model has
// seen; a change made elsewhere (another session, another Pi process)
// becomes a tail notice with its state_updates at the end of the run so
// far.
func (x *ext) noticeDrift(ctx context.Context, sess *session, msgs []piext.Message) error {
	snap, err := sess.store.Read(ctx)
	if err != nil {
		return err
	}
	sess.mu.Lock()
	r := sess.run
	sess.mu.Unlock()
	if snap.View.Vector() == r.seen.vector {
		return nil
	}
	eff, err := snap.View.EffectiveAt(0)
	if err != nil {
		return err
	}
	u := &sf.StateUpdates{Projection: r.projectionID(), Effective: updates(sf.ModelProjection(x.roots, r.seen.eff), sf.ModelProjection(x.roots, eff))}
	if !sf.Equal(r.seen.eff[sf.PlaneLazy], eff[sf.PlaneLazy]) {
		u.LazyNavigation = sf.NewLazyNavigation(eff)
	}
	var n *notice
	if !u.Empty() {
		text, err := sf.TailNotice(u)
		if err != nil {
			return err
		}
		msg, err := userMessage(nil, text)
		if err != nil {
			return err
		}
		after := len(msgs)
		if at := anchorIndex(msgs, r.anchor); at >= 0 {
			after = len(msgs) - at
		}
		n = &notice{after: after, msg: msg}
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.run.started && sess.run.seen.vector == r.seen.vector {
		sess.run.seen = seen{vector: snap.View.Vector(), eff: eff}
		if n != nil {
			sess.run.notices = append(sess.run.notices, *n)
		}
	}
	return nil
}

// projectionID is the frozen head's id (its second text block without the
// prefix).
func (r *run) projectionID() string {
	id := r.head[1]
	if len(id) > len(sf.PrefixProjection) {
		return id[len(sf.PrefixProjection):]
	}
	return ""
}

// updates lists the accepted effective values that changed from before to
// after, leaf by leaf in key order, lazy bodies excluded (reference §1.7
// "state_updates"): a deleted key reads {path, deleted}, anything else the
// new value. The cost is linear in the size of before and after (plus the
// paths listed), whatever the nesting.
func updates(before, after map[string]any) []sf.UpdateEntry {
	var out []sf.UpdateEntry
	var path []string // the member being visited; copied only into an entry
	var walk func(patch, old, cur map[string]any)
	walk = func(patch, old, cur map[string]any) {
		keys := make([]string, 0, len(patch))
		for k := range patch {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if len(path) == 0 && k == sf.PlaneLazy {
				continue
			}
			path = append(path, k)
			v := patch[k]
			pm, isMap := v.(map[string]any)
			om, wasMap := old[k].(map[string]any)
			switch {
			case v == nil:
				out = append(out, sf.UpdateEntry{Path: slices.Clone(path), Deleted: true})
			case isMap && wasMap:
				cm, _ := cur[k].(map[string]any)
				walk(pm, om, cm)
			default:
				out = append(out, sf.UpdateEntry{Path: slices.Clone(path), Value: cur[k]})
			}
			path = path[:len(path)-1]
		}
	}
	walk(sf.Replay(before, after), before, after)
	return out
}
