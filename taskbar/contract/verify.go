package contract

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/pikit-dev/pikit/internal/modroot"
)

// Check is the outcome of one conformance check.
type Check struct {
	Name   string // "schema <file>", "manifest", "manifest/<id>", "golden/<id>", "registry"
	OK     bool
	Detail string // why it failed, or a short note
}

// Report is the outcome of [Verify]. A Report is a plain value.
type Report struct {
	Dir    string
	Checks []Check
}

// OK reports whether every check passed (and there was at least one).
func (r *Report) OK() bool {
	if len(r.Checks) == 0 {
		return false
	}
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// Failed returns the failed checks.
func (r *Report) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

func (r *Report) add(name string, err error, note string) {
	if err != nil {
		r.Checks = append(r.Checks, Check{Name: name, Detail: err.Error()})
		return
	}
	r.Checks = append(r.Checks, Check{Name: name, OK: true, Detail: note})
}

// manifest is fixtures/manifest.json (reference §9), read after it passed
// its schema.
type manifest struct {
	Fixtures []manifestEntry
}

type manifestEntry struct {
	ID            string
	Schema        string
	Path          string
	ExpectedValid bool
	ErrorContains string
}

// Verify checks a contract directory (layout of reference §2: schemas/,
// fixtures/manifest.json) with this package's normalization, validation and
// envelope code, reading the directory unchanged:
//   - every schema compiles and passes meta-validation (draft 2020-12 plus
//     the x-* keywords);
//   - the manifest passes its schema, ids are unique, paths stay under
//     fixtures/, at least one entry expects rejection and each such entry
//     has error_contains, and every fixture file is registered;
//   - every entry: browser-context fixtures through [Validator.NormalizeContext],
//     task requests through [Validator.ParseTask], other formats against
//     their schema. Valid entries must be accepted (contexts and tasks
//     unchanged by normalization); rejecting entries must fail with
//     invalid_task and a reason containing error_contains;
//   - every prompt golden is rebuilt byte for byte;
//   - fixtures named by scenarios and goldens exist and are registered.
//
// The error is non-nil only when the directory or its manifest cannot be
// read at all; failed checks are in the Report.
func Verify(dir string) (*Report, error) {
	r := &Report{Dir: dir}
	root := os.DirFS(dir)
	schemas, err := fs.Sub(root, "schemas")
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	if _, err := fs.Stat(schemas, "."); err != nil {
		return nil, fmt.Errorf("verify: contract directory: %w", err)
	}
	v, err := NewValidator(schemas)
	if err != nil {
		r.add("schemas", err, "")
		return r, nil
	}
	for _, id := range v.SchemaIDs() {
		r.add("schema "+path.Base(id), nil, "compiled and meta-validated")
	}

	manifestData, err := fs.ReadFile(root, "fixtures/manifest.json")
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	m, err := v.parseManifest(manifestData)
	r.add("manifest", err, "")
	if err != nil {
		return r, nil
	}
	r.add("registry", checkRegistry(root, m), fmt.Sprintf("%d entries", len(m.Fixtures)))
	for _, e := range m.Fixtures {
		r.add("manifest/"+e.ID, v.checkEntry(root, e), "")
	}
	registered := make(map[string]bool, len(m.Fixtures))
	for _, e := range m.Fixtures {
		registered[e.Path] = true
	}
	for _, e := range m.Fixtures {
		switch {
		case e.Schema == PromptGoldenSchemaID && e.ExpectedValid:
			r.add("golden/"+e.ID, v.checkGolden(root, e, registered), "envelope byte-identical")
		case e.Schema == HTTPScenarioSchemaID && e.ExpectedValid:
			r.add("scenario/"+e.ID, checkScenarioFixture(root, e, registered), "")
		}
	}
	return r, nil
}

func (v *Validator) parseManifest(data []byte) (*manifest, error) {
	doc, err := v.validateDocument(FixtureManifestSchemaID, data)
	if err != nil {
		return nil, err
	}
	m := &manifest{}
	seen := map[string]bool{}
	rejecting := 0
	for _, f := range doc["fixtures"].([]any) {
		o := f.(map[string]any)
		e := manifestEntry{
			ID:            o["id"].(string),
			Schema:        o["schema"].(string),
			Path:          o["path"].(string),
			ExpectedValid: o["expected_valid"].(bool),
		}
		e.ErrorContains, _ = o["error_contains"].(string)
		if seen[e.ID] {
			return nil, fmt.Errorf("duplicate fixture id %q", e.ID)
		}
		seen[e.ID] = true
		if path.Clean(e.Path) != e.Path || !fs.ValidPath(e.Path) {
			return nil, fmt.Errorf("fixture %s: path %q is not a clean relative path", e.ID, e.Path)
		}
		if !e.ExpectedValid {
			rejecting++
			if e.ErrorContains == "" {
				return nil, fmt.Errorf("fixture %s expects rejection without error_contains", e.ID)
			}
		}
		m.Fixtures = append(m.Fixtures, e)
	}
	if rejecting == 0 {
		return nil, errors.New("manifest has no rejecting entry")
	}
	return m, nil
}

// checkRegistry makes the manifest the only registry: every JSON file under
// fixtures/ (but the manifest) is registered and every entry's file exists.
func checkRegistry(root fs.FS, m *manifest) error {
	registered := map[string]bool{}
	for _, e := range m.Fixtures {
		registered[e.Path] = true
		if _, err := fs.Stat(root, e.Path); err != nil {
			return fmt.Errorf("fixture %s: %w", e.ID, err)
		}
	}
	var unregistered []string
	err := fs.WalkDir(root, "fixtures", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".json") && p != "fixtures/manifest.json" && !registered[p] {
			unregistered = append(unregistered, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(unregistered) > 0 {
		return fmt.Errorf("fixtures missing from the manifest: %s", strings.Join(unregistered, ", "))
	}
	return nil
}

func (v *Validator) checkEntry(root fs.FS, e manifestEntry) error {
	data, err := fs.ReadFile(root, e.Path)
	if err != nil {
		return err
	}
	var rejected error
	var unchanged func() error
	switch e.Schema {
	case BrowserContextSchemaID:
		c, err := v.NormalizeContext(data)
		rejected = err
		unchanged = func() error { return sameCanonical(data, c.canonical) }
	case TaskRequestSchemaID:
		t, err := v.ParseTask(data)
		rejected = err
		unchanged = func() error {
			b, _ := t.MarshalJSON()
			return sameCanonical(data, b)
		}
	default:
		if _, ok := v.schemas[e.Schema]; !ok {
			return fmt.Errorf("unknown schema %s", e.Schema)
		}
		_, rejected = v.validateDocument(e.Schema, data)
	}
	if e.ExpectedValid {
		if rejected != nil {
			return fmt.Errorf("rejected a valid fixture: %s", reasonOf(rejected))
		}
		if unchanged != nil {
			return unchanged()
		}
		return nil
	}
	if rejected == nil {
		return errors.New("accepted a fixture that must be rejected")
	}
	if !errors.Is(rejected, ErrInvalidTask) {
		return fmt.Errorf("rejected with %v, want invalid_task", rejected)
	}
	if reason := reasonOf(rejected); !strings.Contains(reason, e.ErrorContains) {
		return fmt.Errorf("rejected for another reason: %q does not contain %q", reason, e.ErrorContains)
	}
	return nil
}

// sameCanonical reports whether normalization left a valid fixture unchanged
// ("accept every valid one unchanged", reference §9).
func sameCanonical(raw, normalized []byte) error {
	doc, err := decodeJSON(raw)
	if err != nil {
		return err
	}
	if want := appendCanonical(nil, doc, true); !bytes.Equal(want, normalized) {
		return fmt.Errorf("normalization changed a valid fixture: %s", firstDiff(want, normalized))
	}
	return nil
}

func (v *Validator) checkGolden(root fs.FS, e manifestEntry, registered map[string]bool) error {
	data, err := fs.ReadFile(root, e.Path)
	if err != nil {
		return err
	}
	doc, err := v.validateDocument(PromptGoldenSchemaID, data)
	if err != nil {
		return err
	}
	fixture := doc["context_fixture"].(string)
	if !registered[fixture] {
		return fmt.Errorf("context fixture %s is not registered", fixture)
	}
	ctx, err := fs.ReadFile(root, fixture)
	if err != nil {
		return err
	}
	t, err := v.NewTask(doc["instruction"].(string), ctx)
	if err != nil {
		return fmt.Errorf("build task: %s", reasonOf(err))
	}
	if got, want := t.Envelope(), []byte(doc["expected"].(string)); !bytes.Equal(got, want) {
		return fmt.Errorf("envelope differs from the golden: %s", firstDiff(want, got))
	}
	return nil
}

func checkScenarioFixture(root fs.FS, e manifestEntry, registered map[string]bool) error {
	data, err := fs.ReadFile(root, e.Path)
	if err != nil {
		return err
	}
	doc, err := decodeJSON(data)
	if err != nil {
		return err
	}
	req, _ := doc.(map[string]any)["request"].(map[string]any)
	body, ok := req["body_fixture"].(string)
	if !ok {
		return nil
	}
	if !registered[body] {
		return fmt.Errorf("body fixture %s is not registered", body)
	}
	_, err = fs.Stat(root, body)
	return err
}

// validateDocument checks a contract document of any format against its
// schema without normalization; a top-level contract_version must be an
// integer literal.
func (v *Validator) validateDocument(schemaID string, data []byte) (map[string]any, error) {
	sch, ok := v.schemas[schemaID]
	if !ok {
		return nil, fmt.Errorf("unknown schema %s", schemaID)
	}
	if !utf8.Valid(data) {
		return nil, malformed("document is not valid UTF-8", nil)
	}
	doc, err := decodeJSON(data)
	if err != nil {
		return nil, malformed(syntaxReason(err), err)
	}
	if _, e := validate(sch, nil, doc); e != nil {
		return nil, e
	}
	obj, _ := doc.(map[string]any)
	if p, n, ok := firstNonInteger(obj["contract_version"], "/contract_version"); ok {
		return nil, invalid(p+": expected an integer literal, got "+string(n), nil)
	}
	return obj, nil
}

func reasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Reason != "" {
		return e.Code + ": " + e.Reason
	}
	return err.Error()
}

func firstDiff(want, got []byte) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	clip := func(b []byte) string {
		end := min(len(b), i+40)
		return fmt.Sprintf("%q", b[i:end])
	}
	return fmt.Sprintf("first difference at byte %d: want %s, got %s", i, clip(want), clip(got))
}

// DefaultContractDir is where the shared contract directory sits relative to
// the module root (CI lays shared/ next to the checkout).
const DefaultContractDir = "../shared/taskbar-contract"

// FindContractDir walks up from start to the directory holding go.mod and
// returns DefaultContractDir resolved against it.
func FindContractDir(start string) (string, error) {
	root, err := modroot.Find(start)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, filepath.FromSlash(DefaultContractDir)), nil
}
