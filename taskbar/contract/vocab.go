package contract

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/message"
)

// The contract schemas carry most of their real bounds in custom x-* keywords
// (reference §3, §16.9). They are implemented here as one jsonschema
// vocabulary; the values (the bounds themselves) always come from the schema
// files.

// vocabURL names the vocabulary inside the compiler; it is never fetched.
const vocabURL = "urn:pikit:taskbar-contract:vocab:x-bounds"

// vocabMetaSchema is the syntax of the custom keywords; schemas that misuse
// them fail meta-validation when compiled.
const vocabMetaSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "properties": {
    "x-maxUtf8Bytes": {"type": "integer", "minimum": 0},
    "x-maxJsonUtf8Bytes": {"type": "integer", "minimum": 0},
    "x-maxNodes": {"type": "integer", "minimum": 0},
    "x-maxDepth": {"type": "integer", "minimum": 0},
    "x-uniqueBy": {"type": "string", "minLength": 1},
    "x-httpOrigin": {"type": "boolean"},
    "x-projectPath": {"type": "boolean"},
    "x-sourceHint": {"type": "boolean"}
  }
}`

func newBoundsVocabulary() (*jsonschema.Vocabulary, error) {
	doc, err := decodeJSON([]byte(vocabMetaSchema))
	if err != nil {
		return nil, fmt.Errorf("parse vocabulary meta-schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(vocabURL, doc); err != nil {
		return nil, fmt.Errorf("add vocabulary meta-schema: %w", err)
	}
	sch, err := c.Compile(vocabURL)
	if err != nil {
		return nil, fmt.Errorf("compile vocabulary meta-schema: %w", err)
	}
	return &jsonschema.Vocabulary{URL: vocabURL, Schema: sch, Compile: compileBounds}, nil
}

// boundsExt holds the custom keywords of one schema object; a negative
// number means the keyword is absent.
type boundsExt struct {
	maxUTF8Bytes, maxJSONBytes, maxNodes, maxDepth int
	uniqueBy                                       string
	httpOrigin, projectPath, sourceHint            bool
}

func compileBounds(_ *jsonschema.CompilerContext, obj map[string]any) (jsonschema.SchemaExt, error) {
	e := &boundsExt{maxUTF8Bytes: -1, maxJSONBytes: -1, maxNodes: -1, maxDepth: -1}
	found := false
	for kw, dst := range map[string]*int{
		"x-maxUtf8Bytes":     &e.maxUTF8Bytes,
		"x-maxJsonUtf8Bytes": &e.maxJSONBytes,
		"x-maxNodes":         &e.maxNodes,
		"x-maxDepth":         &e.maxDepth,
	} {
		v, ok := obj[kw]
		if !ok {
			continue
		}
		n, err := schemaInt(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kw, err)
		}
		*dst, found = n, true
	}
	if v, ok := obj["x-uniqueBy"].(string); ok {
		e.uniqueBy, found = v, true
	}
	for kw, dst := range map[string]*bool{
		"x-httpOrigin":  &e.httpOrigin,
		"x-projectPath": &e.projectPath,
		"x-sourceHint":  &e.sourceHint,
	} {
		if v, ok := obj[kw].(bool); ok && v {
			*dst, found = true, true
		}
	}
	if !found {
		return nil, nil
	}
	return e, nil
}

func schemaInt(v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("expected an integer, got %T", v)
	}
	i, err := strconv.Atoi(string(n))
	if err != nil || i < 0 {
		return 0, fmt.Errorf("expected a non-negative integer, got %s", n)
	}
	return i, nil
}

// boundError is the error kind of every custom keyword.
type boundError struct {
	keyword string
	msg     string
}

func (k *boundError) KeywordPath() []string                   { return []string{k.keyword} }
func (k *boundError) LocalizedString(*message.Printer) string { return k.msg }

func (e *boundsExt) Validate(ctx *jsonschema.ValidatorContext, v any) {
	if e.maxUTF8Bytes >= 0 {
		if s, ok := v.(string); ok && len(s) > e.maxUTF8Bytes {
			ctx.AddError(&boundError{"x-maxUtf8Bytes", fmt.Sprintf("exceeds %d UTF-8 bytes (got %d)", e.maxUTF8Bytes, len(s))})
		}
	}
	if e.maxJSONBytes >= 0 {
		if n := jsonSize(v); n > e.maxJSONBytes {
			ctx.AddError(&boundError{"x-maxJsonUtf8Bytes", fmt.Sprintf("JSON exceeds %d UTF-8 bytes (got %d)", e.maxJSONBytes, n)})
		}
	}
	if e.maxNodes >= 0 {
		if n := countNodes(v, e.maxNodes); n > e.maxNodes {
			ctx.AddError(&boundError{"x-maxNodes", fmt.Sprintf("tree exceeds %d nodes", e.maxNodes)})
		}
	}
	if e.maxDepth >= 0 {
		if d := treeDepth(v, e.maxDepth); d > e.maxDepth {
			ctx.AddError(&boundError{"x-maxDepth", fmt.Sprintf("tree exceeds depth %d", e.maxDepth)})
		}
	}
	if e.uniqueBy != "" {
		e.validateUniqueBy(ctx, v)
	}
	if e.httpOrigin {
		if s, ok := v.(string); ok {
			if problem := checkHTTPOrigin(s); problem != "" {
				ctx.AddError(&boundError{"x-httpOrigin", "invalid HTTP(S) origin: " + problem})
			}
		}
	}
	if e.projectPath {
		if s, ok := v.(string); ok {
			if problem := checkProjectPath(s); problem != "" {
				ctx.AddError(&boundError{"x-projectPath", "invalid project path: " + problem})
			}
		}
	}
	if e.sourceHint {
		if problem := checkSourceHint(v); problem != "" {
			ctx.AddError(&boundError{"x-sourceHint", problem})
		}
	}
}

func (e *boundsExt) validateUniqueBy(ctx *jsonschema.ValidatorContext, v any) {
	arr, ok := v.([]any)
	if !ok {
		return
	}
	var keys []any
	var at []int
	for i, item := range arr {
		if obj, ok := item.(map[string]any); ok {
			if key, ok := obj[e.uniqueBy]; ok {
				keys = append(keys, key)
				at = append(at, i)
			}
		}
	}
	i, j, err := ctx.Duplicates(keys)
	if err != nil {
		ctx.AddErr(err)
		return
	}
	if i >= 0 {
		ctx.AddError(&boundError{"x-uniqueBy", fmt.Sprintf("expected unique %s (items %d and %d)", e.uniqueBy, at[i], at[j])})
	}
}

// countNodes counts the objects of a node tree through "children", the root
// included (reference §3), stopping once the count passes limit.
func countNodes(v any, limit int) int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		obj, ok := v.(map[string]any)
		if !ok || n > limit {
			return
		}
		n++
		children, _ := obj["children"].([]any)
		for _, c := range children {
			walk(c)
		}
	}
	walk(v)
	return n
}

// treeDepth is the longest chain of "children" below the root (root = 0),
// stopping once it passes limit.
func treeDepth(v any, limit int) int {
	obj, ok := v.(map[string]any)
	if !ok {
		return 0
	}
	children, _ := obj["children"].([]any)
	deepest := 0
	for _, c := range children {
		if _, ok := c.(map[string]any); !ok {
			continue
		}
		if d := 1 + treeDepth(c, limit-1); d > deepest {
			deepest = d
			if deepest > limit {
				break
			}
		}
	}
	return deepest
}

// treeWithin reports whether the node tree v has at most maxNodes nodes
// and depth at most maxDepth (negative: no bound), as countNodes and
// treeDepth measure them, in one walk that stops at the first excess.
func treeWithin(v any, maxNodes, maxDepth int) bool {
	budget := maxNodes
	if budget < 0 {
		budget = -1 // unbounded
	}
	var walk func(v any, depth int) bool
	walk = func(v any, depth int) bool {
		obj, ok := v.(map[string]any)
		if !ok {
			return true
		}
		if maxDepth >= 0 && depth > maxDepth {
			return false
		}
		if budget >= 0 {
			if budget == 0 {
				return false
			}
			budget--
		}
		children, _ := obj["children"].([]any)
		for _, c := range children {
			if !walk(c, depth+1) {
				return false
			}
		}
		return true
	}
	return walk(v, 0)
}

var dnsLabel = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// checkHTTPOrigin is x-httpOrigin (reference §3): a real parse with scheme
// http/https, a host, no userinfo, path, query or fragment, a port in
// 1–65535, and a host that is an IPv6 literal (when it has ':'), IPv4 (when
// only digits and dots) or DNS labels. It returns "" when s is valid.
func checkHTTPOrigin(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "does not parse"
	case u.Scheme != "http" && u.Scheme != "https":
		return "scheme is not http or https"
	case u.Opaque != "" || u.User != nil:
		return "has userinfo"
	case u.Path != "" || u.RawPath != "":
		return "has a path"
	case u.RawQuery != "" || u.ForceQuery:
		return "has a query"
	case u.Fragment != "" || strings.Contains(s, "#"):
		return "has a fragment"
	case strings.HasSuffix(u.Host, ":"):
		return "has an empty port"
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "port is outside 1-65535"
		}
	}
	host := u.Hostname()
	switch {
	case host == "":
		return "has no host"
	case strings.Contains(host, ":"):
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" || !strings.HasPrefix(u.Host, "[") {
			return "host is not an IPv6 literal"
		}
	case strings.Trim(host, "0123456789.") == "":
		if a, err := netip.ParseAddr(host); err != nil || !a.Is4() {
			return "host is not an IPv4 address"
		}
	default:
		for _, label := range strings.Split(host, ".") {
			if !dnsLabel.MatchString(label) {
				return "host is not a DNS name"
			}
		}
	}
	return ""
}

// checkProjectPath is x-projectPath (reference §3): no empty, "." or ".."
// segment, and a first segment other than deps or _build.
func checkProjectPath(s string) string {
	for i, seg := range strings.Split(s, "/") {
		switch {
		case seg == "":
			return "empty segment"
		case seg == "." || seg == "..":
			return "dot segment"
		case i == 0 && (seg == "deps" || seg == "_build"):
			return "dependency-owned path"
		}
	}
	return ""
}

// checkSourceHint is x-sourceHint (reference §3): status available needs at
// least one reference (maxItems caps it), every other status none.
func checkSourceHint(v any) string {
	obj, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	status, ok1 := obj["status"].(string)
	refs, ok2 := obj["references"].([]any)
	if !ok1 || !ok2 {
		return ""
	}
	if status == "available" && len(refs) == 0 {
		return "source hint status available expects 1-2 references, got 0"
	}
	if status != "available" && len(refs) > 0 {
		return fmt.Sprintf("source hint status %s expects no references, got %d", strconv.Quote(status), len(refs))
	}
	return ""
}

// noLoader refuses every URL, so schema compilation never reaches the
// network or the file system: all schemas are added as resources first.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema %s is not in the contract directory", url)
}

// holds reports whether v certainly satisfies every keyword of e, given v's
// compact JSON size; false also means "ask the library" (a uniqueness key
// that is not a string, boolean or null). It is Validate without messages.
func (e *boundsExt) holds(v any, size int) bool {
	if e.maxUTF8Bytes >= 0 {
		if s, ok := v.(string); ok && len(s) > e.maxUTF8Bytes {
			return false
		}
	}
	if e.maxJSONBytes >= 0 && size > e.maxJSONBytes {
		return false
	}
	if (e.maxNodes >= 0 || e.maxDepth >= 0) && !treeWithin(v, e.maxNodes, e.maxDepth) {
		return false
	}
	if e.uniqueBy != "" && !uniqueByScalars(v, e.uniqueBy) {
		return false
	}
	if e.httpOrigin {
		if s, ok := v.(string); ok && checkHTTPOrigin(s) != "" {
			return false
		}
	}
	if e.projectPath {
		if s, ok := v.(string); ok && checkProjectPath(s) != "" {
			return false
		}
	}
	if e.sourceHint && checkSourceHint(v) != "" {
		return false
	}
	return true
}

// uniqueByScalars is x-uniqueBy for keys that are strings, booleans or null
// (Go equality is JSON equality for them); false for anything else.
func uniqueByScalars(v any, by string) bool {
	arr, ok := v.([]any)
	if !ok {
		return true
	}
	if len(arr) > 64 {
		return false // quadratic below; leave long arrays to the library
	}
	var buf [8]any
	keys := buf[:0]
	for _, item := range arr {
		obj, ok := item.(map[string]any)
		if !ok {
			continue
		}
		key, ok := obj[by]
		if !ok {
			continue
		}
		if !isScalarKey(key) {
			return false
		}
		for _, k := range keys {
			if k == key {
				return false
			}
		}
		keys = append(keys, key)
	}
	return true
}
