package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/install"
)

// installFake writes an installation of NAME with extra files into dir the
// way `pikit ext install` does (install.Write), with a program that is
// never run (an absolute path on this OS beside dir): the CLI's uninstall
// and list only read the folder.
func installFake(t *testing.T, dir, name string, files map[string]string) {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	command := filepath.Join(filepath.Dir(abs), "bin", "pikit")
	if _, err := install.Write(install.Options{Dir: dir, Command: []string{command}, Manifest: (&piext.Extension{Name: name, Files: files}).Manifest()}); err != nil {
		t.Fatal(err)
	}
}

func writeTestFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestExtUninstallImported: uninstalling an extension whose extra files a
// sibling extension imports (relative or absolute path) refuses with exit 1
// and names the siblings by base name; --force uninstalls and warns; an
// extension whose files nobody imports uninstalls at once.
func TestExtUninstallImported(t *testing.T) {
	agent := t.TempDir()
	dir := filepath.Join(agent, "extensions")
	installFake(t, dir, "stateflow", map[string]string{"modules.ts": "export const x = 1;\n"})
	installFake(t, dir, "hello", map[string]string{"lib/util.js": "export {};\n"})
	writeTestFile(t, filepath.Join(dir, "companion", "index.ts"), "import { x } from '../pikit-stateflow/modules.ts';\n")
	writeTestFile(t, filepath.Join(dir, "abs", "src", "main.mjs"), "import '"+filepath.ToSlash(filepath.Join(dir, "pikit-stateflow", "modules.ts"))+"';\n")
	writeTestFile(t, filepath.Join(dir, "unrelated", "index.ts"), "import '../pikit-stateflow/other.ts';\n")
	writeTestFile(t, filepath.Join(dir, "deps", "node_modules", "x", "index.js"), "require('../pikit-stateflow/modules.ts');\n")

	_, _, err := runPikit(t, "", "ext", "uninstall", "stateflow", "--agent-dir", agent)
	if exitCode(err) != 1 || err == nil || !strings.Contains(err.Error(), "other extensions in ") ||
		!strings.HasSuffix(err.Error(), "import its files: abs, companion; remove them first or pass --force") {
		t.Fatalf("uninstall with importers: %v (exit %d)", err, exitCode(err))
	}
	if _, err := install.Read(install.Folder(dir, "stateflow")); err != nil {
		t.Fatalf("a refused uninstall removed the installation: %v", err)
	}
	out, errOut, err := runPikit(t, "", "ext", "uninstall", "stateflow", "--force", "--agent-dir", agent)
	if err != nil || out != "uninstalled stateflow\n" ||
		errOut != "warning: other extensions import files of stateflow: abs, companion; Pi will not start until they are removed\n" {
		t.Fatalf("uninstall --force: %q %q %v", out, errOut, err)
	}
	if _, err := os.Stat(install.Folder(dir, "stateflow")); !os.IsNotExist(err) {
		t.Fatalf("folder after uninstall --force: %v", err)
	}
	out, errOut, err = runPikit(t, "", "ext", "uninstall", "hello", "--agent-dir", agent)
	if err != nil || out != "uninstalled hello\n" || errOut != "" {
		t.Fatalf("uninstall without importers: %q %q %v", out, errOut, err)
	}
}

// TestExtMessages: a second uninstall, an empty list and a missing --exec
// program (of install and of pack) get a plain one-line message with no internal prefix; the last
// project uninstall removes the then empty .pi/extensions and .pi.
func TestExtMessages(t *testing.T) {
	t.Chdir(t.TempDir())
	installFake(t, filepath.Join(".pi", "extensions"), "midcompact", nil)
	if out, _, err := runPikit(t, "", "ext", "uninstall", "midcompact", "--project"); err != nil || out != "uninstalled midcompact\n" {
		t.Fatalf("uninstall: %q %v", out, err)
	}
	_, _, err := runPikit(t, "", "ext", "uninstall", "midcompact", "--project")
	if want := "midcompact is not installed (in " + filepath.Join(".pi", "extensions") + ")"; exitCode(err) != 1 || err == nil || err.Error() != want {
		t.Errorf("second uninstall: %v, want %q", err, want)
	}
	if _, err := os.Stat(".pi"); !os.IsNotExist(err) {
		t.Errorf(".pi after the last project uninstall: %v (an empty .pi makes Pi ask for trust on every start)", err)
	}
	out, errOut, err := runPikit(t, "", "ext", "list", "--project")
	if err != nil || out != "" || errOut != "no extensions installed in "+filepath.Join(".pi", "extensions")+"\n" {
		t.Errorf("empty list: %q %q %v", out, errOut, err)
	}
	writeTestFile(t, "plain.txt", "x")
	for _, c := range []struct{ path, want string }{
		{"/nonexistent", "--exec /nonexistent: no such file"},
		{"plain.txt", "--exec plain.txt: is not an executable file"},
		{".", "--exec .: is not an executable file"},
	} {
		_, _, err := runPikit(t, "", "ext", "install", "hello", "--project", "--exec", c.path)
		if err == nil || err.Error() != c.want {
			t.Errorf("install --exec %s: %v, want %q", c.path, err, c.want)
		}
		_, _, err = runPikit(t, "", "ext", "pack", "hello", "pack-dir", "--exec", c.path)
		if err == nil || err.Error() != c.want {
			t.Errorf("pack --exec %s: %v, want %q", c.path, err, c.want)
		}
	}
	if _, err := os.Stat("pack-dir"); !os.IsNotExist(err) {
		t.Errorf("a refused pack left its folder: %v", err)
	}
}

// TestRootHelp: the root help starts with the long description and lists
// every subcommand exactly once, with what it does (a hand-written list in
// the description beside cobra's listed each one twice).
func TestRootHelp(t *testing.T) {
	root := newRootCmd()
	out, _, err := runPikit(t, "", "--help")
	if err != nil || !strings.HasPrefix(out, root.Long) {
		t.Fatalf("help does not start with the long description: %v\n%s", err, out)
	}
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() {
			continue
		}
		if n := strings.Count(out, "\n  "+c.Name()+" "); n != 1 {
			t.Errorf("root help lists %s %d times:\n%s", c.Name(), n, out)
		}
	}
	for _, want := range []string{"browser taskbar", "live/1 endpoint", "Pi extensions written in Go", "compaction", "StateFlow memory", "example app", "pikit ext install NAME", "built in: hello, live, midcompact, stateflow)"} {
		if !strings.Contains(out, want) {
			t.Errorf("root help lacks %q", want)
		}
	}
}

// TestExtInstallToolConflict: installing an extension with a tool another
// installed Go extension has refuses with exit 1, naming both (Pi would
// refuse to start), and installs nothing.
func TestExtInstallToolConflict(t *testing.T) {
	agent := t.TempDir()
	dir := filepath.Join(agent, "extensions")
	mine := &piext.Extension{Name: "mine", Tools: []piext.Tool{{Name: "patch_state", Description: "d",
		Execute: func(context.Context, *piext.ToolCall) (*piext.ToolResult, error) { return nil, nil }}}}
	if _, err := install.Write(install.Options{Dir: dir, Command: []string{filepath.Join(agent, "bin", "mine")}, Manifest: mine.Manifest()}); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runPikitStderr(t, nil, "ext", "install", "stateflow", "--agent-dir", agent)
	if code != 1 || !strings.Contains(stderr, `stateflow's tool "patch_state" is already a tool of mine (in `) ||
		!strings.HasSuffix(stderr, "rename the tool or run pikit ext uninstall mine first") {
		t.Fatalf("install over another extension's tool: exit %d: %s", code, stderr)
	}
	if _, err := install.Read(install.Folder(dir, "stateflow")); err == nil {
		t.Fatal("the refused extension was installed")
	}
}

// TestExtInstallBothPlaces: installing an extension in the project while
// the agent dir has it (or the reverse) refuses, since Pi would load both
// and refuse to start; a project .pi folder holding anything else stays
// after the last uninstall; an unknown subcommand fails with exit 1.
func TestExtInstallBothPlaces(t *testing.T) {
	t.Chdir(t.TempDir())
	agent := t.TempDir()
	installFake(t, filepath.Join(agent, "extensions"), "stateflow", nil)
	_, _, err := runPikit(t, "", "ext", "install", "stateflow", "--project", "--agent-dir", agent)
	if exitCode(err) != 1 || err == nil || !strings.Contains(err.Error(), "stateflow is already installed in ") ||
		!strings.HasSuffix(err.Error(), "Pi would load both and refuse to start (their tools conflict): run pikit ext uninstall stateflow first") {
		t.Fatalf("project install over a global one: %v", err)
	}
	if _, err := os.Stat(".pi"); !os.IsNotExist(err) {
		t.Fatalf("a refused install created .pi: %v", err)
	}
	installFake(t, filepath.Join(".pi", "extensions"), "midcompact", nil)
	_, _, err = runPikit(t, "", "ext", "install", "midcompact", "--agent-dir", agent)
	if err == nil || !strings.HasSuffix(err.Error(), "run pikit ext uninstall midcompact --project first") {
		t.Fatalf("global install over a project one: %v", err)
	}
	writeTestFile(t, filepath.Join(".pi", "settings.json"), "{}")
	if _, _, err := runPikit(t, "", "ext", "uninstall", "midcompact", "--project"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(".pi", "settings.json")); err != nil {
		t.Fatalf("uninstall removed a .pi holding other files: %v", err)
	}
	if _, err := os.Stat(filepath.Join(".pi", "extensions")); !os.IsNotExist(err) {
		t.Fatalf("empty .pi/extensions left: %v", err)
	}
	for _, args := range [][]string{{"stateflow", "frob"}, {"ext", "frob"}, {"taskbar", "contract", "frob"}} {
		_, _, err := runPikit(t, "", args...)
		if exitCode(err) != 1 || err == nil || !strings.HasPrefix(err.Error(), `unknown command "frob" for "pikit `) {
			t.Errorf("pikit %s: %v (exit %d)", strings.Join(args, " "), err, exitCode(err))
		}
	}
	if out, _, err := runPikit(t, "", "stateflow"); err != nil || !strings.Contains(out, "Available Commands") {
		t.Errorf("pikit stateflow without a subcommand: %v\n%s", err, out)
	}
}
