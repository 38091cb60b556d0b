package store

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// fixtureCWD is the CWD the fixtures were authored for (a Linux path).
const fixtureCWD = "/home/u/proj"

// copyTree copies a fixture directory into dst, with its CWD in this OS's
// absolute form (Windows: C:\home\u\proj): the CWD scope directory's
// name and the JSON-quoted "cwd" members. On Unix the copy is exact.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	cwd, err := filepath.Abs(fixtureCWD)
	if err != nil {
		t.Fatal(err)
	}
	names := strings.NewReplacer(CWDKey(fixtureCWD), CWDKey(cwd))
	members := strings.NewReplacer(`"cwd":`+jsQuote(fixtureCWD), `"cwd":`+jsQuote(cwd))
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		r = names.Replace(r)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, r), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, r), []byte(members.Replace(string(b))), 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// treeFiles maps relative paths to contents.
func treeFiles(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			r, _ := filepath.Rel(root, p)
			out[r] = string(b)
		}
		return nil
	})
	return out
}

// TestInterop reads stores authored byte for byte to reference §2.2 (as the
// TypeScript writer lays them out) and checks that the same transition
// writes byte-identical files.
func TestInterop(t *testing.T) {
	cases, _ := os.ReadDir("testdata/interop")
	if len(cases) == 0 {
		t.Fatal("no interop fixtures")
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			dir := filepath.Join("testdata/interop", c.Name())
			tmp := t.TempDir()
			copyTree(t, filepath.Join(dir, "before"), tmp)
			limitText, _ := os.ReadFile(filepath.Join(dir, "limit"))
			limit, _ := strconv.Atoi(strings.TrimSpace(string(limitText)))
			l, err := NewLayout(filepath.Join(tmp, "state-flow"), fixtureCWD, testSession)
			if err != nil {
				t.Fatal(err)
			}
			s := Open(l, &Options{HistoryLimit: limit, NewID: func() string { return "00000000-0000-4000-8000-00000000000c" }, Catalog: fixtureCatalog(t, dir)})
			ctx := context.Background()
			got, err := s.ReadState(ctx, ReadPathArgs("effective"))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadFile(filepath.Join(dir, "effective.json"))
			if got != strings.TrimSpace(string(want)) {
				t.Fatalf("effective = %s, want %s", got, want)
			}
			patch, _ := os.ReadFile(filepath.Join(dir, "patch.json"))
			if _, err := s.PatchState(ctx, patch, nil); err != nil {
				t.Fatal(err)
			}
			gotFiles := treeFiles(t, tmp)
			wantDir := t.TempDir()
			copyTree(t, filepath.Join(dir, "after"), wantDir)
			wantFiles := treeFiles(t, wantDir)
			for p, w := range wantFiles {
				if gotFiles[p] != w {
					t.Errorf("%s:\n got  %q\n want %q", p, gotFiles[p], w)
				}
			}
			for p := range gotFiles {
				if _, ok := wantFiles[p]; !ok {
					t.Errorf("unexpected file %s", p)
				}
			}
		})
	}
}

// fixtureCatalog registers the Go-native modules a fixture's "modules" file
// lists, one "<id> <schemaVersion> <immutable>" per line (none without the
// file); their validators admit any object.
func fixtureCatalog(t testing.TB, dir string) sf.CatalogSource {
	b, err := os.ReadFile(filepath.Join(dir, "modules"))
	if err != nil {
		return nil
	}
	cat := &catalogs{}
	var mods []sf.Module
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var id string
		var schema int64
		var immutable bool
		if _, err := fmt.Sscan(line, &id, &schema, &immutable); err != nil {
			t.Fatalf("modules line %q: %v", line, err)
		}
		mods = append(mods, &goModule{policy: sf.ModulePolicy{ID: id, APIVersion: 1, SchemaVersion: schema, Immutable: immutable}})
	}
	cat.Set(mods...)
	return cat
}
