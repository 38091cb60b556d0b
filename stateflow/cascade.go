package stateflow

import (
	"regexp"
	"sort"
	"strings"
)

// refKey is the key grammar of read paths and owned references (reference
// §1.8): ASCII [A-Za-z_$][A-Za-z0-9_$-]*.
var refKey = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

// ownedRef is a parsed "<scope>.(working|lazy).k1.k2…" reference.
type ownedRef struct {
	plane string
	keys  []string
}

func (r ownedRef) path() []string { return append([]string{r.plane}, r.keys...) }

// prefixOf reports whether r names p or an ancestor of p.
func (r ownedRef) prefixOf(p ownedRef) bool {
	a, b := r.path(), p.path()
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// parseOwnedRef parses a structured $ref naming scope's working or lazy plane
// and at least one key; anything else is not an owning reference.
func parseOwnedRef(scope, ref string) (ownedRef, bool) {
	parts := strings.Split(ref, ".")
	if len(parts) < 3 || parts[0] != scope || (parts[1] != PlaneWorking && parts[1] != PlaneLazy) {
		return ownedRef{}, false
	}
	for _, k := range parts[2:] {
		if !refKey.MatchString(k) {
			return ownedRef{}, false
		}
	}
	return ownedRef{plane: parts[1], keys: parts[2:]}, true
}

// structuredRefs collects every {"$ref": "<string>"} inside v.
func structuredRefs(v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x["$ref"].(string); ok {
			*out = append(*out, s)
		}
		for _, k := range sortedKeys(x) {
			structuredRefs(x[k], out)
		}
	case []any:
		for _, e := range x {
			structuredRefs(e, out)
		}
	}
}

// cascade computes the intent-ownership cascade of one scope (reference
// §1.9): the working/lazy keys owned by intents that before held and after
// (the state after the authored patch) no longer holds, minus those still
// referenced by a remaining intent, those absent from after, and those below
// another target; sorted by JSON.stringify([plane, …keys]). It returns the
// state with those keys deleted and pruned, and the receipts
// "<scope>.<plane>.<k1>…" in the same order.
func cascade(scope string, before, after map[string]any) (map[string]any, []string) {
	oldIntents, _ := before[PlaneIntents].(map[string]any)
	newIntents, _ := after[PlaneIntents].(map[string]any)
	var cands []ownedRef
	for _, k := range sortedKeys(oldIntents) {
		if _, kept := newIntents[k]; kept {
			continue
		}
		var refs []string
		structuredRefs(oldIntents[k], &refs)
		for _, s := range refs {
			if r, ok := parseOwnedRef(scope, s); ok {
				cands = append(cands, r)
			}
		}
	}
	if len(cands) == 0 {
		return after, nil
	}
	var remainingRaw []string
	structuredRefs(newIntents, &remainingRaw)
	var remaining []ownedRef
	for _, s := range remainingRaw {
		if r, ok := parseOwnedRef(scope, s); ok {
			remaining = append(remaining, r)
		}
	}
	var kept []ownedRef
	for _, c := range cands {
		if referenced(c, remaining) || !exists(after, c.path()) {
			continue
		}
		kept = append(kept, c)
	}
	var targets []ownedRef
	for _, c := range kept {
		below := false
		for _, o := range kept {
			if len(o.path()) < len(c.path()) && o.prefixOf(c) {
				below = true
				break
			}
		}
		if !below && !containsRef(targets, c) {
			targets = append(targets, c)
		}
	}
	sort.Slice(targets, func(i, j int) bool {
		return mustCanonicalStrings(targets[i].path()) < mustCanonicalStrings(targets[j].path())
	})
	out := CloneObject(after)
	receipts := make([]string, 0, len(targets))
	for _, t := range targets {
		deletePath(out, t.path())
		receipts = append(receipts, scope+"."+strings.Join(t.path(), "."))
	}
	return Prune(out), receipts
}

func mustCanonicalStrings(p []string) string {
	arr := make([]any, len(p))
	for i, s := range p {
		arr[i] = s
	}
	return mustCanonical(arr)
}

func referenced(c ownedRef, remaining []ownedRef) bool {
	for _, r := range remaining {
		if r.prefixOf(c) || c.prefixOf(r) {
			return true
		}
	}
	return false
}

func containsRef(list []ownedRef, r ownedRef) bool {
	for _, x := range list {
		if x.prefixOf(r) && r.prefixOf(x) {
			return true
		}
	}
	return false
}

func exists(m map[string]any, path []string) bool {
	var cur any = m
	for _, k := range path {
		o, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		cur, ok = o[k]
		if !ok {
			return false
		}
	}
	return true
}

// deletePath removes path from m (whose maps are owned by the caller).
func deletePath(m map[string]any, path []string) {
	cur := m
	for i, k := range path {
		if i == len(path)-1 {
			delete(cur, k)
			return
		}
		next, ok := cur[k].(map[string]any)
		if !ok {
			return
		}
		cur = next
	}
}
