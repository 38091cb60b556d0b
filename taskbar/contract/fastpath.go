package contract

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The fast path answers one question about a decoded document: is it
// certainly valid against a compiled schema? It reads the keywords and bounds
// from the library's compiled *jsonschema.Schema (the schema files stay the
// only source), walks the tree once without allocating, and measures every
// value's compact JSON size on the way, so the nested x-maxJsonUtf8Bytes
// bounds cost no extra walk. It never rejects: any failure, and any value it
// cannot decide exactly as the library would (a number that is not a plain
// integer literal, a non-string enum or uniqueness key), sends the document
// to the library, which gives the verdict and the error. A schema graph that
// uses a keyword the fast path does not know disables it altogether.

// fastSchema mirrors the keywords of one compiled schema the fast path knows.
type fastSchema struct {
	always, never bool // boolean schema true / false
	ref           *fastSchema
	types         uint8 // fastType bits; 0 is any type
	enum          []any // strings, booleans and nulls only
	constant      any
	hasConst      bool
	required      []string
	props         map[string]*fastSchema
	closed        bool        // additionalProperties: false
	additional    *fastSchema // additionalProperties as a schema
	minItems      int         // -1: absent
	maxItems      int
	unique        bool
	items         *fastSchema
	minLen        int // -1: absent
	maxLen        int
	pattern       jsonschema.Regexp
	minimum       *int64
	maximum       *int64
	ext           *boundsExt
}

const (
	fastNull uint8 = 1 << iota
	fastBool
	fastNumber
	fastInteger
	fastString
	fastArray
	fastObject
)

// newFastSchema converts a compiled schema graph, or returns nil when some
// schema reachable from sch uses a keyword the fast path does not handle.
func newFastSchema(sch *jsonschema.Schema) *fastSchema {
	seen := map[*jsonschema.Schema]*fastSchema{}
	f, ok := convertSchema(sch, seen)
	if !ok {
		return nil
	}
	return f
}

// unsupported lists the keywords the fast path does not handle, each with
// how to see it in a compiled schema; a schema graph using any of them
// disables the fast path.
var unsupported = []struct {
	keyword string
	used    func(s *jsonschema.Schema) bool
}{
	{"$schema before draft 2020-12", func(s *jsonschema.Schema) bool { return s.DraftVersion < 2020 }},
	{"$recursiveRef", func(s *jsonschema.Schema) bool { return s.RecursiveRef != nil }},
	{"$dynamicRef", func(s *jsonschema.Schema) bool { return s.DynamicRef != nil }},
	{"not", func(s *jsonschema.Schema) bool { return s.Not != nil }},
	{"allOf", func(s *jsonschema.Schema) bool { return s.AllOf != nil }},
	{"anyOf", func(s *jsonschema.Schema) bool { return s.AnyOf != nil }},
	{"oneOf", func(s *jsonschema.Schema) bool { return s.OneOf != nil }},
	{"if", func(s *jsonschema.Schema) bool { return s.If != nil }},
	{"then", func(s *jsonschema.Schema) bool { return s.Then != nil }},
	{"else", func(s *jsonschema.Schema) bool { return s.Else != nil }},
	{"format", func(s *jsonschema.Schema) bool { return s.Format != nil }},
	{"maxProperties", func(s *jsonschema.Schema) bool { return s.MaxProperties != nil }},
	{"minProperties", func(s *jsonschema.Schema) bool { return s.MinProperties != nil }},
	{"propertyNames", func(s *jsonschema.Schema) bool { return s.PropertyNames != nil }},
	{"patternProperties", func(s *jsonschema.Schema) bool { return len(s.PatternProperties) > 0 }},
	{"dependencies", func(s *jsonschema.Schema) bool { return len(s.Dependencies) > 0 }},
	{"dependentRequired", func(s *jsonschema.Schema) bool { return len(s.DependentRequired) > 0 }},
	{"dependentSchemas", func(s *jsonschema.Schema) bool { return len(s.DependentSchemas) > 0 }},
	{"unevaluatedProperties", func(s *jsonschema.Schema) bool { return s.UnevaluatedProperties != nil }},
	{"contains", func(s *jsonschema.Schema) bool { return s.Contains != nil }},
	{"minContains", func(s *jsonschema.Schema) bool { return s.MinContains != nil }},
	{"maxContains", func(s *jsonschema.Schema) bool { return s.MaxContains != nil }},
	{"items (before 2020-12)", func(s *jsonschema.Schema) bool { return s.Items != nil }},
	{"additionalItems", func(s *jsonschema.Schema) bool { return s.AdditionalItems != nil }},
	{"prefixItems", func(s *jsonschema.Schema) bool { return len(s.PrefixItems) > 0 }},
	{"unevaluatedItems", func(s *jsonschema.Schema) bool { return s.UnevaluatedItems != nil }},
	{"contentEncoding", func(s *jsonschema.Schema) bool { return s.ContentEncoding != nil }},
	{"contentMediaType", func(s *jsonschema.Schema) bool { return s.ContentMediaType != nil }},
	{"contentSchema", func(s *jsonschema.Schema) bool { return s.ContentSchema != nil }},
	{"exclusiveMaximum", func(s *jsonschema.Schema) bool { return s.ExclusiveMaximum != nil }},
	{"exclusiveMinimum", func(s *jsonschema.Schema) bool { return s.ExclusiveMinimum != nil }},
	{"multipleOf", func(s *jsonschema.Schema) bool { return s.MultipleOf != nil }},
}

// fastTypes are the fastType bits of the JSON Schema type names.
var fastTypes = map[string]uint8{
	"null": fastNull, "boolean": fastBool, "number": fastNumber, "integer": fastInteger,
	"string": fastString, "array": fastArray, "object": fastObject,
}

// convertSchema converts s and the schemas it reaches (seen holds those
// converted so far, cycles included); ok is false when one of them uses a
// keyword or value the fast path does not handle.
func convertSchema(s *jsonschema.Schema, seen map[*jsonschema.Schema]*fastSchema) (*fastSchema, bool) {
	if s == nil {
		return nil, true
	}
	if f, ok := seen[s]; ok {
		return f, true
	}
	f := &fastSchema{minItems: -1, maxItems: -1, minLen: -1, maxLen: -1}
	seen[s] = f
	if s.Bool != nil {
		f.always, f.never = *s.Bool, !*s.Bool
		return f, true
	}
	for _, k := range unsupported {
		if k.used(s) {
			return nil, false
		}
	}
	var ok bool
	if f.ref, ok = convertSchema(s.Ref, seen); !ok {
		return nil, false
	}
	if !f.convertValues(s) || !f.convertObject(s, seen) || !f.convertArray(s, seen) || !f.convertScalars(s) {
		return nil, false
	}
	for _, ext := range s.Extensions {
		b, isBounds := ext.(*boundsExt)
		if !isBounds || f.ext != nil {
			return nil, false
		}
		f.ext = b
	}
	return f, true
}

// convertValues converts type, enum and const.
func (f *fastSchema) convertValues(s *jsonschema.Schema) bool {
	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			bit, ok := fastTypes[t]
			if !ok {
				return false
			}
			f.types |= bit
		}
	}
	if s.Enum != nil {
		for _, v := range s.Enum.Values {
			if !isScalarKey(v) {
				return false
			}
		}
		f.enum = s.Enum.Values
		if f.enum == nil {
			f.enum = []any{}
		}
	}
	if s.Const != nil {
		if !isScalarKey(*s.Const) && !isIntegerValue(*s.Const) {
			return false
		}
		f.constant, f.hasConst = *s.Const, true
	}
	return true
}

// convertObject converts required, properties and additionalProperties.
func (f *fastSchema) convertObject(s *jsonschema.Schema, seen map[*jsonschema.Schema]*fastSchema) bool {
	var ok bool
	f.required = s.Required
	if len(s.Properties) > 0 {
		f.props = make(map[string]*fastSchema, len(s.Properties))
		for name, ps := range s.Properties {
			if f.props[name], ok = convertSchema(ps, seen); !ok {
				return false
			}
		}
	}
	switch a := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		f.closed = !a
	case *jsonschema.Schema:
		if f.additional, ok = convertSchema(a, seen); !ok {
			return false
		}
	default:
		return false
	}
	return true
}

// convertArray converts minItems, maxItems, uniqueItems and items.
func (f *fastSchema) convertArray(s *jsonschema.Schema, seen map[*jsonschema.Schema]*fastSchema) bool {
	if s.MinItems != nil {
		f.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		f.maxItems = *s.MaxItems
	}
	f.unique = s.UniqueItems
	var ok bool
	f.items, ok = convertSchema(s.Items2020, seen)
	return ok
}

// convertScalars converts minLength, maxLength, pattern, minimum and
// maximum.
func (f *fastSchema) convertScalars(s *jsonschema.Schema) bool {
	if s.MinLength != nil {
		f.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		f.maxLen = *s.MaxLength
	}
	switch s.Pattern.(type) {
	case nil, *regexp.Regexp, ecmaRegexp: // comparable: the walk caches the last match
		f.pattern = s.Pattern
	default:
		return false
	}
	var ok bool
	if f.minimum, ok = ratInt64(s.Minimum); !ok {
		return false
	}
	f.maximum, ok = ratInt64(s.Maximum)
	return ok
}

// isScalarKey reports the values the fast path compares itself: strings,
// booleans and null, whose JSON equality is Go equality.
func isScalarKey(v any) bool {
	switch v.(type) {
	case string, bool, nil:
		return true
	}
	return false
}

func isIntegerValue(v any) bool {
	n, ok := v.(json.Number)
	return ok && isIntegerLiteral(n)
}

func ratInt64(r *big.Rat) (*int64, bool) {
	if r == nil {
		return nil, true
	}
	if !r.IsInt() || !r.Num().IsInt64() {
		return nil, false
	}
	n := r.Num().Int64()
	return &n, true
}

// fastWalk holds the state of one fast validation.
type fastWalk struct {
	// unwalked is set when a container was sized without being walked
	// (a schema without keywords for it).
	unwalked bool
	// last pattern match: node tags repeat, so one entry saves most regexp
	// runs.
	lastPattern jsonschema.Regexp
	lastString  string
	lastMatch   bool
}

// fastRefLimit bounds $ref hops on one value (the library reports a cycle).
const fastRefLimit = 32

// valid reports whether v certainly satisfies f, and v's compact JSON size.
func (w *fastWalk) valid(f *fastSchema, v any, hops int) (size int, ok bool) {
	if f == nil || f.always {
		switch v.(type) {
		case map[string]any, []any:
			w.unwalked = true // numbers below are not checked
		}
		return jsonSize(v), true
	}
	if f.never || hops > fastRefLimit {
		return 0, false
	}
	size = -1
	if f.ref != nil {
		if size, ok = w.valid(f.ref, v, hops+1); !ok {
			return 0, false
		}
	}
	if f.types != 0 && !w.typeOK(f.types, v) {
		return 0, false
	}
	if f.enum != nil && !inScalars(f.enum, v) {
		return 0, false
	}
	if f.hasConst && !sameScalar(f.constant, v) {
		return 0, false
	}
	if size >= 0 && !f.kinds(v) {
		// Only the $ref target had keywords for v; it has been walked.
		if f.ext != nil && !f.ext.holds(v, size) {
			return 0, false
		}
		return size, true
	}
	var n int
	switch x := v.(type) {
	case map[string]any:
		n, ok = w.object(f, x)
	case []any:
		n, ok = w.array(f, x)
	case string:
		n, ok = w.str(f, x)
	case json.Number:
		n, ok = w.number(f, x)
	case bool, nil:
		n, ok = jsonSize(v), true
	default: // not a decoded JSON value
		return 0, false
	}
	if !ok {
		return 0, false
	}
	if size < 0 {
		size = n
	}
	if f.ext != nil && !f.ext.holds(v, size) {
		return 0, false
	}
	return size, true
}

// kinds reports whether f has keywords for v's kind of value besides $ref.
func (f *fastSchema) kinds(v any) bool {
	switch v.(type) {
	case map[string]any:
		return f.required != nil || f.props != nil || f.closed || f.additional != nil
	case []any:
		return f.minItems >= 0 || f.maxItems >= 0 || f.unique || f.items != nil
	case string:
		return f.minLen >= 0 || f.maxLen >= 0 || f.pattern != nil
	case json.Number:
		return true // integer literal check
	}
	return false
}

func (w *fastWalk) typeOK(types uint8, v any) bool {
	switch x := v.(type) {
	case nil:
		return types&fastNull != 0
	case bool:
		return types&fastBool != 0
	case string:
		return types&fastString != 0
	case []any:
		return types&fastArray != 0
	case map[string]any:
		return types&fastObject != 0
	case json.Number:
		if types&fastNumber != 0 {
			return true
		}
		return types&fastInteger != 0 && isIntegerLiteral(x) // 1.0 is the library's call
	}
	return false
}

func inScalars(set []any, v any) bool {
	if !isScalarKey(v) {
		return false
	}
	for _, e := range set {
		if e == v {
			return true
		}
	}
	return false
}

func sameScalar(want, v any) bool {
	if n, ok := want.(json.Number); ok {
		got, ok := v.(json.Number)
		return ok && got == n // same integer literal; 1.0 vs 1 is the library's call
	}
	return isScalarKey(v) && want == v
}

func (w *fastWalk) object(f *fastSchema, m map[string]any) (int, bool) {
	for _, r := range f.required {
		if _, ok := m[r]; !ok {
			return 0, false
		}
	}
	size := 2
	if len(m) > 1 {
		size += len(m) - 1
	}
	for k, x := range m {
		ps, known := f.props[k]
		if !known {
			if f.closed {
				return 0, false
			}
			ps = f.additional // nil: any value
		}
		n, ok := w.valid(ps, x, 0)
		if !ok {
			return 0, false
		}
		size += stringSize(k) + 1 + n
	}
	return size, true
}

func (w *fastWalk) array(f *fastSchema, a []any) (int, bool) {
	if f.minItems >= 0 && len(a) < f.minItems || f.maxItems >= 0 && len(a) > f.maxItems {
		return 0, false
	}
	if f.unique && len(a) > 1 && !uniqueScalars(a) {
		return 0, false
	}
	size := 2
	if len(a) > 1 {
		size += len(a) - 1
	}
	for _, x := range a {
		n, ok := w.valid(f.items, x, 0)
		if !ok {
			return 0, false
		}
		size += n
	}
	return size, true
}

// uniqueScalars reports an array of distinct strings, booleans and nulls;
// anything else is the library's call.
func uniqueScalars(a []any) bool {
	for i, x := range a {
		if !isScalarKey(x) {
			return false
		}
		for _, y := range a[:i] {
			if x == y {
				return false
			}
		}
	}
	return true
}

func (w *fastWalk) str(f *fastSchema, s string) (int, bool) {
	if f.minLen >= 0 || f.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if f.minLen >= 0 && n < f.minLen || f.maxLen >= 0 && n > f.maxLen {
			return 0, false
		}
	}
	if f.pattern != nil {
		if f.pattern != w.lastPattern || s != w.lastString {
			w.lastPattern, w.lastString, w.lastMatch = f.pattern, s, f.pattern.MatchString(s)
		}
		if !w.lastMatch {
			return 0, false
		}
	}
	return stringSize(s), true
}

func (w *fastWalk) number(f *fastSchema, n json.Number) (int, bool) {
	if !isIntegerLiteral(n) {
		return 0, false // the library's verdict; checkContextExtras reports it
	}
	if f.minimum != nil || f.maximum != nil {
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || f.minimum != nil && i < *f.minimum || f.maximum != nil && i > *f.maximum {
			return 0, false
		}
	}
	return len(n), true
}
