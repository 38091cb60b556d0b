package stateflow

import (
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/pikit-dev/pikit/internal/jsjson"
)

// Record memo bounds: at most recordMemoMaxEntries records (three full
// tails at MaxHistoryLimit, with room for the records of earlier views) and
// recordMemoMaxBytes of encodings; a memo that would pass either bound is
// emptied first. An encoding over recordMemoMaxBytes/4 is not kept.
const (
	recordMemoMaxEntries = 1024
	recordMemoMaxBytes   = 4 << 20
)

// recordMemo memoizes the encoding of each record in the head's
// recent_transitions by the identity of the record's patch map (the view's
// own map, also for a record whose lazy plane and x_* roots are left out:
// its entry is the encoding of the filtered copy). A view decoded again
// after a change keeps the unchanged records' maps (the store reuses tail
// lines by bytes, and an unchanged scope's whole stream), so only new
// records are encoded. Each entry holds its map, so the address is not
// reused while the entry lives; this relies on the rule that maps
// reachable from a view are never modified in place. Safe for concurrent
// use; the zero value is empty.
type recordMemo struct {
	mu      sync.Mutex
	entries map[unsafe.Pointer]recordEnc
	size    int
}

// recordEnc is one record's encoding; dropped marks a record left out of
// recent_transitions (nothing but hidden roots).
type recordEnc struct {
	m       map[string]any
	enc     []byte
	dropped bool
}

// get returns p's entry.
func (r *recordMemo) get(p map[string]any) (recordEnc, bool) {
	x, ok := r.entries[mapPtr(p)]
	return x, ok
}

// put stores p's entry, emptying the memo first when it would pass a
// bound.
func (r *recordMemo) put(p map[string]any, x recordEnc) {
	if len(x.enc) > recordMemoMaxBytes/4 {
		return
	}
	if r.entries == nil || len(r.entries) >= recordMemoMaxEntries || r.size+len(x.enc) > recordMemoMaxBytes {
		r.entries, r.size = map[unsafe.Pointer]recordEnc{}, 0
	}
	x.m = p
	r.entries[mapPtr(p)] = x
	r.size += len(x.enc)
}

// recordEncoding encodes one record as it appears in recent_transitions:
// the patch without hidden roots, at depth 2 (an element of a scope's
// array), as jsjson.Marshal(recentTransitions(v), headJSON) writes it
// (errors included).
func recordEncoding(p map[string]any) (recordEnc, error) {
	if hasHiddenRoot(p) {
		p = withoutHiddenRoots(p)
	}
	if len(p) == 0 {
		return recordEnc{dropped: true}, nil
	}
	b, err := jsjson.Marshal([]any{[]any{p}}, headJSON)
	if err != nil {
		return recordEnc{}, err
	}
	return recordEnc{enc: b[2 : len(b)-2]}, nil
}

// encodeRecentTransitions returns jsjson.Marshal(recentTransitions(v),
// headJSON) as a string ("" when no scope retains a shown record), taking
// each record's encoding from memo (nil: none) and filling it.
func encodeRecentTransitions(v *View, memo *recordMemo) (string, error) {
	if memo == nil {
		memo = &recordMemo{}
	}
	memo.mu.Lock()
	defer memo.mu.Unlock()
	// the member's keys in the order jsjson writes a map's: scope names
	// are plain ASCII words, so byte order (the rule's order for them)
	order := make([]int, 0, len(Scopes))
	for i := range Scopes {
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(Scopes[a], Scopes[b]) })
	type scopeEncs struct {
		name string
		encs [][]byte
	}
	var parts []scopeEncs
	size := 2
	for _, i := range order {
		s := v.Streams[i]
		if s == nil {
			continue
		}
		var encs [][]byte
		for _, r := range s.Patches {
			x, ok := memo.get(r.Patch)
			if !ok {
				var err error
				if x, err = recordEncoding(r.Patch); err != nil {
					return "", err
				}
				memo.put(r.Patch, x)
			}
			if !x.dropped {
				encs = append(encs, x.enc)
				size += len(x.enc) + 1
			}
		}
		if len(encs) > 0 {
			parts = append(parts, scopeEncs{Scopes[i], encs})
			size += len(Scopes[i]) + 6
		}
	}
	if len(parts) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.Grow(size)
	for j, p := range parts {
		if j == 0 {
			b.WriteString(`{"`)
		} else {
			b.WriteString(`],"`)
		}
		b.WriteString(p.name)
		b.WriteString(`":[`)
		for k, enc := range p.encs {
			if k > 0 {
				b.WriteByte(',')
			}
			b.Write(enc)
		}
	}
	b.WriteString("]}")
	return b.String(), nil
}

// stateMember is an encoded object (the head's "state" member, a
// read_state value) as segments written one after another: a plane whose encoding is memoized is its memo's bytes (shared,
// never modified), so the head copies the large planes once, into the head
// text.
type stateMember [][]byte

func (s stateMember) len() int {
	n := 0
	for _, b := range s {
		n += len(b)
	}
	return n
}

// encodeSegments returns jsjson.Marshal(proj, opts) (opts compact) as
// segments: the root object's members are written here, each value
// encoded at depth 1 as Marshal would, a map value from opts.Memo when it
// knows it (the memo's bytes themselves, not a copy). A root key that is
// not a plain ASCII word (whose place and spelling this does not
// reproduce) falls back to one Marshal. It pays for objects of a few large
// members (a state's planes): each other member costs one Marshal call.
func encodeSegments(proj map[string]any, opts *jsjson.Options) (stateMember, error) {
	keys := make([]string, 0, len(proj))
	for k := range proj {
		if !plainKey(k) {
			b, err := jsjson.Marshal(proj, opts)
			return stateMember{b}, err
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make(stateMember, 0, 2*len(keys)+1)
	var sep []byte
	for i, k := range keys {
		c := byte(',')
		if i == 0 {
			c = '{'
		}
		sep = append(sep, c, '"')
		sep = append(sep, k...)
		sep = append(sep, '"', ':')
		v := proj[k]
		if m, ok := v.(map[string]any); ok && opts.Memo != nil {
			if enc, ok := opts.Memo.Get(m); ok {
				out = append(out, sep, enc)
				sep = nil
				continue
			}
		}
		b, err := jsjson.Marshal([]any{v}, opts) // v at depth 1, memoized as in the whole
		if err != nil {
			return nil, err
		}
		sep = append(sep, b[1:len(b)-1]...)
	}
	if len(keys) == 0 {
		sep = append(sep, '{')
	}
	sep = append(sep, '}')
	return append(out, sep), nil
}

// plainKey reports whether k is a word of ASCII letters, digits and _ not
// starting with a digit: written as "k" and ordered by bytes, as jsjson
// writes and orders such keys.
func plainKey(k string) bool {
	if k == "" || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// withoutHiddenRoots is a shallow copy of p without the lazy plane and x_*
// roots.
func withoutHiddenRoots(p map[string]any) map[string]any {
	out := make(map[string]any, len(p))
	for k, val := range p {
		if k != PlaneLazy && !IsExternalRoot(k) {
			out[k] = val
		}
	}
	return out
}
