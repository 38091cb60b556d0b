package stateflow

import "github.com/pikit-dev/pikit/stateflow/internal/memo"

// prunedRead prunes a read_state selection (reference §1.8) except module
// data, which exact reads return raw (seed 003 "Exact current/history reads
// may return raw data"): a selection inside an x_* root is returned as
// stored; a whole-state selection prunes its planes and keeps its x_* roots
// unpruned. clean (nil: none) remembers clean planes (prunedMemo).
func prunedRead(m map[string]any, p *readPath, clean *memo.Clean) map[string]any {
	if len(p.Selectors) > 0 {
		if s := p.Selectors[0]; s.Kind == selKey && IsExternalRoot(s.Key) {
			return m
		}
		return prunedMemo(m, clean)
	}
	if !hasExternal(m) {
		return prunedMemo(m, clean)
	}
	planes := make(map[string]any, len(m))
	for k, v := range m {
		if !IsExternalRoot(k) {
			planes[k] = v
		}
	}
	out := prunedMemo(planes, clean) // planes itself or a new map: ours either way
	for k, v := range m {
		if IsExternalRoot(k) {
			out[k] = v
		}
	}
	return out
}
