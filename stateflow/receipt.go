package stateflow

import (
	"strings"
)

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
		keys[k] = Kind(v)
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
// effAfter are the effective views before and after (not projected).
func BuildStateUpdates(roots *Roots, args PatchArgs, st *Staged, effBefore, effAfter map[string]any, projection string) *StateUpdates {
	u := &StateUpdates{Projection: projection, Cascaded: st.Cascaded}
	after := ModelProjection(roots, effAfter)
	seen := map[string]bool{}
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
			walkAuthored([]string{root}, sp[root], func(path []string, authored any, leaf bool) {
				key := strings.Join(path, "\x00")
				if seen[key] || coveredBy(seen, path) {
					return
				}
				cur, present := lookup(after, path)
				switch {
				case !present:
					seen[key] = true
					u.Effective = append(u.Effective, UpdateEntry{Path: path, Deleted: true})
				case leaf && Equal(cur, authored):
					// predictable: elided
				default:
					seen[key] = true
					u.Effective = append(u.Effective, UpdateEntry{Path: path, Value: Clone(cur)})
				}
			})
		}
	}
	if !Equal(effBefore[PlaneLazy], effAfter[PlaneLazy]) {
		u.LazyNavigation = NewLazyNavigation(effAfter)
	}
	return u
}

// walkAuthored calls fn for each authored operation: leaves (non-object
// values and null deletions) and array element patches (reported at the
// array path, not a leaf).
func walkAuthored(path []string, v any, fn func(path []string, authored any, leaf bool)) {
	m, ok := v.(map[string]any)
	if !ok {
		fn(path, v, v != nil)
		return
	}
	if isElementPatch(m) {
		fn(path, m, false)
		return
	}
	if len(m) == 0 {
		fn(path, m, false)
		return
	}
	for _, k := range sortedKeys(m) {
		walkAuthored(append(append([]string(nil), path...), k), m[k], fn)
	}
}

func coveredBy(seen map[string]bool, path []string) bool {
	for i := 1; i < len(path); i++ {
		if seen[strings.Join(path[:i], "\x00")] {
			return true
		}
	}
	return false
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
