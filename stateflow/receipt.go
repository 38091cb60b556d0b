package stateflow

import "slices"

// UpdateEntry is one state_updates.effective entry: an accepted effective
// value at a path, or its deletion.
type UpdateEntry struct {
	Path    []string `json:"path"`
	Value   any      `json:"value,omitempty"`
	Deleted bool     `json:"deleted,omitempty"`
}

// LazyNavigation is the bounded key/kind hint of the lazy plane (reference
// §1.11): Keys only when there are at most 32 keys and their JSON is at most
// 1024 characters.
type LazyNavigation struct {
	Available bool              `json:"available"`
	Path      string            `json:"path"`
	Keys      map[string]string `json:"keys,omitempty"`
}

// StateUpdates is the receipt the model reconciles against its frozen head
// (reference §1.7), in upstream member order.
type StateUpdates struct {
	Projection     string          `json:"projection,omitempty"`
	Effective      []UpdateEntry   `json:"effective,omitempty"`
	LazyNavigation *LazyNavigation `json:"lazy_navigation,omitempty"`
	Cascaded       []string        `json:"cascaded,omitempty"`
}

// Empty reports whether nothing is left to reconcile.
func (u *StateUpdates) Empty() bool {
	return len(u.Effective) == 0 && u.LazyNavigation == nil && len(u.Cascaded) == 0
}

// NewLazyNavigation builds the lazy navigation of an effective state.
func NewLazyNavigation(effective map[string]any) *LazyNavigation {
	lazy, _ := effective[PlaneLazy].(map[string]any)
	nav := &LazyNavigation{Available: len(lazy) > 0, Path: "effective.lazy"}
	if len(lazy) == 0 || len(lazy) > 32 {
		return nav
	}
	keys := map[string]string{}
	for k, v := range lazy {
		keys[k] = kindOf(v)
	}
	asAny := map[string]any{}
	for k, v := range keys {
		asAny[k] = v
	}
	if len(mustCanonical(asAny)) <= 1024 {
		nav.Keys = keys
	}
	return nav
}

// BuildStateUpdates computes state_updates for staged args (reference §1.7):
// for each authored path outside lazy, the accepted effective value (after
// overlay and masking) or its deletion, eliding a leaf whose effective value
// equals the authored one; array element patches report the whole array;
// lazy_navigation when lazy changed; cascaded never elided. effBefore and
// effAfter are the effective views before and after (not projected). A
// path already reported (by an earlier scope, or an ancestor of it) is not
// reported again. The cost is linear in the size of args plus the values
// and paths reported, whatever the nesting.
func BuildStateUpdates(roots *Roots, args PatchArgs, st *Staged, effBefore, effAfter map[string]any, projection string) *StateUpdates {
	u := &StateUpdates{Projection: projection, Cascaded: st.Cascaded}
	w := updateWalk{u: u}
	seen := &reported{}
	after := ModelProjection(roots, effAfter)
	for _, scope := range Scopes {
		sp, ok := args[scope]
		if !ok {
			continue
		}
		for _, root := range sortedKeys(sp) {
			r, _ := roots.Lookup(root)
			if !r.Projected {
				continue
			}
			cur, present := after[root]
			w.walk(seen, root, sp[root], cur, present)
		}
	}
	if !Equal(effBefore[PlaneLazy], effAfter[PlaneLazy]) {
		u.LazyNavigation = NewLazyNavigation(effAfter)
	}
	return u
}

// reported is a trie of the paths state_updates already reports: a path at
// or below a reported node is covered.
type reported struct {
	done bool
	kids map[string]*reported
}

func (r *reported) child(k string) *reported {
	if c, ok := r.kids[k]; ok {
		return c
	}
	if r.kids == nil {
		r.kids = map[string]*reported{}
	}
	c := &reported{}
	r.kids[k] = c
	return c
}

// updateWalk walks the authored operations of one patch with the path to
// the current member (one stack, copied only into an entry).
type updateWalk struct {
	u    *StateUpdates
	path []string
}

// walk visits the authored value v at key k below seen's node: leaves
// (non-object values and null deletions), element patches and empty
// objects are operations (an element patch is reported at the array's
// path, and is not a leaf); cur is the accepted effective value there
// (present false: none).
func (w *updateWalk) walk(seen *reported, k string, v any, cur any, present bool) {
	node := seen.child(k)
	if node.done {
		return
	}
	w.path = append(w.path, k)
	defer func() { w.path = w.path[:len(w.path)-1] }()
	m, isObj := v.(map[string]any)
	if isObj && len(m) > 0 && !isElementPatch(m) {
		curObj, _ := cur.(map[string]any)
		for _, ck := range sortedKeys(m) {
			c, ok := curObj[ck]
			w.walk(node, ck, m[ck], c, present && ok)
		}
		return
	}
	leaf := !isObj && v != nil
	switch {
	case !present:
		node.done = true
		w.u.Effective = append(w.u.Effective, UpdateEntry{Path: slices.Clone(w.path), Deleted: true})
	case leaf && Equal(cur, v):
		// predictable: elided
	default:
		node.done = true
		w.u.Effective = append(w.u.Effective, UpdateEntry{Path: slices.Clone(w.path), Value: Clone(cur)})
	}
}

// lookup walks object keys.
func lookup(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, k := range path {
		o, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = o[k]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}
