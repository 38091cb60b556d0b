package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/install"
)

func TestInstall_IdempotentUninstallListRefusesForeign(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(t.TempDir(), "ext")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	m := (&piext.Extension{Name: "demo"}).Manifest()
	skills := fstest.MapFS{"s1/SKILL.md": {Data: []byte("---\nname: s1\n---\n")}}
	o := install.Options{Dir: dir, Command: []string{exe, "ext", "run", "demo"}, Manifest: m, Skills: skills}
	folder, err := install.Write(o)
	if err != nil {
		t.Fatal(err)
	}
	// An earlier pikit's bridge (index.ts) goes at the next install: Pi
	// loads the one index.mjs that package.json names.
	if err := os.WriteFile(filepath.Join(folder, "index.ts"), []byte("// earlier bridge\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := install.Write(o); err != nil {
		t.Fatalf("second install: %v", err)
	}
	if _, err := os.Stat(filepath.Join(folder, "index.ts")); !os.IsNotExist(err) {
		t.Errorf("an earlier index.ts is left: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(folder, "package.json")); !strings.Contains(string(b), `"./index.mjs"`) {
		t.Errorf("package.json does not name index.mjs:\n%s", b)
	}
	for _, f := range []string{"package.json", "index.mjs", "piext.json", "skills/s1/SKILL.md"} {
		st, err := os.Stat(filepath.Join(folder, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, err, st)
		}
	}
	in, err := install.Read(folder)
	if err != nil || in.Protocol != 2 || in.Command[0] != exe {
		t.Errorf("piext.json = %+v, %v", in, err)
	}
	list, err := install.List(dir)
	if err != nil || len(list) != 1 || !list[0].CommandOK {
		t.Fatalf("list = %+v, %v", list, err)
	}
	os.Remove(exe)
	if list, _ := install.List(dir); list[0].CommandOK {
		t.Error("list says a removed program still exists")
	}

	// A folder without our piext.json is never touched.
	foreign := install.Folder(dir, "other")
	os.MkdirAll(foreign, 0o700)
	os.WriteFile(filepath.Join(foreign, "index.ts"), []byte("mine"), 0o600)
	if _, err := install.Write(install.Options{Dir: dir, Command: []string{exe}, Manifest: (&piext.Extension{Name: "other"}).Manifest()}); !errors.Is(err, install.ErrNotOurs) {
		t.Errorf("install over a foreign folder: %v", err)
	}
	if err := install.Uninstall(dir, "other"); !errors.Is(err, install.ErrNotOurs) {
		t.Errorf("uninstall a foreign folder: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(foreign, "index.ts")); string(b) != "mine" {
		t.Error("foreign file changed")
	}

	if err := install.Uninstall(dir, "demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(folder); !os.IsNotExist(err) {
		t.Errorf("folder after uninstall: %v", err)
	}
	if err := install.Uninstall(dir, "demo"); !errors.Is(err, install.ErrNotInstalled) {
		t.Errorf("second uninstall: %v", err)
	}
}

func TestCheckExecutable_RefusesGoRunAndGoTestBinaries(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
		says string // how the refusal names the binary
	}{
		{"/tmp/go-build123456/b001/exe/pikit", false, "(this pikit is in a go-build temporary folder)"},
		{"/tmp/TestX/piext.test", false, "(piext.test is a go test binary)"},
		{"/home/dev/go/bin/pikit", true, ""},
	} {
		err := install.CheckExecutable(tc.path)
		if (err == nil) != tc.ok || (!tc.ok && (!errors.Is(err, install.ErrTempExecutable) || !strings.HasSuffix(err.Error(), tc.says))) {
			t.Errorf("%s: %v", tc.path, err)
		}
	}
}

// TestToolConflict: an install whose tool another installed extension
// registers (in the same folder under another name, or in the other place
// Pi loads from) is refused with both names: Pi would refuse to start. A
// reinstall of the same extension, and different tools, install.
func TestToolConflict(t *testing.T) {
	global, project := t.TempDir(), t.TempDir()
	exe := filepath.Join(t.TempDir(), "ext")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	ext := func(name string, tools ...string) *piext.Extension {
		e := &piext.Extension{Name: name}
		for _, tool := range tools {
			e.Tools = append(e.Tools, piext.Tool{Name: tool, Description: "d", Execute: func(context.Context, *piext.ToolCall) (*piext.ToolResult, error) { return nil, nil }})
		}
		return e
	}
	inGlobal := install.Target{Dir: global, Other: project}
	inProject := install.Target{Dir: project, Other: global, Project: true}
	if _, err := install.Extension(inGlobal, ext("notes", "note_count", "note_add"), []string{exe}); err != nil {
		t.Fatal(err)
	}
	if _, err := install.Extension(inGlobal, ext("notes", "note_count"), []string{exe}); err != nil {
		t.Fatalf("reinstall of the same extension: %v", err)
	}
	if _, err := install.Extension(inGlobal, ext("other", "other_tool"), []string{exe}); err != nil {
		t.Fatalf("an extension with other tools: %v", err)
	}
	for _, c := range []struct {
		target install.Target
		want   string
	}{
		{inGlobal, `notes2's tool "note_count" is already a tool of notes (in ` + global + `); Pi would load both and refuse to start (Tool "note_count" conflicts with ...): rename the tool or run pikit ext uninstall notes first`},
		{inProject, `notes2's tool "note_count" is already a tool of notes (in ` + global + `); Pi would load both and refuse to start (Tool "note_count" conflicts with ...): rename the tool or run pikit ext uninstall notes first`},
	} {
		_, err := install.Extension(c.target, ext("notes2", "note_list", "note_count"), []string{exe})
		var tc *install.ToolConflictError
		if !errors.As(err, &tc) || err.Error() != c.want {
			t.Errorf("install into %s: %v\nwant %s", c.target.Dir, err, c.want)
		}
		if _, err := install.Read(install.Folder(c.target.Dir, "notes2")); err == nil {
			t.Errorf("the refused extension was installed in %s", c.target.Dir)
		}
	}
	// A program (--exec) is checked by the manifest it prints (here a
	// shell script: not on Windows).
	if runtime.GOOS != "windows" {
		prog := filepath.Join(t.TempDir(), "notes3")
		script := "#!/bin/sh\ncat <<'EOF'\n" + string(ext("notes3", "note_count").Manifest()) + "\nEOF\n"
		if err := os.WriteFile(prog, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
		var tc *install.ToolConflictError
		if _, err := install.Program(t.Context(), inGlobal, "notes3", prog); !errors.As(err, &tc) || tc.Owner != "notes" || tc.Tool != "note_count" {
			t.Errorf("program install over another extension's tool: %v", err)
		}
	}
	// A project installation's tool refuses a global install, naming the
	// project's uninstall.
	if _, err := install.Extension(inProject, ext("proj", "proj_tool"), []string{exe}); err != nil {
		t.Fatal(err)
	}
	_, err := install.Extension(inGlobal, ext("late", "proj_tool"), []string{exe})
	if err == nil || !strings.HasSuffix(err.Error(), "run pikit ext uninstall proj --project first") {
		t.Errorf("global install over a project's tool: %v", err)
	}
}
