package pitest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modroot"
)

// builds caches one build per main package per test process (go build is
// slow; every test of a run shares the binary).
var builds sync.Map // package path → *build

type build struct {
	once sync.Once
	path string
	err  error
}

// raceEnabled reports whether this test binary was built with -race, so
// the binaries it builds are too.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// BuildCommand builds the main package pkg (module-relative, e.g.
// "./cmd/pikit") once per test process, with -race when this test binary
// has it, into <module root>/.cache/pitest-bin/ (named after the whole
// package path, e.g. cmd_pikit-race), and returns the executable's path. A failed build fails the test.
func BuildCommand(t testing.TB, pkg string) string {
	t.Helper()
	v, _ := builds.LoadOrStore(pkg, &build{})
	b := v.(*build)
	b.once.Do(func() { b.path, b.err = goBuild(pkg) })
	if b.err != nil {
		t.Fatalf("pitest: %v", b.err)
	}
	return b.path
}

func goBuild(pkg string) (string, error) {
	root, err := modroot.Find(".")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", "pitest-bin")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	// The whole package path names the binary: two packages' internal/testext
	// must not overwrite each other.
	name := strings.ReplaceAll(strings.Trim(filepath.ToSlash(filepath.Clean(pkg)), "./"), "/", "_")
	args := []string{"build"}
	if raceEnabled() {
		args = append(args, "-race")
		name += "-race"
	}
	// Build under a temporary name and rename: test processes of other
	// packages may build the same command at the same time.
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(dir, name)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append(args, "-o", filepath.Join(tmp, name), pkg)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, stderr.String())
	}
	if err := os.Rename(filepath.Join(tmp, name), out); err != nil {
		return "", err
	}
	return out, nil
}

// InstallExtension installs a Go extension into this environment's agent
// dir with the pikit binary of this module (`pikit ext install NAME
// --agent-dir AGENT [--exec EXEC]`; exec "" installs a built-in one), and
// turns extension discovery on for Pi (drops --no-extensions from Args). It
// returns the installed folder. $PIKIT_TEST_PIKIT names a prebuilt pikit to
// use instead of building one.
func (e *Env) InstallExtension(t testing.TB, name, execPath string) string {
	t.Helper()
	pikit := os.Getenv("PIKIT_TEST_PIKIT") // a prebuilt binary (CI caching, or a tree that is mid-change)
	if pikit == "" {
		pikit = BuildCommand(t, "./cmd/pikit")
	}
	args := []string{"ext", "install", name, "--agent-dir", e.AgentDir}
	if execPath != "" {
		args = append(args, "--exec", execPath)
	}
	cmd := exec.Command(pikit, args...)
	cmd.Env = append(os.Environ(), e.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pitest: pikit %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	e.Discover()
	return filepath.Join(e.AgentDir, "extensions", "pikit-"+name)
}

// InstallTypeScript writes a TypeScript extension as the file name (e.g.
// "twin.ts") into this environment's agent dir, where Pi discovers it,
// and turns discovery on (Discover): the way a user installs one, and the
// in-run baseline of a Go extension installed by InstallExtension (both
// then load beside Pi's built-in extensions; `-e` with --no-extensions
// would load the baseline without them). It returns the file's path.
func (e *Env) InstallTypeScript(t testing.TB, name, source string) string {
	t.Helper()
	dir := filepath.Join(e.AgentDir, "extensions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("pitest: %v", err)
	}
	path := WriteExtension(t, dir, name, source)
	e.Discover()
	return path
}

// Discover turns extension discovery on for Pi (drops --no-extensions
// from Args): Pi then loads what the agent dir holds and its built-in
// extensions (builtin:codemode, builtin:tool-search, …), as for a user. A
// benchmark's variant without an extension calls it so its baseline loads
// the same built-ins as its other variants.
func (e *Env) Discover() {
	e.Args = slices.DeleteFunc(e.Args, func(a string) bool { return a == "--no-extensions" })
}
