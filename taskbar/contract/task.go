package contract

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Envelope delimiters (reference §5).
const (
	envelopeBegin = "\n\n--- BEGIN UNTRUSTED BROWSER CONTEXT ---\n"
	envelopeEnd   = "\n--- END UNTRUSTED BROWSER CONTEXT ---"
)

// Task is a normalized, validated POST /tasks request (seed 000 "Initial task
// request", reference §4). The package never changes a Task it returned, so
// one may be shared between goroutines that only read it.
type Task struct {
	// Prompt is the normalized instruction: NFC, controls stripped, CRLF as
	// LF, trimmed; non-empty and at most 4,000 UTF-8 bytes. Inner newlines and
	// tabs survive.
	Prompt string
	// Context is the normalized browser reference data.
	Context Context
}

// Envelope returns the exact prompt message sent to Pi (reference §5):
//
//	<Prompt>\n\n--- BEGIN UNTRUSTED BROWSER CONTEXT ---\n<canonical JSON>\n--- END UNTRUSTED BROWSER CONTEXT ---
//
// with no trailing newline. The instruction is raw text; the context is
// canonical JSON with '<' '>' '&' escaped. Each call returns a new slice.
func (t Task) Envelope() []byte {
	b := make([]byte, 0, len(t.Prompt)+len(envelopeBegin)+len(t.Context.canonical)+len(envelopeEnd))
	b = append(b, t.Prompt...)
	b = append(b, envelopeBegin...)
	b = append(b, t.Context.canonical...)
	return append(b, envelopeEnd...)
}

// MarshalJSON returns the task as a canonical task request
// ({"context":…,"prompt":…}); [ParseTask] accepts it back unchanged.
func (t Task) MarshalJSON() ([]byte, error) {
	b := append([]byte(`{"context":`), t.Context.json()...)
	b = append(b, `,"prompt":`...)
	b = appendString(b, t.Prompt, true)
	return append(b, '}'), nil
}

// UnmarshalJSON runs [ParseTask] on data, so a Task field in a wire struct
// (the broker's submit command) is validated and normalized on decode.
func (t *Task) UnmarshalJSON(data []byte) error {
	parsed, err := ParseTask(data)
	if err != nil {
		return err
	}
	*t = *parsed
	return nil
}

// Context is a normalized, validated browser context (seed 000 "Normalized
// browser context", reference §3). The zero value is not a valid context.
// A Context is immutable and safe for concurrent use.
type Context struct {
	tree      map[string]any // never mutated after construction
	canonical []byte         // safe canonical JSON of tree
}

// newContext encodes tree; sizeHint (the raw document's length) presizes the
// buffer without another walk of the tree.
func newContext(tree map[string]any, sizeHint int) Context {
	return Context{tree: tree, canonical: appendCanonical(make([]byte, 0, sizeHint+sizeHint/8), tree, true)}
}

// CanonicalJSON returns the context as the envelope writes it: sorted keys,
// compact, non-ASCII raw, '<' '>' '&' as \u003c \u003e \u0026.
func (c Context) CanonicalJSON() []byte { return slices.Clone(c.canonical) }

// MarshalJSON returns [Context.CanonicalJSON], or null for the zero value.
func (c Context) MarshalJSON() ([]byte, error) { return slices.Clone(c.json()), nil }

func (c Context) json() []byte {
	if c.canonical == nil {
		return []byte("null")
	}
	return c.canonical
}

// UnmarshalJSON runs [NormalizeContext] on data.
func (c *Context) UnmarshalJSON(data []byte) error {
	parsed, err := NormalizeContext(data)
	if err != nil {
		return err
	}
	*c = *parsed
	return nil
}

// FocusPoints returns the number of focus points: 0 is a whole-page task,
// 1–8 advisory focus points with whole-page surroundings.
func (c Context) FocusPoints() int {
	a, _ := c.tree["focus_points"].([]any)
	return len(a)
}

// Size returns the context's length as compact JSON without HTML escaping,
// the measure of its 96 KiB bound.
func (c Context) Size() int { return jsonSize(c.tree) }

// ParseTask runs the whole POST /tasks pipeline on a raw body with the
// embedded schemas: size cap, UTF-8, strict JSON, normalization, validation.
// See [Validator.ParseTask].
func ParseTask(body []byte) (*Task, error) { return DefaultValidator().ParseTask(body) }

// NormalizeContext normalizes and validates a browser context document with
// the embedded schemas. See [Validator.NormalizeContext].
func NormalizeContext(data []byte) (*Context, error) {
	return DefaultValidator().NormalizeContext(data)
}

// NewTask builds a task from a prompt and a browser context document with the
// embedded schemas. See [Validator.NewTask].
func NewTask(prompt string, context []byte) (*Task, error) {
	return DefaultValidator().NewTask(prompt, context)
}

// ParseTask runs the POST /tasks pipeline (reference §4) on a raw body.
//
// Errors are *Error:
//   - a body over [MaxRequestBytes] is oversized_payload (413);
//   - invalid UTF-8, invalid JSON, trailing data or a non-object is
//     malformed_json (400);
//   - everything else is invalid_task (422): duplicate member names at any
//     level, unknown or missing fields, a bound of the task-request or
//     browser-context schema (evaluated after normalization), nesting
//     deeper than any valid request reaches (derived from the schema's
//     x-maxDepth, checked while decoding, before any tree is built), a number that
//     is not an integer literal (contract_version 1.0), or repeated
//     truncation sections.
func (v *Validator) ParseTask(body []byte) (*Task, error) {
	doc, e := decodeDocument(body, v.taskDepth())
	if e != nil {
		return nil, e
	}
	t, e := v.parseTaskDoc(doc, len(body))
	if e != nil {
		return nil, e
	}
	return t, nil
}

// NewTask builds a task from a prompt and a browser context document, as if
// they had arrived together in one POST /tasks body (the context document is
// subject to [MaxRequestBytes] on its own).
func (v *Validator) NewTask(prompt string, context []byte) (*Task, error) {
	if !utf8.ValidString(prompt) {
		return nil, invalid("/prompt: not valid UTF-8", nil)
	}
	ctx, e := decodeDocument(context, v.contextDepth)
	if e != nil {
		return nil, e
	}
	t, e := v.parseTaskDoc(map[string]any{"prompt": prompt, "context": ctx}, len(context))
	if e != nil {
		return nil, e
	}
	return t, nil
}

// NormalizeContext normalizes a browser context document (reference §3) and
// validates it against the browser-context schema. Errors are *Error as for
// [Validator.ParseTask].
func (v *Validator) NormalizeContext(data []byte) (*Context, error) {
	doc, e := decodeDocument(data, v.contextDepth)
	if e != nil {
		return nil, e
	}
	normalizeContext(doc)
	integers, e := validate(v.context, v.fastContext, doc)
	if e != nil {
		return nil, e
	}
	if e := checkContextExtras(doc, "", integers); e != nil {
		return nil, e
	}
	c := newContext(doc, len(data))
	return &c, nil
}

// taskDepth bounds a task request's nesting: the context one level down.
func (v *Validator) taskDepth() int {
	if v.contextDepth == 0 {
		return 0
	}
	return v.contextDepth + 1
}

func (v *Validator) parseTaskDoc(doc map[string]any, sizeHint int) (*Task, *Error) {
	normalizeTask(doc)
	integers, e := validate(v.task, v.fastTask, doc)
	if e != nil {
		return nil, e
	}
	ctx := doc["context"].(map[string]any) // the schema guarantees both
	if e := checkContextExtras(ctx, "/context", integers); e != nil {
		return nil, e
	}
	return &Task{Prompt: doc["prompt"].(string), Context: newContext(ctx, sizeHint)}, nil
}

// checkContextExtras holds the two rules the adapters enforce beyond the
// schema: numbers are integer literals (reference §16.7: 1.0 is not the
// integer 1, and would otherwise reach the envelope as 1.0), and truncation
// sections are unique (reference §3). integers skips the number walk when
// validation already saw every number as an integer literal.
func checkContextExtras(ctx map[string]any, at string, integers bool) *Error {
	if !integers {
		if p, n, ok := firstNonInteger(ctx, at); ok {
			return invalid(p+": expected an integer literal, got "+string(n), nil)
		}
	}
	trunc, _ := ctx["truncation"].([]any)
	seen := make(map[string]bool, len(trunc))
	for i, t := range trunc {
		s, _ := t.(map[string]any)["section"].(string)
		if seen[s] {
			return invalid(at+"/truncation/"+strconv.Itoa(i)+": expected unique section", nil)
		}
		seen[s] = true
	}
	return nil
}

// firstNonInteger finds a number that is not an integer literal; the path
// is only built on the way out of a hit.
func firstNonInteger(v any, at string) (string, json.Number, bool) {
	var rev []string
	var find func(v any) (json.Number, bool)
	find = func(v any) (json.Number, bool) {
		switch x := v.(type) {
		case json.Number:
			return x, !isIntegerLiteral(x)
		case map[string]any:
			for k, e := range x {
				if n, ok := find(e); ok {
					rev = append(rev, pointerEscaper.Replace(k))
					return n, true
				}
			}
		case []any:
			for i, e := range x {
				if n, ok := find(e); ok {
					rev = append(rev, strconv.Itoa(i))
					return n, true
				}
			}
		}
		return "", false
	}
	n, ok := find(v)
	if !ok {
		return "", "", false
	}
	for i := len(rev) - 1; i >= 0; i-- {
		at += "/" + rev[i]
	}
	return at, n, true
}
