package contract

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema $ids of the contract (reference §2). The files are found by their
// $id, not by name.
const (
	BrowserContextSchemaID  = "https://pi-browser-taskbar.dev/contract/schemas/browser-context.v1.schema.json"
	TaskRequestSchemaID     = "https://pi-browser-taskbar.dev/contract/schemas/task-request.v1.schema.json"
	HTTPScenarioSchemaID    = "https://pi-browser-taskbar.dev/contract/schemas/http-scenario.v1.schema.json"
	PromptGoldenSchemaID    = "https://pi-browser-taskbar.dev/contract/schemas/prompt-golden.v1.schema.json"
	RPCTranscriptSchemaID   = "https://pi-browser-taskbar.dev/contract/schemas/rpc-transcript.v1.schema.json"
	FixtureManifestSchemaID = "https://pi-browser-taskbar.dev/contract/schemas/fixture-manifest.v1.schema.json"
)

// embeddedSchemas are byte-identical copies of the upstream contract schemas
// (MIT, see schemas/LICENSE), so the binary validates without the contract
// directory next to it.
//
//go:embed schemas/*.schema.json
var embeddedSchemas embed.FS

// Schemas returns the embedded contract schema files (names *.schema.json at
// the root of the returned file system).
func Schemas() fs.FS {
	sub, err := fs.Sub(embeddedSchemas, "schemas")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return sub
}

// Validator holds the compiled contract schemas. It is immutable after
// [NewValidator] and safe for concurrent use.
type Validator struct {
	schemas map[string]*jsonschema.Schema // by $id
	context *jsonschema.Schema
	task    *jsonschema.Schema
	// contextDepth bounds the JSON nesting of a browser context document
	// (see contextDepthBound); a task request nests one level deeper.
	// Zero: no bound beyond the tokenizer's.
	contextDepth int
	// fastContext and fastTask are the fast path over the same compiled
	// schemas (fastpath.go); nil when a schema uses a keyword it lacks.
	fastContext, fastTask *fastSchema
}

// contextDepthBound is the deepest JSON nesting a valid browser context can
// reach, given the largest x-maxDepth of its schema (reference §3). A node
// tree root sits at most 4 levels down (context, focus_points, focus point,
// subtree); each of maxDepth levels below a root adds a children array and
// a node; the deepest node holds at most 3 more (source, references, a
// reference). The snapshot root sits higher (2), so 4 covers both.
// Anything deeper is invalid before any schema walk.
func contextDepthBound(maxDepth int) int { return 4 + 2*maxDepth + 3 }

// largestMaxDepth returns the largest integer x-maxDepth anywhere in a
// decoded schema document, or -1 when there is none.
func largestMaxDepth(v any) int {
	best := -1
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if n, ok := e.(json.Number); ok && k == "x-maxDepth" {
				if i, err := n.Int64(); err == nil && i >= 0 && i < 1<<16 && int(i) > best {
					best = int(i)
				}
			}
			best = max(best, largestMaxDepth(e))
		}
	case []any:
		for _, e := range x {
			best = max(best, largestMaxDepth(e))
		}
	}
	return best
}

// defaultValidator compiles the embedded schemas once, on first use.
var defaultValidator = sync.OnceValue(func() *Validator {
	v, err := NewValidator(Schemas())
	if err != nil {
		panic(fmt.Sprintf("contract: embedded schemas: %v", err)) // a build bug, covered by tests
	}
	return v
})

// DefaultValidator returns the validator of the embedded schemas.
func DefaultValidator() *Validator { return defaultValidator() }

// NewValidator compiles every *.schema.json file at the root of fsys
// (draft 2020-12 plus the x-* keywords), each registered under its $id.
// Every schema is meta-validated while compiling. The browser-context and
// task-request schemas must be present.
func NewValidator(fsys fs.FS) (*Validator, error) {
	vocab, err := newBoundsVocabulary()
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertVocabs()
	c.RegisterVocabulary(vocab)
	c.UseRegexpEngine(compileRegexp)
	c.UseLoader(noLoader{})

	names, err := fs.Glob(fsys, "*.schema.json")
	if err != nil {
		return nil, fmt.Errorf("list schemas: %w", err)
	}
	var ids []string
	contextMaxDepth := -1
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read schema: %w", err)
		}
		doc, err := decodeJSON(data)
		if err != nil {
			return nil, fmt.Errorf("parse schema %s: %w", name, err)
		}
		obj, _ := doc.(map[string]any)
		id, _ := obj["$id"].(string)
		if id == "" {
			return nil, fmt.Errorf("schema %s has no $id", name)
		}
		if id == BrowserContextSchemaID {
			contextMaxDepth = largestMaxDepth(doc)
		}
		if err := c.AddResource(id, doc); err != nil {
			return nil, fmt.Errorf("add schema %s: %w", name, err)
		}
		ids = append(ids, id)
	}
	v := &Validator{schemas: make(map[string]*jsonschema.Schema, len(ids))}
	if contextMaxDepth >= 0 {
		v.contextDepth = contextDepthBound(contextMaxDepth)
	}
	for _, id := range ids {
		sch, err := c.Compile(id)
		if err != nil {
			return nil, fmt.Errorf("compile schema %s: %w", path.Base(id), err)
		}
		v.schemas[id] = sch
	}
	v.context, v.task = v.schemas[BrowserContextSchemaID], v.schemas[TaskRequestSchemaID]
	if v.context == nil || v.task == nil {
		return nil, errors.New("schemas: browser-context and task-request schemas are required")
	}
	v.fastContext, v.fastTask = newFastSchema(v.context), newFastSchema(v.task)
	return v, nil
}

// SchemaIDs returns the $ids of the compiled schemas, sorted.
func (v *Validator) SchemaIDs() []string {
	ids := make([]string, 0, len(v.schemas))
	for id := range v.schemas {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// validate checks a decoded tree against sch; the error is invalid_task with
// a one-line reason listing every failed keyword. The fast path over the
// same schema (nil: none) settles valid documents; the library judges the
// rest. integers reports that the fast path saw every number and each was
// an integer literal.
func validate(sch *jsonschema.Schema, fast *fastSchema, doc any) (integers bool, e *Error) {
	if fast != nil {
		var w fastWalk
		if _, ok := w.valid(fast, doc, 0); ok {
			return !w.unwalked, nil
		}
	}
	if err := sch.Validate(doc); err != nil {
		return false, invalid(describe(err), err)
	}
	return false, nil
}

// compileRegexp uses Go's linear-time engine when it accepts the pattern and
// falls back to the ECMAScript dialect of regexp2 otherwise (the contract's
// project-path pattern uses lookahead). Both agree on the constructs the
// contract patterns use.
func compileRegexp(s string) (jsonschema.Regexp, error) {
	if re, err := regexp.Compile(s); err == nil {
		return re, nil
	}
	re, err := regexp2.Compile(s, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	return ecmaRegexp{re}, nil
}

type ecmaRegexp struct{ re *regexp2.Regexp }

func (r ecmaRegexp) String() string { return r.re.String() }

// MatchString fails closed: regexp2 reports an error only on a timeout.
func (r ecmaRegexp) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	return err == nil && ok
}

var printer = message.NewPrinter(language.English)

// describe flattens a validation error into "pointer: message" leaves,
// sorted and joined by "; ". The wording follows the upstream validator's
// fragments (reference §9) so manifest error_contains checks match.
func describe(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		for _, msg := range kindMessages(e.ErrorKind) {
			leaves = append(leaves, pointer(e.InstanceLocation)+": "+msg)
		}
	}
	walk(ve)
	slices.Sort(leaves)
	return strings.Join(slices.Compact(leaves), "; ")
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(pointerEscaper.Replace(t))
	}
	return b.String()
}

func kindMessages(k jsonschema.ErrorKind) []string {
	switch k := k.(type) {
	case *kind.Type:
		return []string{"expected type " + strings.Join(k.Want, " or ") + ", got " + k.Got}
	case *kind.Enum:
		return []string{"expected one of " + compactJSON(k.Want)}
	case *kind.Const:
		return []string{"expected constant " + compactJSON(k.Want)}
	case *kind.AdditionalProperties:
		msgs := make([]string, len(k.Properties))
		for i, p := range k.Properties {
			msgs[i] = "unknown property " + p
		}
		return msgs
	case *kind.Required:
		return []string{"missing required property " + strings.Join(k.Missing, ", ")}
	case *kind.UniqueItems:
		return []string{fmt.Sprintf("expected unique items (items %d and %d are equal)", k.Duplicates[0], k.Duplicates[1])}
	case *kind.Pattern:
		return []string{"does not match pattern " + k.Want}
	case *kind.MaxItems:
		return []string{fmt.Sprintf("expected at most %d items, got %d", k.Want, k.Got)}
	case *kind.MinItems:
		return []string{fmt.Sprintf("expected at least %d items, got %d", k.Want, k.Got)}
	case *kind.MaxLength:
		return []string{fmt.Sprintf("expected at most %d characters, got %d", k.Want, k.Got)}
	case *kind.MinLength:
		return []string{fmt.Sprintf("expected at least %d characters, got %d", k.Want, k.Got)}
	case *kind.Minimum:
		return []string{"expected a number >= " + k.Want.RatString()}
	case *kind.Maximum:
		return []string{"expected a number <= " + k.Want.RatString()}
	case *kind.FalseSchema:
		return []string{"not allowed"}
	}
	return []string{k.LocalizedString(printer)}
}

func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
