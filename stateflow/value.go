package stateflow

import (
	"errors"
	"fmt"
	"github.com/pikit-dev/pikit/stateflow/internal/memo"
	"math"
	"strings"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/stateflow/internal/sftext"
)

// A value is JSON as JavaScript's JSON.parse sees it: nil, bool, float64,
// string, []any or map[string]any. Numbers are float64 because upstream's
// values are JavaScript numbers (reference §6.3 "Numbers").

// ErrInvalidJSON reports JSON text that does not parse.
var ErrInvalidJSON = errors.New("stateflow: invalid JSON")

// ErrNonFinite reports JSON text that parses (JSON.parse reads it) but holds
// a number beyond the float64 range, which JS reads as ±Infinity and no
// stored value may hold. DecodeValue's error matches it and ErrInvalidJSON.
var ErrNonFinite = errors.New("stateflow: number out of range")

// MaxDepth bounds the nesting of every JSON document StateFlow reads or
// writes: tool arguments, `pikit stateflow` input, every store file. The
// outermost array or object is level 1, so {"cwd":{"working":{"k":{}}}}
// nests 4 levels. It is ours: V8's JSON.parse has no bound, but upstream
// (and Pi, which structuredClones tool arguments before validating them,
// and the conversation before each context event) cannot carry a value
// that Node 22's structuredClone refuses, about 1,600 levels of objects
// (JSON.stringify: about 4,170); 1000 leaves room for the wrappers around
// a value and for the caller's stack. Every walk over a value is linear in
// its size, whatever its depth.
const MaxDepth = sftext.MaxDepth

// ErrTooDeep reports JSON nested deeper than [MaxDepth] levels. Errors
// that carry it say what was too deep ("<what> is nested too deeply (more
// than 1000 levels)").
var ErrTooDeep = fmt.Errorf("stateflow: JSON nested too deeply (more than %d levels)", MaxDepth)

// DecodeValue parses one JSON text into a value as JSON.parse does
// (jsjson.Decode: a lone surrogate escape is kept, so Canonical writes it
// back as upstream would), in time linear in len(data). Trailing non-space
// data and invalid text are ErrInvalidJSON, non-finite numbers
// ErrInvalidJSON and ErrNonFinite; text
// nested deeper than [MaxDepth] is ErrTooDeep (refused after reading at
// most the text up to the container that exceeds the bound).
func DecodeValue(data []byte) (any, error) {
	v, err := jsjson.DecodeDepth(data, MaxDepth)
	if errors.Is(err, jsjson.ErrDepth) {
		return nil, fmt.Errorf("%w: %v", ErrTooDeep, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	if !finite(v) {
		return nil, fmt.Errorf("%w: %w", ErrInvalidJSON, ErrNonFinite)
	}
	return v, nil
}

// finite reports whether every number in v is finite.
func finite(v any) bool {
	switch x := v.(type) {
	case float64:
		return !math.IsInf(x, 0) && !math.IsNaN(x)
	case []any:
		for _, e := range x {
			if !finite(e) {
				return false
			}
		}
	case map[string]any:
		for _, e := range x {
			if !finite(e) {
				return false
			}
		}
	}
	return true
}

// Canonical returns the canonical JSON of v: JSON.stringify with every object's
// keys sorted by UTF-16 code units and no whitespace (reference §2.2), without
// the trailing newline. Lone surrogates (kept by DecodeValue) are written
// as \udxxx, as JSON.stringify writes them.
func Canonical(v any) ([]byte, error) {
	return jsjson.Marshal(v, canonicalJSON(0))
}

// canonicalJSON is [jsjson.JS] with keys sorted, nesting bounded by
// maxDepth (0: jsjson's own bound).
func canonicalJSON(maxDepth int) *jsjson.Options {
	o := jsjson.JS()
	o.SortKeys, o.MaxDepth = true, maxDepth
	return o
}

// CanonicalLine is [Canonical] plus one "\n", the form of every State
// Flow-owned file (reference §2.2). A value nested deeper than [MaxDepth]
// is refused (ErrTooDeep), so no file is written that a read would refuse.
func CanonicalLine(v any) ([]byte, error) {
	b, err := jsjson.Marshal(v, canonicalJSON(MaxDepth))
	if errors.Is(err, jsjson.ErrDepth) {
		return nil, fmt.Errorf("%w: %v", ErrTooDeep, err)
	}
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// mustCanonical is Canonical for values built by this package (never
// unencodable); a failure is a bug.
func mustCanonical(v any) string {
	b, err := Canonical(v)
	if err != nil {
		panic(fmt.Sprintf("stateflow: canonical encoding of an internal value: %v", err))
	}
	return string(b)
}

// Equal reports structural equality of two values (numbers by value, objects
// regardless of key order).
func Equal(a, b any) bool { return sameValue(a, b, false) }

// sameValue is Equal (bits false) or identical (bits true: numbers compare
// by their float64 bits, so -0 is not 0). A map compared with itself is
// the same under both.
func sameValue(a, b any, bits bool) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		if bits {
			return ok && math.Float64bits(x) == math.Float64bits(y)
		}
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i], bits) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		if memo.SameMap(x, y) {
			return true
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !sameValue(xv, yv, bits) {
				return false
			}
		}
		return true
	}
	return false
}

// Clone deep-copies a value.
func Clone(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Clone(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Clone(e)
		}
		return out
	}
	return v
}

// CloneObject deep-copies an object; nil gives an empty object.
func CloneObject(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return Clone(m).(map[string]any)
}

// kindOf names a value's JSON type as the keys projection does: "object",
// "array", "string", "number", "boolean" or "null".
func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

// ContainsNull reports whether v holds a null anywhere (objects and arrays).
func ContainsNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		for _, e := range x {
			if ContainsNull(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if ContainsNull(e) {
				return true
			}
		}
	case float64:
		return math.IsNaN(x) || math.IsInf(x, 0)
	}
	return false
}

// pointerEscaper escapes one RFC 6901 reference token.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// jsonPointer escapes path components as an RFC 6901 JSON Pointer.
func jsonPointer(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		pointerEscaper.WriteString(&b, p)
	}
	return b.String()
}
