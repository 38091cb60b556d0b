package release

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// launcherJS is the CLI package's bin/pikit.js; __PIKIT_BINARY__ becomes
// the per-platform binary's npm path.
//
//go:embed launcher.js
var launcherJS string

// piPeers are Pi's host packages the bridge and modules.ts import; Pi's
// docs: peerDependencies with "*", never bundled.
var piPeers = map[string]string{"@earendil-works/pi-coding-agent": "*", "@earendil-works/pi-tui": "*"}

// packageJSON is the part of npm's package.json the release writes.
type packageJSON struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Description          string            `json:"description"`
	Keywords             []string          `json:"keywords,omitempty"`
	Homepage             string            `json:"homepage,omitempty"`
	Repository           *repository       `json:"repository,omitempty"`
	OS                   []string          `json:"os,omitempty"`
	CPU                  []string          `json:"cpu,omitempty"`
	Bin                  map[string]string `json:"bin,omitempty"`
	Exports              map[string]string `json:"exports,omitempty"`
	Engines              map[string]string `json:"engines,omitempty"`
	Pi                   json.RawMessage   `json:"pi,omitempty"`
	PeerDependencies     map[string]string `json:"peerDependencies,omitempty"`
	OptionalDependencies map[string]string `json:"optionalDependencies,omitempty"`
	Piext                *piextFacts       `json:"piext,omitempty"`
}

type repository struct {
	Type      string `json:"type"`
	URL       string `json:"url"`
	Directory string `json:"directory,omitempty"`
}

// piextFacts are what the bridge checks in a per-platform package (piext
// NPMCommandPrefix): each binary's size, to tell a truncated one.
type piextFacts struct {
	Sizes map[string]int64 `json:"sizes"`
}

const homepage = "https://github.com/pikit-dev/pikit"

var repo = &repository{Type: "git", URL: "git+https://github.com/pikit-dev/pikit.git"}

// pkgDir is one package folder to pack.
type pkgDir struct{ name, dir string }

// names of the packages for scope s.
func cliName(scope string) string                       { return scope + "/cli" }
func platformName(scope string, platform string) string { return scope + "/cli-" + platform }
func binarySpec(scope string) string                    { return platformName(scope, "{platform}") + "/bin/pikit" }

// optionalDeps lists every target's per-platform package at version, built
// or not: npm skips one that is not published, and the bridge tells the
// user of that platform to build from source.
func optionalDeps(scope, version string) map[string]string {
	m := map[string]string{}
	for _, t := range Targets() {
		m[platformName(scope, t.Platform())] = version
	}
	return m
}

// writePackages writes every package folder under o.Out/npm and returns
// them in packing order: per-platform packages, Pi packages, the CLI.
func writePackages(ctx context.Context, o Options, built map[Target]string, host string) ([]pkgDir, error) {
	root := filepath.Join(o.Out, "npm")
	var out []pkgDir
	for _, t := range o.Targets {
		exe, ok := built[t]
		if !ok {
			continue
		}
		d, err := writePlatform(root, o, t, exe)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	for _, e := range Extensions() {
		d, err := writeExtension(ctx, root, o, e, host)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	d, err := writeCLI(root, o)
	if err != nil {
		return nil, err
	}
	return append(out, d), nil
}

func writePlatform(root string, o Options, t Target, exe string) (pkgDir, error) {
	name := platformName(o.Scope, t.Platform())
	dir := filepath.Join(root, "cli-"+t.Platform())
	bin, err := os.ReadFile(exe)
	if err != nil {
		return pkgDir{}, err
	}
	rel := "bin/" + t.Executable()
	if err := writeFile(filepath.Join(dir, filepath.FromSlash(rel)), bin, 0o755); err != nil {
		return pkgDir{}, err
	}
	p := packageJSON{
		Name: name, Version: o.Version, Homepage: homepage, Repository: repo,
		Description: fmt.Sprintf("The pikit binary for %s (%s), used by %s and pikit's Pi packages", t.Platform(), t, cliName(o.Scope)),
		OS:          []string{t.OS()}, CPU: []string{t.CPU()},
		Piext: &piextFacts{Sizes: map[string]int64{rel: int64(len(bin))}},
	}
	readme := fmt.Sprintf("# %s\n\nThe `pikit` binary for %s. Install %s or one of pikit's Pi packages instead: npm picks this package\nfor machines of this platform only.\n", name, t.Platform(), cliName(o.Scope))
	return pkgDir{name, dir}, writeMeta(dir, p, readme)
}

func writeExtension(ctx context.Context, root string, o Options, e Extension, host string) (pkgDir, error) {
	name := o.Scope + "/" + e.Name
	dir := filepath.Join(root, e.Name)
	cmd := exec.CommandContext(ctx, host, "ext", "pack", e.Name, dir, "--npm-binary", binarySpec(o.Scope))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return pkgDir{}, fmt.Errorf("release: pikit ext pack %s: %v\n%s", e.Name, err, stderr.String())
	}
	// piext writes 0600/0700 (a user's own folder); a published package's
	// files are for everyone who can read the install.
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	}); err != nil {
		return pkgDir{}, err
	}
	var packed struct {
		Pi json.RawMessage `json:"pi"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &packed)
	}
	if err != nil || len(packed.Pi) == 0 {
		return pkgDir{}, fmt.Errorf("release: %s: the packed package.json has no pi manifest (%v)", e.Name, err)
	}
	exports := map[string]string{"./package.json": "./package.json"}
	for k, v := range e.Exports {
		exports[k] = v
	}
	p := packageJSON{
		Name: name, Version: o.Version, Description: e.Description, Homepage: homepage, Repository: repo,
		Keywords: []string{"pi-package", "pi", "pi-extension", "pikit"},
		Exports:  exports, Pi: packed.Pi, PeerDependencies: piPeers, OptionalDependencies: optionalDeps(o.Scope, o.Version),
	}
	changelog, err := os.ReadFile(filepath.Join(o.Module, filepath.FromSlash(e.Changelog)))
	if err != nil {
		return pkgDir{}, fmt.Errorf("release: %w", err)
	}
	if err := writeFile(filepath.Join(dir, "CHANGELOG.md"), changelog, 0o644); err != nil {
		return pkgDir{}, err
	}
	var readme strings.Builder
	fmt.Fprintf(&readme, "# %s\n\n%s.\n\n    pi install npm:%s\n\n", name, e.Description, name)
	fmt.Fprintf(&readme, "Pi loads a small TypeScript bridge that runs %s's Go sidecar, the pikit binary of the package\n"+
		"%s for your platform (installed by npm with this one). Without a binary for your platform the\n"+
		"extension stays off and says how to build it from source. See %s.\n", e.Title, platformName(o.Scope, "<platform>"), homepage)
	for sub, file := range e.Exports {
		fmt.Fprintf(&readme, "\nImport `%s%s` (%s) from a companion extension that depends on this package.\n", name, strings.TrimPrefix(sub, "."), file)
	}
	return pkgDir{name, dir}, writeMeta(dir, p, readme.String())
}

func writeCLI(root string, o Options) (pkgDir, error) {
	name := cliName(o.Scope)
	dir := filepath.Join(root, "cli")
	js := strings.Replace(launcherJS, "__PIKIT_BINARY__", binarySpec(o.Scope), 1)
	if err := writeFile(filepath.Join(dir, "bin", "pikit.js"), []byte(js), 0o755); err != nil {
		return pkgDir{}, err
	}
	p := packageJSON{
		Name: name, Version: o.Version, Homepage: homepage, Repository: repo,
		Description: "pikit: the Pi coding agent in the developer's loop (browser taskbar, live endpoint, Go extensions, midcompact, StateFlow)",
		Keywords:    []string{"pi", "pikit"},
		Bin:         map[string]string{"pikit": "bin/pikit.js"}, Engines: map[string]string{"node": ">=18"},
		OptionalDependencies: optionalDeps(o.Scope, o.Version),
	}
	readme := fmt.Sprintf("# %s\n\n`npx %s --version`, `npx %s demo`: runs pikit (%s) through the binary of the\nper-platform package npm installs with this one.\n", name, name, name, homepage)
	return pkgDir{name, dir}, writeMeta(dir, p, readme)
}

// writeMeta writes package.json and README.md into dir.
func writeMeta(dir string, p packageJSON, readme string) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "package.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644)
}

func writeFile(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, data, perm); err != nil {
		return err
	}
	return os.Chmod(path, perm) // an earlier file's mode, or the umask, must not stay
}
