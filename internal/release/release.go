// Package release builds pikit for every target and writes the npm
// packages that put it where Pi's users are, the way esbuild and Biome
// ship native binaries:
//
//   - <scope>/cli-<platform> (darwin-arm64, darwin-x64, linux-x64,
//     linux-arm64, win32-x64): the pikit binary in bin/, with npm's os and
//     cpu fields, so npm installs only the one for the machine;
//   - <scope>/<extension> for each row of [Extensions]: a Pi package
//     (keywords pi-package, a pi manifest, Pi's host packages as "*"
//     peers, CHANGELOG.md) whose bridge runs the binary of the per-platform
//     package it lists in optionalDependencies (piext's npm command form);
//   - <scope>/cli: `npx <scope>/cli …` runs pikit through a small Node
//     launcher that resolves the same per-platform package.
//
// No package has a postinstall script or downloads anything at run time.
// Every package has the one release version, which the binaries print in
// `pikit --version`.
//
// # Reproducible builds
//
// Each target is built with CGO_ENABLED=0, -trimpath, -buildvcs=false and
// the default GOAMD64/GOARM64 level, with version and commit stamped by
// -ldflags -X (symbols and DWARF stripped with -s -w): two builds of one
// commit with one Go toolchain give the same bytes wherever the checkout
// lies. npm pack writes fixed timestamps, so the tarballs repeat too.
//
// # Example
//
//	res, err := release.Run(ctx, release.Options{Version: "0.1.0", Commit: rev, Module: root, Out: "dist/0.1.0"})
//	for _, p := range res.Tarballs {
//		fmt.Printf("%s  %s\n", p.SHA256, filepath.Base(p.File))
//	}
package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// DefaultScope is the npm scope of every package: the one place it is set
// (internal/cmd/release's --scope overrides it for one run).
const DefaultScope = "@pikit"

// Options configure [Run].
type Options struct {
	// Version is the release version, semver without "v" (1.2.3 or
	// 1.2.3-rc.1). Required. A version without a prerelease part needs a
	// "## [VERSION]" heading in every extension's changelog.
	Version string
	// Commit is stamped into the binaries (pikit --version). Required.
	Commit string
	// Module is the module root to build. Required.
	Module string
	// Out is the output directory; it must be missing or empty.
	Out string
	// Scope is the npm scope; "" means [DefaultScope].
	Scope string
	// Targets to build; nil means [Targets].
	Targets []Target
	// SkipBroken reports a target that does not compile in
	// [Result.Skipped] and goes on without it; false fails the release.
	SkipBroken bool
	// Rebuild passes -a to go build (every package compiled again).
	Rebuild bool
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Result is what [Run] wrote.
type Result struct {
	// Binaries are the built executables by target.
	Binaries map[Target]string
	// Tarballs are the npm tarballs in Out, per-platform packages first.
	Tarballs []Tarball
	// Skipped are the targets that did not compile (with SkipBroken).
	Skipped []Skipped
	// SumsFile is Out/SHA256SUMS (sha256sum's format).
	SumsFile string
}

// Tarball is one packed npm package.
type Tarball struct {
	Package string // npm name, e.g. @pikit/cli-linux-x64
	File    string // absolute path of the .tgz
	Size    int64  // bytes
	SHA256  string // hex
}

// Skipped is a target left out with [Options.SkipBroken].
type Skipped struct {
	Target Target
	Err    error
}

var (
	semver   = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	scopeRe  = regexp.MustCompile(`^@[a-z0-9][a-z0-9._-]*$`)
	commitRe = regexp.MustCompile(`^[0-9a-f]{7,64}$`)
)

// ErrBuild wraps a target's failed go build.
var ErrBuild = errors.New("release: build failed")

// Run builds the targets, writes the package folders under Out/npm, packs
// each into Out and writes Out/SHA256SUMS. It needs go and npm on PATH.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	res := &Result{Binaries: map[Target]string{}}
	for _, t := range o.Targets {
		fmt.Fprintf(log, "build %s\n", t)
		exe := filepath.Join(o.Out, "bin", t.Platform(), t.Executable())
		if err := build(ctx, o, t, exe); err != nil {
			if !o.SkipBroken || ctx.Err() != nil {
				return nil, err
			}
			fmt.Fprintf(log, "skip %s: %v\n", t, err)
			res.Skipped = append(res.Skipped, Skipped{t, err})
			continue
		}
		res.Binaries[t] = exe
	}
	if len(res.Binaries) == 0 {
		return nil, errors.New("release: no target compiled")
	}
	host, err := hostBinary(ctx, o, res.Binaries)
	if err != nil {
		return nil, err
	}
	dirs, err := writePackages(ctx, o, res.Binaries, host)
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		fmt.Fprintf(log, "pack %s\n", d.name)
		tb, err := pack(ctx, d.dir, o.Out)
		if err != nil {
			return nil, err
		}
		tb.Package = d.name
		res.Tarballs = append(res.Tarballs, tb)
	}
	res.SumsFile = filepath.Join(o.Out, "SHA256SUMS")
	var sums strings.Builder
	for _, tb := range res.Tarballs {
		fmt.Fprintf(&sums, "%s  %s\n", tb.SHA256, filepath.Base(tb.File))
	}
	if err := os.WriteFile(res.SumsFile, []byte(sums.String()), 0o644); err != nil {
		return nil, err
	}
	return res, nil
}

// check validates o and fills its defaults.
func (o *Options) check() error {
	if !semver.MatchString(o.Version) {
		return fmt.Errorf("release: version %q is not semver without v (1.2.3, 1.2.3-rc.1)", o.Version)
	}
	if !commitRe.MatchString(o.Commit) {
		return fmt.Errorf("release: commit %q is not a hex revision", o.Commit)
	}
	if o.Scope == "" {
		o.Scope = DefaultScope
	}
	if !scopeRe.MatchString(o.Scope) {
		return fmt.Errorf("release: scope %q is not an npm scope (@name)", o.Scope)
	}
	if o.Module == "" || o.Out == "" {
		return errors.New("release: Module and Out are required")
	}
	if o.Targets == nil {
		o.Targets = Targets()
	}
	var err error
	if o.Out, err = filepath.Abs(o.Out); err != nil {
		return err
	}
	if ents, err := os.ReadDir(o.Out); err == nil && len(ents) > 0 {
		return fmt.Errorf("release: %s is not empty", o.Out)
	}
	if !strings.Contains(o.Version, "-") {
		for _, e := range Extensions() {
			if err := checkChangelog(filepath.Join(o.Module, filepath.FromSlash(e.Changelog)), o.Version); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkChangelog requires a "## [version]" or "## version" heading.
func checkChangelog(path, version string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("release: changelog: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "## ["+version+"]") || l == "## "+version || strings.HasPrefix(l, "## "+version+" ") {
			return nil
		}
	}
	return fmt.Errorf("release: %s has no \"## [%s]\" heading", filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), version)
}

// hostBinary returns a pikit that runs here, to write the Pi packages'
// folders (pikit ext pack --npm-binary): the host target's build, or a
// build of its own.
func hostBinary(ctx context.Context, o Options, built map[Target]string) (string, error) {
	host := Target{runtime.GOOS, runtime.GOARCH}
	if exe, ok := built[host]; ok {
		return exe, nil
	}
	exe := filepath.Join(o.Out, "host", host.Executable())
	if err := build(ctx, o, host, exe); err != nil {
		return "", err
	}
	return exe, nil
}
