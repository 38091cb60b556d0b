package contract_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/taskbar/contract"
)

// TestConformance runs the whole suite over the shared contract directory,
// read unchanged: schemas, all manifest entries, both prompt goldens.
func TestConformance(t *testing.T) {
	dir := pitest.RequireShared(t, "taskbar-contract", "fixtures/manifest.json")
	r, err := contract.Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Checks {
		t.Run(c.Name, func(t *testing.T) {
			if !c.OK {
				t.Error(c.Detail)
			}
		})
	}

	// The runner must have looked at every manifest entry and every golden.
	var m struct {
		Fixtures []struct {
			ID     string `json:"id"`
			Schema string `json:"schema"`
		} `json:"fixtures"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "fixtures", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var entries, goldens, schemas int
	for _, c := range r.Checks {
		switch {
		case strings.HasPrefix(c.Name, "manifest/"):
			entries++
		case strings.HasPrefix(c.Name, "golden/"):
			goldens++
		case strings.HasPrefix(c.Name, "schema "):
			schemas++
		}
	}
	wantGoldens := 0
	for _, f := range m.Fixtures {
		if f.Schema == contract.PromptGoldenSchemaID {
			wantGoldens++
		}
	}
	if entries != len(m.Fixtures) || entries < 41 {
		t.Errorf("checked %d manifest entries, manifest has %d (contract v1 has 41)", entries, len(m.Fixtures))
	}
	if goldens != wantGoldens || goldens < 2 {
		t.Errorf("checked %d prompt goldens, manifest has %d", goldens, wantGoldens)
	}
	if schemas != 6 {
		t.Errorf("compiled %d schemas, want 6", schemas)
	}
	if !r.OK() {
		t.Errorf("report not OK: %d failed", len(r.Failed()))
	}
}

// TestEmbeddedSchemas keeps the embedded copies byte-identical to the
// contract directory, file set included.
func TestEmbeddedSchemas(t *testing.T) {
	dir := filepath.Join(pitest.RequireShared(t, "taskbar-contract", "fixtures/manifest.json"), "schemas")
	want, err := filepath.Glob(filepath.Join(dir, "*.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := fs.Glob(contract.Schemas(), "*.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var wantNames []string
	for _, p := range want {
		wantNames = append(wantNames, filepath.Base(p))
	}
	if !slices.Equal(got, wantNames) {
		t.Fatalf("embedded schemas %v, contract has %v", got, wantNames)
	}
	for _, name := range got {
		e, err := fs.ReadFile(contract.Schemas(), name)
		if err != nil {
			t.Fatal(err)
		}
		u, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e, u) {
			t.Errorf("embedded %s differs from %s", name, dir)
		}
	}
	// The license of the copied contract data travels with it.
	e, err := os.ReadFile(filepath.Join("schemas", "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(e, u) {
		t.Error("schemas/LICENSE differs from the contract LICENSE")
	}
}

// copyContract copies the contract directory into a writable temp dir.
func copyContract(t *testing.T) string {
	t.Helper()
	src := pitest.RequireShared(t, "taskbar-contract", "fixtures/manifest.json")
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if err := filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o600)
		if d.IsDir() {
			mode = 0o700
		}
		return os.Chmod(p, mode)
	}); err != nil {
		t.Fatal(err)
	}
	return dst
}

func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, bytes.Replace(data, []byte(old), []byte(new), 1), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestVerify_DetectsDrift breaks a copy of the contract in one way at a time
// and expects exactly the affected check to fail.
func TestVerify_DetectsDrift(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(t *testing.T, dir string)
		failing  string // check name that must fail
		contains string // in its detail
	}{
		{
			name: "stale golden",
			edit: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "fixtures/prompts/minimal-task.json"), `\"path\":\"/cards\"`, `\"path\":\"/cardz\"`)
			},
			failing: "golden/minimal-prompt-golden", contains: "envelope differs",
		},
		{
			name: "valid fixture expected invalid",
			edit: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "fixtures/browser-context/minimal-whole-page.json"), `"Cards"`, `null`)
			},
			failing: "manifest/minimal-whole-page", contains: "expected type string",
		},
		{
			name: "rejected for another reason",
			edit: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "fixtures/manifest.json"), `"error_contains": "tree exceeds 750 nodes"`, `"error_contains": "tree exceeds 749 nodes"`)
			},
			failing: "manifest/reject-oversized-page-nodes", contains: "another reason",
		},
		{
			name: "invalid fixture accepted",
			edit: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "fixtures/browser-context/unknown-field.json"), `[],
  "raw_html": "<script>must not be accepted</script>"`, `[]`)
			},
			failing: "manifest/reject-unknown-context-field", contains: "accepted a fixture that must be rejected",
		},
		{
			name: "duplicate key counts as another reason",
			edit: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "fixtures/browser-context/unknown-field.json"), `"raw_html"`, `"route"`)
			},
			failing: "manifest/reject-unknown-context-field", contains: "duplicate object member name",
		},
		{
			name: "unregistered fixture",
			edit: func(t *testing.T, dir string) {
				if err := os.WriteFile(filepath.Join(dir, "fixtures/tasks/stray.json"), []byte(`{}`), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			failing: "registry", contains: "fixtures/tasks/stray.json",
		},
		{
			name: "bound changed in the schema is honoured",
			edit: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "schemas/browser-context.v1.schema.json"), `"x-maxNodes": 750`, `"x-maxNodes": 1`)
			},
			failing: "manifest/minimal-whole-page", contains: "tree exceeds 1 nodes",
		},
		{
			name: "malformed custom keyword fails meta-validation",
			edit: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "schemas/browser-context.v1.schema.json"), `"x-maxDepth": 12`, `"x-maxDepth": "deep"`)
			},
			failing: "schemas", contains: "x-maxDepth",
		},
		{
			name: "contract_version 1.0 in a scenario",
			edit: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "fixtures/scenarios/foundation-state.json"), `"contract_version": 1,`, `"contract_version": 1.0,`)
			},
			failing: "manifest/foundation-http-state", contains: "integer literal",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyContract(t)
			tt.edit(t, dir)
			r, err := contract.Verify(dir)
			if err != nil {
				t.Fatal(err)
			}
			if r.OK() {
				t.Fatal("report OK after breaking the contract")
			}
			for _, c := range r.Failed() {
				if c.Name == tt.failing {
					if !strings.Contains(c.Detail, tt.contains) {
						t.Errorf("%s failed with %q, want it to mention %q", c.Name, c.Detail, tt.contains)
					}
					return
				}
			}
			t.Errorf("check %s did not fail; failed: %v", tt.failing, r.Failed())
		})
	}
}

func TestVerify_MissingDirectory(t *testing.T) {
	if _, err := contract.Verify(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Fatal("Verify of a missing directory returned no error")
	}
}
