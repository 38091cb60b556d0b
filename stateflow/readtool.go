package stateflow

import (
	"errors"
	"fmt"
	"github.com/pikit-dev/pikit/stateflow/internal/memo"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/stateflow/internal/sftext"
)

// ReadArgs is a decoded read_state argument (reference §1.8).
type ReadArgs struct {
	Paths      []string
	Batch      bool   // paths was given (positional array results)
	Projection string // "value", "keys" or "patch"
}

// DecodeReadArgs decodes and validates a read_state argument. Errors are
// *ToolError; the upstream texts are "read_state requires path or paths" and
// "read_state accepts path or paths, not both"; text nested deeper than
// [MaxDepth] is "read_state argument is nested too deeply (more than 1000
// levels)" (ours), with Cause ErrTooDeep.
func DecodeReadArgs(raw []byte) (*ReadArgs, error) {
	v, err := DecodeValue(raw)
	if errors.Is(err, ErrTooDeep) {
		return nil, &ToolError{Msg: sftext.TooDeepMsg("read_state argument"), Cause: err}
	}
	obj, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, toolErr("read_state requires path or paths")
	}
	for _, k := range sortedKeys(obj) {
		if k != "path" && k != "paths" && k != "projection" {
			return nil, toolErr("read_state does not accept field %s", k)
		}
	}
	a := &ReadArgs{Projection: "value"}
	p, hasPath := obj["path"]
	ps, hasPaths := obj["paths"]
	switch {
	case hasPath && hasPaths:
		return nil, toolErr("read_state accepts path or paths, not both")
	case hasPath:
		s, ok := p.(string)
		if !ok {
			return nil, toolErr("read_state path must be a string")
		}
		a.Paths = []string{s}
	case hasPaths:
		arr, ok := ps.([]any)
		if !ok || len(arr) == 0 {
			return nil, toolErr("read_state paths must be a non-empty array of strings")
		}
		for _, e := range arr {
			s, ok := e.(string)
			if !ok {
				return nil, toolErr("read_state paths must be a non-empty array of strings")
			}
			a.Paths = append(a.Paths, s)
		}
		a.Batch = true
	default:
		return nil, toolErr("read_state requires path or paths")
	}
	if pr, ok := obj["projection"]; ok {
		s, _ := pr.(string)
		if s != "value" && s != "keys" && s != "patch" {
			return nil, toolErr("read_state projection must be one of: value, keys, patch")
		}
		a.Projection = s
	}
	return a, nil
}

// Reader answers read_state over one temporal view. Reads never publish or
// advance history.
type Reader struct {
	Roots *Roots
	View  *View
	Limit int // historyLimit, 0..100
}

// Read returns the read_state result text for args: {"value": …},
// {"meta":…, "keys":…} or {"patch": …}, batch results as positional arrays
// under the same field; a single missing value path with referencing owners
// gives the dangling-reference sentinel. Errors are *ToolError or
// *TemporalError (all-or-error for batches).
//
// A result is a function of the view, the roots, the limit and args, so its
// text is memoized in the view's read cache: a repeated read of an unchanged
// snapshot is a lookup. Errors are not memoized.
func (r *Reader) Read(args *ReadArgs) (string, error) {
	c := r.View.readCache()
	key := memo.ResultKey{Roots: rootsKey(r.Roots), Limit: r.Limit, Args: args.cacheKey()}
	if text, ok := c.Result(key); ok {
		return text, nil
	}
	text, err := r.read(args)
	if err == nil {
		c.PutResult(key, text)
	}
	return text, err
}

// cacheKey renders args unambiguously: projection, batch flag, then each
// path length-prefixed.
func (a *ReadArgs) cacheKey() string {
	var b strings.Builder
	b.WriteString(a.Projection)
	if a.Batch {
		b.WriteString("|batch")
	}
	for _, p := range a.Paths {
		fmt.Fprintf(&b, "|%d:%s", len(p), p)
	}
	return b.String()
}

func (r *Reader) read(args *ReadArgs) (string, error) {
	var results []any
	for _, text := range args.Paths {
		p, err := parseReadPath(r.Roots, text, r.Limit)
		if err != nil {
			return "", err
		}
		res, err := r.one(p, args.Projection)
		if err != nil {
			var nf *PathNotFoundError
			if !args.Batch && args.Projection == "value" && asNotFound(err, &nf) {
				if owners := r.danglingOwners(text); len(owners) > 0 {
					return encodeResult(danglingResult{Hint: []danglingHint{{Type: "dangling-reference", Message: msgDangling, Paths: owners}}})
				}
			}
			return "", err
		}
		results = append(results, res)
	}
	if !args.Batch {
		return r.encodeSingle(results[0])
	}
	field := map[string]string{"value": "value", "patch": "patch", "keys": "keys"}[args.Projection]
	if args.Projection == "keys" {
		return encodeResult(map[string]any{field: results})
	}
	vals := make([]any, len(results))
	for i, x := range results {
		vals[i] = x.(map[string]any)[field]
	}
	return encodeResult(map[string]any{field: vals})
}

// encodeSingle encodes one result, {"value"|"patch": x} or keys, with the
// read cache's memo. A {name: x} result is written as {"name":…} around x
// encoded as the root, so the memo sees x's members (a state's planes,
// whose maps outlive the view) at depth 1 and never x itself, which is
// made afresh per view and would only churn the memo.
func (r *Reader) encodeSingle(res any) (string, error) {
	opts := withMemo(&r.View.readCache().Memos().Read)
	if m, ok := res.(map[string]any); ok && len(m) == 1 {
		for name, x := range m {
			v, err := encodeValue(x, opts)
			if err != nil {
				return "", err
			}
			o := jsjson.NewObject(make([]byte, 0, len(name)+v.Len()+8))
			o.Raw(name, v...)
			return o.Text()
		}
	}
	b, err := jsjson.Marshal(res, opts)
	return string(b), err
}

// maxSegmentedKeys bounds the objects encodeValue writes as segments: a
// state or scope has a few planes; a larger object (a plane read alone) is
// one Marshal.
const maxSegmentedKeys = 16

// encodeValue is jsjson.Marshal(x, opts) as segments: an object of at most
// maxSegmentedKeys members through encodeSegments, so its memoized planes
// are copied once, into the result text.
func encodeValue(x any, opts *jsjson.Options) (memo.Segments, error) {
	if m, ok := x.(map[string]any); ok && len(m) <= maxSegmentedKeys {
		return memo.EncodeSegments(m, opts)
	}
	b, err := jsjson.Marshal(x, opts)
	return memo.Segments{b}, err
}

func encodeResult(v any) (string, error) {
	b, err := jsjson.Marshal(v, jsjson.JS())
	return string(b), err
}

func (r *Reader) one(p *readPath, projection string) (any, error) {
	if p.Patches {
		rec, err := r.View.RecordBack(p.Root, p.Offset)
		if err != nil {
			return nil, err
		}
		return map[string]any{"patch": rec.Patch}, nil
	}
	if projection == "patch" {
		var patch map[string]any
		var err error
		if p.Root == "effective" {
			patch, err = r.View.EffectivePatchAt(p.Offset)
		} else {
			patch, err = r.View.ScopePatchAt(p.Root, p.Offset)
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{"patch": intersect(patch, p.Selectors)}, nil
	}
	var state map[string]any
	var err error
	if p.Root == "effective" {
		state, err = r.View.EffectiveAt(p.Offset)
	} else {
		state, err = r.View.ScopeAt(p.Root, p.Offset)
	}
	if err != nil {
		return nil, err
	}
	sel, err := r.selectValue(p, rootProjection(state, p.StartsAtLazy()))
	if err != nil {
		return nil, err
	}
	if m, ok := sel.(map[string]any); ok {
		sel = prunedRead(m, p, &r.View.readCache().Memos().Clean)
	}
	if projection == "keys" {
		return keysOf(sel), nil
	}
	return map[string]any{"value": sel}, nil
}

// ErrPathNotFound matches (errors.Is) every [*PathNotFoundError].
var ErrPathNotFound = errors.New("State Flow read path does not exist")

// PathNotFoundError is a read_state value path that selects nothing
// (reference §1.8): "State Flow read path does not exist: <path>", with
// Path the path as the caller wrote it.
type PathNotFoundError struct{ Path string }

func (e *PathNotFoundError) Error() string { return ErrPathNotFound.Error() + ": " + e.Path }

// Is makes errors.Is(err, ErrPathNotFound) true.
func (e *PathNotFoundError) Is(target error) bool { return target == ErrPathNotFound }

func asNotFound(err error, nf **PathNotFoundError) bool { return errors.As(err, nf) }

func (r *Reader) selectValue(p *readPath, state map[string]any) (any, error) {
	var cur any = state
	for i, s := range p.Selectors {
		switch s.Kind {
		case selKey:
			o, ok := cur.(map[string]any)
			v, has := o[s.Key]
			if !ok || !has {
				if i == 0 && ok && r.isDocumentedRoot(s.Key) {
					if len(p.Selectors) == 1 {
						return nil, nil // absent documented top-level field reads null
					}
				}
				return nil, &PathNotFoundError{Path: p.Text}
			}
			cur = v
		case selIndex:
			arr, ok := cur.([]any)
			if !ok {
				return nil, &PathNotFoundError{Path: p.Text}
			}
			if s.Index >= len(arr) {
				return nil, toolErr("Index %d is outside %s with length %d", s.Index, p.prefixText(i), len(arr))
			}
			cur = arr[s.Index]
		case selRange:
			arr, ok := cur.([]any)
			if !ok {
				return nil, &PathNotFoundError{Path: p.Text}
			}
			if s.End > len(arr) {
				return nil, toolErr("Range [%d:%d] is outside %s with length %d", s.Index, s.End, p.prefixText(i), len(arr))
			}
			cur = append([]any{}, arr[s.Index:s.End]...)
		}
	}
	return cur, nil
}

func (r *Reader) isDocumentedRoot(name string) bool {
	_, ok := r.Roots.Lookup(name)
	return ok
}

// keysResult is the keys projection of one value, in upstream member order.
type keysResult struct {
	Meta keysMeta `json:"meta"`
	Keys any      `json:"keys"`
}

type keysMeta struct {
	Type   string `json:"type"`
	Size   *int   `json:"size,omitempty"`
	Length *int   `json:"length,omitempty"`
}

// keysOf is the keys projection of one value; a string's length counts
// UTF-16 code units, as JavaScript's.
func keysOf(v any) keysResult {
	switch x := v.(type) {
	case map[string]any:
		keys := map[string]any{}
		for k, e := range x {
			keys[k] = kindOf(e)
		}
		n := len(x)
		return keysResult{Meta: keysMeta{Type: "object", Size: &n}, Keys: keys}
	case []any:
		n := len(x)
		return keysResult{Meta: keysMeta{Type: "array", Length: &n}, Keys: []any{}}
	case string:
		n := len(utf16.Encode([]rune(x)))
		return keysResult{Meta: keysMeta{Type: "string", Length: &n}, Keys: []any{}}
	}
	return keysResult{Meta: keysMeta{Type: kindOf(v)}, Keys: []any{}}
}

// intersect narrows a semantic patch to a path: the sub-patch under the
// selected keys, a replaced or deleted ancestor's value (null for a
// deletion), or {} when the path is untouched.
func intersect(patch map[string]any, sels []selector) any {
	var cur any = patch
	for _, s := range sels {
		switch x := cur.(type) {
		case map[string]any:
			if s.Kind != selKey {
				return map[string]any{}
			}
			v, ok := x[s.Key]
			if !ok {
				return map[string]any{}
			}
			cur = v
		case []any:
			if s.Kind == selIndex && s.Index < len(x) {
				cur = x[s.Index]
				continue
			}
			if s.Kind == selRange && s.End <= len(x) {
				cur = append([]any{}, x[s.Index:s.End]...)
				continue
			}
			return cur
		default:
			return cur
		}
	}
	return cur
}

// msgDangling is the dangling-reference hint message (reference §1.8).
const msgDangling = "The requested value is unavailable in the selected state. These current values reference that path, not a verified new location. Use this evidence if relevant to the task."

// danglingResult is the sentinel result, in upstream member order.
type danglingResult struct {
	Value any            `json:"value"`
	Hint  []danglingHint `json:"hint"`
}

type danglingHint struct {
	Type    string   `json:"type"`
	Message string   `json:"message"`
	Paths   []string `json:"paths"`
}

// danglingOwners scans the current patchable planes of every scope (at most
// 10,000 nodes) for structured {"$ref": path} and textual "$path" mentions;
// at most 3 owner paths, structured first. The location being visited is
// one buffer, turned into a string only for an owner found, so the scan
// costs what it visits whatever the nesting.
func (r *Reader) danglingOwners(path string) []string {
	const most = 3
	var structured, textual []string
	budget := 10000
	var at []byte
	var walk func(v any)
	walk = func(v any) {
		if budget <= 0 {
			return
		}
		budget--
		mark := len(at)
		switch x := v.(type) {
		case map[string]any:
			if s, ok := x["$ref"].(string); ok && s == path && len(structured) < most {
				structured = append(structured, string(at))
			}
			for _, k := range sortedKeys(x) {
				at = append(append(at, '.'), k...)
				walk(x[k])
				at = at[:mark]
			}
		case []any:
			for i, e := range x {
				at = append(strconv.AppendInt(append(at, '['), int64(i), 10), ']')
				walk(e)
				at = at[:mark]
			}
		case string:
			if len(textual) < most && containsMention(x, path) {
				textual = append(textual, string(at))
			}
		}
	}
	for _, scope := range Scopes {
		st, err := r.View.ScopeAt(scope, 0)
		if err != nil {
			continue
		}
		for _, plane := range r.Roots.PatchKeys() {
			if v, ok := st[plane]; ok {
				at = append(append(append(at[:0], scope...), '.'), plane...)
				walk(v)
			}
		}
	}
	out := append(structured, textual...)
	if len(out) > most {
		out = out[:most]
	}
	return out
}

// containsMention reports a textual "$path" mention not continued by a key
// character.
func containsMention(s, path string) bool {
	needle := "$" + path
	for i := 0; ; {
		j := strings.Index(s[i:], needle)
		if j < 0 {
			return false
		}
		end := i + j + len(needle)
		if end == len(s) || identEnd(s[end:], 0) == 0 && s[end] != '-' && (s[end] < '0' || s[end] > '9') {
			return true
		}
		i += j + 1
	}
}

// rootProjection applies the root-level rules of [readProjection] (lazy
// dropped unless the path starts there, empty response and empty roots
// dropped) without copying the planes; the selected value is pruned after
// selection, so a read copies only what it returns. Stored states hold no
// empty objects (every write prunes), so selecting before pruning finds the
// same paths.
func rootProjection(state map[string]any, keepLazy bool) map[string]any {
	out := make(map[string]any, len(state))
	for k, v := range state {
		if k == PlaneLazy && !keepLazy {
			continue
		}
		if s, isStr := v.(string); isStr && s == "" && k == PlaneResponse {
			continue
		}
		if m, isObj := v.(map[string]any); isObj && !IsExternalRoot(k) && prunesEmpty(m) {
			continue
		}
		out[k] = v
	}
	return out
}

// prunesEmpty reports whether Prune would drop m entirely, without copying.
func prunesEmpty(m map[string]any) bool {
	for _, v := range m {
		o, ok := v.(map[string]any)
		if !ok || !prunesEmpty(o) {
			return false
		}
	}
	return true
}
