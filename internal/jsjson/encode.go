package jsjson

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Options configure [Marshal] and [Reencode]; nil means the zero value:
// compact output, keys in JS object order.
type Options struct {
	// SortKeys sorts every object's keys by UTF-16 code units, as JS's
	// default Array.prototype.sort on Object.keys does, at every level
	// (arrays keep their order). The output is then that of a stringifier
	// that writes the sorted keys itself (midcompact's stableStringify,
	// StateFlow's canonical files); array-index keys get no special place
	// unless IndexKeysFirst.
	SortKeys bool
	// IndexKeysFirst, with SortKeys, writes array-index keys ("0" …
	// "4294967294") first in ascending numeric order and sorts the others by
	// UTF-16 code units: what JSON.stringify prints when the sorted copy is
	// built as JS objects (for (k of Object.keys(v).sort()) out[k] = …),
	// since a JS object lists index keys first whatever the insertion order.
	// Without SortKeys it changes nothing (JS order applies already).
	IndexKeysFirst bool
	// Indent is JSON.stringify's third argument as a string: empty means
	// compact output; otherwise each nested line is indented by Indent
	// repeated per level and members are written as "key": value. Like JS,
	// only the first 10 UTF-16 code units are used (a character split by the
	// cut is dropped; invalid UTF-8 becomes U+FFFD). As in V8, a NUL ends
	// what is written per level, but a gap that starts with NUL still gives
	// newlines and ": ". A numeric space n is Indent strings.Repeat(" ", n).
	Indent string
	// LoneSurrogates writes a WTF-8 surrogate encoding in a Go string or
	// map key (ED A0..BF xx, as [Decode] keeps a lone \uD8xx escape) as
	// the \udxxx escape JSON.stringify writes for a lone surrogate, instead
	// of U+FFFD. Other invalid UTF-8 still becomes U+FFFD.
	LoneSurrogates bool
	// MaxDepth bounds the nesting of arrays and objects written (the
	// outermost is level 1); zero, negative or above the package's
	// [MaxDepth] means that MaxDepth. Deeper input is a *[DepthError].
	MaxDepth int
	// Memo, when set and Indent is "", memoizes the encodings of the
	// map[string]any values at depth 1 and 2 (the root object is depth 0):
	// a value Memo knows is written as the bytes it returns, and a value
	// encoded afresh is offered to Memo.Put. A compact encoding of a map
	// depends only on its content and these Options, so one Memo must be
	// used with one set of Options and only for maps never modified after
	// they were first encoded (Memo keys them by identity).
	Memo Memo
}

// Memo memoizes encoded maps by identity (see [Options.Memo]). Get and Put
// may be called concurrently by concurrent Marshal calls; Put's enc is
// the caller's to keep.
type Memo interface {
	Get(m map[string]any) (enc []byte, ok bool)
	Put(m map[string]any, enc []byte)
}

// Marshal returns v as JSON.stringify would write the equivalent JS value.
//
// v may be nil, bool, float64, the Go integer types (converted to float64,
// as JS numbers), json.Number (read as float64, as JSON.parse would), string,
// []any, map[string]any, json.RawMessage (re-encoded as [Reencode] does,
// keeping its member order unless SortKeys), or nested combinations of
// these. A map[string]any has no order of its own: its keys are written in
// the order a JS object would list them had they been inserted in UTF-16
// order (array-index keys first, numerically), or fully sorted with
// SortKeys. Any other value goes through encoding/json first and is then
// re-encoded, so struct fields keep their declared order and maps inside
// them encoding/json's byte order unless SortKeys.
//
// NaN and ±Inf are written as null. Errors: *[SyntaxError] for an invalid
// json.Number or json.RawMessage, *[DepthError] (or [ErrDepth] for a Go
// value nested beyond the package's MaxDepth, e.g. a map that holds
// itself), or an encoding/json error (wrapped). The cost is linear in the
// size of v (and of the output when Indent is set).
func Marshal(v any, opts *Options) ([]byte, error) {
	e := newEncoder(opts)
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// Reencode returns what JSON.stringify(JSON.parse(src), null, opts.Indent)
// gives in JS, keys sorted when opts.SortKeys. src must be one JSON text
// (surrounding JSON whitespace allowed); anything JSON.parse rejects is a
// *[SyntaxError]. Invalid UTF-8 in src is read as U+FFFD, as TextDecoder
// would before JSON.parse.
func Reencode(src []byte, opts *Options) ([]byte, error) {
	var p parser
	if opts != nil {
		p.limit = opts.MaxDepth
	}
	n, err := p.parseText(src)
	if err != nil {
		return nil, err
	}
	e := newEncoder(opts)
	e.buf = make([]byte, 0, len(src))
	e.arena = p.arena
	e.node(&n, 0)
	return e.buf, nil
}

type encoder struct {
	buf        []byte
	pretty     bool   // a gap was given: newlines and ": "
	indent     string // the gap as written per level (up to a NUL, as V8)
	sortKeys   bool
	indexFirst bool    // order array-index keys first when sorting
	wtf8       bool    // Options.LoneSurrogates
	arena      []node  // the children of the parse being written
	order      []int32 // scratch for sorting an object's members
	memo       Memo    // Options.Memo (nil when pretty)
	limit      int     // Options.MaxDepth, clamped
}

func newEncoder(opts *Options) *encoder {
	e := &encoder{indexFirst: true, limit: MaxDepth}
	if opts != nil {
		e.limit = depthLimit(opts.MaxDepth)
		e.sortKeys = opts.SortKeys
		e.indexFirst = !opts.SortKeys || opts.IndexKeysFirst
		e.wtf8 = opts.LoneSurrogates
		g := gap(opts.Indent)
		e.pretty = g != ""
		// V8 writes the gap only up to its first NUL, yet still indents.
		e.indent, _, _ = strings.Cut(g, "\x00")
		if !e.pretty {
			e.memo = opts.Memo
		}
	}
	return e
}

// gap cuts s to 10 UTF-16 code units, after replacing invalid UTF-8 with
// U+FFFD as for any Go string.
func gap(s string) string {
	s = wellFormed(s)
	n := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if n+w > 10 {
			return s[:i]
		}
		n += w
	}
	return s
}

func (e *encoder) newline(level int) {
	if !e.pretty {
		return
	}
	e.buf = append(e.buf, '\n')
	for range level {
		e.buf = append(e.buf, e.indent...)
	}
}

func (e *encoder) colon() {
	e.buf = append(e.buf, ':')
	if e.pretty {
		e.buf = append(e.buf, ' ')
	}
}

func (e *encoder) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.buf = append(e.buf, "null"...)
		return
	}
	e.buf = appendNumber(e.buf, f)
}

func (e *encoder) value(v any, level int) error {
	if level >= e.limit {
		switch v.(type) {
		case []any, map[string]any:
			if e.limit < MaxDepth {
				return &DepthError{Limit: e.limit, Offset: -1}
			}
			return ErrDepth
		}
	}
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		if x {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
	case float64:
		e.float(x)
	case int:
		e.float(float64(x))
	case int64:
		e.float(float64(x))
	case int32:
		e.float(float64(x))
	case uint64:
		e.float(float64(x))
	case uint32:
		e.float(float64(x))
	case uint:
		e.float(float64(x))
	case json.Number:
		p := parser{src: []byte(x)}
		if len(x) == 0 || (x[0] != '-' && (x[0] < '0' || x[0] > '9')) {
			return &SyntaxError{Msg: fmt.Sprintf("invalid json.Number %q", string(x))}
		}
		f, err := p.number()
		if err == nil && p.pos != len(p.src) {
			err = p.fail("unexpected data after number")
		}
		if err != nil {
			return fmt.Errorf("json.Number %q: %w", string(x), err)
		}
		e.float(f)
	case string:
		e.buf = appendString(e.buf, x, e.wtf8)
	case []any:
		if len(x) == 0 {
			e.buf = append(e.buf, '[', ']')
			return nil
		}
		e.buf = append(e.buf, '[')
		for i, el := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.newline(level + 1)
			if err := e.value(el, level+1); err != nil {
				return err
			}
		}
		e.newline(level)
		e.buf = append(e.buf, ']')
	case map[string]any:
		if e.memo == nil || level < 1 || level > 2 {
			return e.goMap(x, level)
		}
		if enc, ok := e.memo.Get(x); ok {
			e.buf = append(e.buf, enc...)
			return nil
		}
		start := len(e.buf)
		if err := e.goMap(x, level); err != nil {
			return err
		}
		e.memo.Put(x, append([]byte(nil), e.buf[start:]...))
	case json.RawMessage:
		if len(x) == 0 {
			e.buf = append(e.buf, "null"...) // as encoding/json
			return nil
		}
		return e.parsed(x, level)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("jsjson: marshal %T: %w", v, err)
		}
		if err := e.parsed(b, level); err != nil {
			return fmt.Errorf("jsjson: re-read %T: %w", v, err)
		}
	}
	return nil
}

// parsed parses JSON text src and writes it at level.
func (e *encoder) parsed(src []byte, level int) error {
	var p parser
	n, err := p.parseText(src)
	if err != nil {
		return err
	}
	if level+p.maxDepth > e.limit {
		return &DepthError{Limit: e.limit, Offset: -1}
	}
	saved := e.arena
	e.arena = p.arena
	e.node(&n, level)
	e.arena = saved
	return nil
}

// goMap writes a Go map. Keys are made well-formed first (as a JS string
// built from them would be); two keys that become equal keep the value of
// the one that sorts last by raw bytes, so the output is deterministic.
func (e *encoder) goMap(m map[string]any, level int) error {
	if len(m) == 0 {
		e.buf = append(e.buf, '{', '}')
		return nil
	}
	type member struct {
		key, raw string
		val      any
	}
	members := make([]member, 0, len(m))
	for k, v := range m {
		mb := member{key: wellFormed(k), raw: k, val: v}
		if e.wtf8 {
			mb.key = wellFormedWTF8(k)
		}
		members = append(members, mb)
	}
	slices.SortFunc(members, func(a, b member) int {
		if c := e.compareKeys(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.raw, b.raw)
	})
	e.buf = append(e.buf, '{')
	first := true
	for i, mb := range members {
		if i+1 < len(members) && members[i+1].key == mb.key {
			continue // a later duplicate wins
		}
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		e.newline(level + 1)
		e.buf = appendString(e.buf, mb.key, e.wtf8)
		e.colon()
		if err := e.value(mb.val, level+1); err != nil {
			return err
		}
	}
	e.newline(level)
	e.buf = append(e.buf, '}')
	return nil
}

// compareKeys orders keys by UTF-16 code units, array indices first (in
// numeric order) unless SortKeys without IndexKeysFirst.
func (e *encoder) compareKeys(a, b string) int {
	if e.indexFirst {
		if c := jsKeyOrder(a, b); c != 0 {
			return c
		}
	}
	return compareUTF16(a, b)
}

// jsKeyOrder is the order a JS object lists its keys in (ECMA-262
// OrdinaryOwnPropertyKeys) as far as it depends on the keys alone: array
// indices ([arrayIndex]) before other keys, and in ascending numeric order
// among themselves. It returns 0 for two keys that are not indices (their
// order is insertion order) and for equal keys.
func jsKeyOrder(a, b string) int {
	ia, aok := arrayIndex(a)
	ib, bok := arrayIndex(b)
	switch {
	case aok && bok:
		return cmp.Compare(ia, ib)
	case aok:
		return -1
	case bok:
		return 1
	}
	return 0
}

func (e *encoder) node(n *node, level int) {
	switch n.kind {
	case kindNull:
		e.buf = append(e.buf, "null"...)
	case kindFalse:
		e.buf = append(e.buf, "false"...)
	case kindTrue:
		e.buf = append(e.buf, "true"...)
	case kindNumber:
		e.float(n.num)
	case kindString:
		e.buf = appendString(e.buf, n.str, true)
	case kindArray:
		kids := e.arena[n.first : n.first+n.n]
		if len(kids) == 0 {
			e.buf = append(e.buf, '[', ']')
			return
		}
		e.buf = append(e.buf, '[')
		for i := range kids {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.newline(level + 1)
			e.node(&kids[i], level+1)
		}
		e.newline(level)
		e.buf = append(e.buf, ']')
	case kindObject:
		kids := e.arena[n.first : n.first+n.n]
		if len(kids) == 0 {
			e.buf = append(e.buf, '{', '}')
			return
		}
		e.buf = append(e.buf, '{')
		if e.sortKeys && !e.sorted(kids) {
			mark := len(e.order)
			for i := range kids {
				e.order = append(e.order, int32(i))
			}
			order := e.order[mark:]
			slices.SortFunc(order, func(a, b int32) int { return e.compareKeys(kids[a].key, kids[b].key) })
			for i, j := range order {
				e.member(&kids[j], i, level)
			}
			e.order = e.order[:mark]
		} else {
			for i := range kids {
				e.member(&kids[i], i, level)
			}
		}
		e.newline(level)
		e.buf = append(e.buf, '}')
	}
}

func (e *encoder) member(kid *node, i, level int) {
	if i > 0 {
		e.buf = append(e.buf, ',')
	}
	e.newline(level + 1)
	e.buf = appendString(e.buf, kid.key, true)
	e.colon()
	e.node(kid, level+1)
}

func (e *encoder) sorted(kids []node) bool {
	for i := 1; i < len(kids); i++ {
		if e.compareKeys(kids[i-1].key, kids[i].key) > 0 {
			return false
		}
	}
	return true
}
