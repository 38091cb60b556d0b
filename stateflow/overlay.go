package stateflow

import "github.com/pikit-dev/pikit/stateflow/internal/memo"

// Scope names, in overlay order (reference §1.6).
const (
	ScopeGlobal  = "global"
	ScopeCWD     = "cwd"
	ScopeSession = "session"
)

// Scopes lists the scopes in overlay order global → cwd → session.
var Scopes = [3]string{ScopeGlobal, ScopeCWD, ScopeSession}

// Overlay computes the effective view (reference §1.6): each scope's
// present roots merged in order, later scopes winning, objects merging,
// arrays and scalars replacing. response takes the highest-priority
// non-empty value. The inputs are not modified; the result shares their
// subtrees, so treat it as read-only (or Clone it).
func Overlay(layers ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, l := range layers {
		for k, v := range l {
			if k == PlaneResponse {
				if s, _ := v.(string); s != "" {
					out[k] = s
				}
				continue
			}
			out[k] = merge(out[k], v)
		}
	}
	return out
}

// merge overlays b onto a: objects merge recursively, anything else in b
// replaces a. Subtrees of b are shared, not copied; maps on a merge path are
// new.
func merge(a, b any) any {
	bo, ok := b.(map[string]any)
	if !ok {
		return b
	}
	ao, ok := a.(map[string]any)
	if !ok {
		return bo
	}
	out := make(map[string]any, len(ao)+len(bo))
	for k, v := range ao {
		out[k] = v
	}
	for k, v := range bo {
		out[k] = merge(out[k], v)
	}
	return out
}

// ModelProjection is what the model sees of a state (reference §6.1 item 2):
// only projected roots (lazy and unregistered external roots dropped), an
// empty response dropped, empty objects pruned.
func ModelProjection(roots *Roots, state map[string]any) map[string]any {
	return modelProjection(roots, state, nil)
}

// modelProjection is ModelProjection with a memo of clean planes (nil: none).
func modelProjection(roots *Roots, state map[string]any, clean *memo.Clean) map[string]any {
	out := map[string]any{}
	for k, v := range state {
		r, ok := roots.Lookup(k)
		if !ok || !r.Projected {
			continue
		}
		if s, isStr := v.(string); isStr && s == "" && k == PlaneResponse {
			continue
		}
		out[k] = v
	}
	return prunedMemo(out, clean)
}

// pruned is Prune for read-only results: m itself when it holds no empty
// object (stored states never do), else a pruned copy.
func pruned(m map[string]any) map[string]any { return prunedMemo(m, nil) }

// hasEmptyObject reports whether an object field anywhere in m (not inside
// arrays) is an empty object.
func hasEmptyObject(m map[string]any) bool {
	for _, v := range m {
		if o, ok := v.(map[string]any); ok && (len(o) == 0 || hasEmptyObject(o)) {
			return true
		}
	}
	return false
}

// passiveProjection is the model projection without response (reference
// §1.2, 0.26.3).
func passiveProjection(roots *Roots, state map[string]any) map[string]any {
	out := ModelProjection(roots, state)
	delete(out, PlaneResponse)
	return out
}

// readProjection is the state a read_state value path selects from
// (reference §1.8): lazy dropped unless keepLazy (the path starts at lazy),
// an empty response dropped, empty objects pruned. External roots are kept
// exactly as stored, unpruned (exact reads of opaque data, seed 003
// "Unavailable").
func readProjection(state map[string]any, keepLazy bool) map[string]any {
	out := map[string]any{}
	var ext map[string]any
	for k, v := range state {
		if k == PlaneLazy && !keepLazy {
			continue
		}
		if s, isStr := v.(string); isStr && s == "" && k == PlaneResponse {
			continue
		}
		if IsExternalRoot(k) {
			if ext == nil {
				ext = map[string]any{}
			}
			ext[k] = v
			continue
		}
		out[k] = v
	}
	out = pruned(out)
	for k, v := range ext {
		out[k] = v
	}
	return out
}
