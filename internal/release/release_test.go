package release_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/modroot"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/internal/release"
)

// TestRun_Packages: one release for linux/amd64 and linux/arm64 under
// another scope writes the per-platform packages (os/cpu, the binary at
// 0755 with its size, the version stamped in), a Pi package per row of
// Extensions (pi-package keyword, pi manifest, Pi's host packages as "*"
// peers, every platform package pinned as optional, CHANGELOG.md, the npm
// command form naming the platform package, StateFlow's ./modules export)
// and the CLI package with its bin; no package has an install script, the
// scope reaches every name, SHA256SUMS lists every tarball.
func TestRun_Packages(t *testing.T) {
	t.Parallel()
	const version, scope = "0.1.0-test.1", "@acme"
	res := newRelease(t, version, scope, linuxTargets...)
	if len(res.Skipped) != 0 || len(res.Tarballs) != 2+len(release.Extensions())+1 {
		t.Fatalf("tarballs %d, skipped %v", len(res.Tarballs), res.Skipped)
	}
	sums, err := os.ReadFile(res.SumsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range res.Tarballs {
		if !strings.HasPrefix(tb.Package, scope+"/") {
			t.Errorf("package %s is outside the scope %s", tb.Package, scope)
		}
		if !strings.Contains(string(sums), tb.SHA256+"  "+filepath.Base(tb.File)+"\n") {
			t.Errorf("SHA256SUMS lacks %s", filepath.Base(tb.File))
		}
		p := parsePackage(t, readTarball(t, tb.File))
		if p.Name != tb.Package || p.Version != version || len(p.Scripts) != 0 {
			t.Errorf("%s: name %q version %q scripts %v", tb.Package, p.Name, p.Version, p.Scripts)
		}
	}
	var platforms []string
	for _, tg := range release.Targets() {
		platforms = append(platforms, scope+"/cli-"+tg.Platform())
	}
	slices.Sort(platforms)

	for _, tg := range linuxTargets {
		files := readTarball(t, tarball(t, res, scope+"/cli-"+tg.Platform()).File)
		p := parsePackage(t, files)
		bin := files["bin/pikit"]
		if !slices.Equal(p.OS, []string{"linux"}) || !slices.Equal(p.CPU, []string{tg.CPU()}) || bin.mode != 0o755 ||
			p.Piext == nil || p.Piext.Sizes["bin/pikit"] != int64(len(bin.data)) || len(bin.data) < 1<<20 {
			t.Errorf("%s: os %v cpu %v mode %o size %d (declared %+v)", p.Name, p.OS, p.CPU, bin.mode, len(bin.data), p.Piext)
		}
	}
	out, err := exec.Command(res.Binaries[linuxTargets[0]], "--version").Output()
	if want := "pikit " + version + " (commit " + testCommit + ", linux/amd64)\n"; err != nil || string(out) != want {
		t.Errorf("pikit --version = %q, %v; want %q", out, err, want)
	}

	for _, e := range release.Extensions() {
		files := readTarball(t, tarball(t, res, scope+"/"+e.Name).File)
		p := parsePackage(t, files)
		var optional []string
		for name, v := range p.OptionalDependencies {
			optional = append(optional, name)
			if v != version {
				t.Errorf("%s: optional %s@%s", p.Name, name, v)
			}
		}
		slices.Sort(optional)
		if !slices.Contains(p.Keywords, "pi-package") || p.Pi == nil || !slices.Equal(p.Pi.Extensions, []string{"./index.mjs"}) ||
			!slices.Equal(optional, platforms) || len(p.Dependencies) != 0 || p.PeerDependencies["@earendil-works/pi-coding-agent"] != "*" {
			t.Errorf("%s: %+v", p.Name, p)
		}
		for name, r := range p.PeerDependencies {
			if r != "*" || !strings.HasPrefix(name, "@earendil-works/") {
				t.Errorf("%s: peer %s@%s", p.Name, name, r)
			}
		}
		for _, f := range []string{"index.mjs", "piext.json", "CHANGELOG.md", "README.md"} {
			if _, ok := files[f]; !ok {
				t.Errorf("%s lacks %s", p.Name, f)
			}
		}
		for f, tf := range files {
			if tf.mode != 0o644 {
				t.Errorf("%s: %s has mode %o, want 644", p.Name, f, tf.mode)
			}
		}
		piext := string(files["piext.json"].data)
		if !strings.Contains(piext, `"npm:`+scope+`/cli-{platform}/bin/pikit",`) || !strings.Contains(piext, "go install github.com/pikit-dev/pikit/cmd/pikit@v"+version+", then pikit ext install "+e.Name) {
			t.Errorf("%s: piext.json command or source: %.300s", p.Name, piext)
		}
		for sub, file := range e.Exports {
			if p.Exports[sub] != file || files[strings.TrimPrefix(file, "./")].data == nil {
				t.Errorf("%s: export %s = %q", p.Name, sub, p.Exports[sub])
			}
		}
	}
	if p := parsePackage(t, readTarball(t, tarball(t, res, scope+"/stateflow").File)); p.Exports["./modules"] != "./modules.ts" {
		t.Errorf("stateflow exports %v", p.Exports)
	}

	files := readTarball(t, tarball(t, res, scope+"/cli").File)
	p := parsePackage(t, files)
	if p.Bin["pikit"] != "bin/pikit.js" || files["bin/pikit.js"].mode != 0o755 || len(p.OptionalDependencies) != len(platforms) ||
		!strings.Contains(string(files["bin/pikit.js"].data), `"`+scope+`/cli-{platform}/bin/pikit"`) {
		t.Errorf("cli: %+v", p)
	}
}

// TestRun_Refuses: a version that is not semver, a bad scope, an output
// directory with files in it, and a release version (not a prerelease)
// whose changelogs lack its heading are refused before anything is built.
func TestRun_Refuses(t *testing.T) {
	t.Parallel()
	root, err := modroot.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	full := t.TempDir()
	writeFile(t, filepath.Join(full, "x"), "x")
	for _, c := range []struct {
		o    release.Options
		want string
	}{
		{release.Options{Version: "v0.1.0"}, `version "v0.1.0" is not semver`},
		{release.Options{Version: "0.1"}, "is not semver"},
		{release.Options{Version: "0.1.0", Commit: "HEAD"}, `commit "HEAD" is not a hex revision`},
		{release.Options{Version: "0.1.0", Commit: testCommit, Scope: "pikit"}, `scope "pikit" is not an npm scope`},
		{release.Options{Version: "0.1.0", Commit: testCommit, Module: root, Out: full}, "is not empty"},
		{release.Options{Version: "99.0.0", Commit: testCommit, Module: root, Out: t.TempDir()}, `CHANGELOG.md has no "## [99.0.0]" heading`},
	} {
		_, err := release.Run(context.Background(), c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}

// TestRun_SkipBroken: a target that does not compile fails the release;
// with SkipBroken it is reported and skipped, and the rest is released.
func TestRun_SkipBroken(t *testing.T) {
	t.Parallel()
	root, err := modroot.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	broken := release.Target{GOOS: "linux", GOARCH: "nosuch"}
	o := release.Options{Version: "0.1.0-test.1", Commit: testCommit, Module: root, Out: t.TempDir(), Targets: []release.Target{linuxTargets[0], broken}}
	if _, err := release.Run(context.Background(), o); !errors.Is(err, release.ErrBuild) || !strings.Contains(err.Error(), "linux/nosuch") {
		t.Fatalf("a broken target without SkipBroken: %v", err)
	}
	o.Out, o.SkipBroken = t.TempDir(), true
	if _, err := exec.LookPath("npm"); err != nil {
		pitest.MissingPeer(t, fmt.Sprintf("no npm: %v", err))
	}
	res, err := release.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Target != broken || !errors.Is(res.Skipped[0].Err, release.ErrBuild) {
		t.Errorf("skipped = %+v", res.Skipped)
	}
	if _, ok := res.Binaries[linuxTargets[0]]; !ok || len(res.Tarballs) != 1+len(release.Extensions())+1 {
		t.Errorf("binaries %v, %d tarballs", res.Binaries, len(res.Tarballs))
	}
}
