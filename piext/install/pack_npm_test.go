package install_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/install"
)

// TestPackNPM: the npm form of a pack names the per-platform package's
// binary in piext.json's command (no executable copied), keeps the source
// hint, writes the bridge, skills and the manifest's extra files; a binary
// that is not <package>/<path>, a multi-line hint and a foreign folder are
// refused. `pikit ext install` folders keep the absolute form and no
// source member.
func TestPackNPM(t *testing.T) {
	t.Parallel()
	m := (&piext.Extension{Name: "demo", Files: map[string]string{"lib/modules.ts": "export {};\n"}}).Manifest()
	skills := fstest.MapFS{"s1/SKILL.md": {Data: []byte("---\nname: s1\n---\n")}}
	dir := filepath.Join(t.TempDir(), "pkg")
	o := install.NPMPackOptions{Binary: "@acme/cli-{platform}/bin/acme", Args: []string{"ext", "run", "demo"}, Manifest: m, Skills: skills, Source: "go install example.com/acme@v1"}
	if err := install.PackNPM(dir, o); err != nil {
		t.Fatal(err)
	}
	in, err := install.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"npm:@acme/cli-{platform}/bin/acme", "ext", "run", "demo"}; !slices.Equal(in.Command, want) || in.Source != o.Source {
		t.Errorf("piext.json command %q source %q", in.Command, in.Source)
	}
	for _, f := range []string{"index.mjs", "package.json", "skills/s1/SKILL.md", "lib/modules.ts"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bin")); !os.IsNotExist(err) {
		t.Errorf("an npm pack copied a binary: %v", err)
	}
	if err := install.PackNPM(dir, o); err != nil {
		t.Errorf("pack again over the earlier pack: %v", err)
	}

	for _, bad := range []string{"", "/abs/pikit", "@acme/cli", "cli", "@acme/cli/../x", "@Acme/cli/bin/x", "@acme/cli/bin/../../x"} {
		o := o
		o.Binary = bad
		if err := install.PackNPM(t.TempDir(), o); err == nil || !strings.Contains(err.Error(), "is not <npm package>/<relative path>") {
			t.Errorf("binary %q: %v", bad, err)
		}
	}
	o.Source = "two\nlines"
	if err := install.PackNPM(t.TempDir(), o); err == nil {
		t.Error("a multi-line source hint was accepted")
	}
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "index.ts"), []byte("mine"), 0o600)
	o.Source = ""
	if err := install.PackNPM(foreign, o); err == nil {
		t.Error("packed into a foreign folder")
	}

	folder, err := install.Write(install.Options{Dir: t.TempDir(), Command: []string{"/usr/local/bin/pikit", "ext", "run", "demo"}, Manifest: m})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(folder, install.RecordFile)); strings.Contains(string(b), `"source"`) {
		t.Errorf("an install's piext.json has a source member:\n%s", b)
	}
}
