package install

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
)

// NPMCommandPrefix starts the npm form of a command (a published Pi
// package): Command[0] is "npm:<package>/<path>", the executable at <path>
// inside the npm package <package>. The bridge finds that package with
// Node's module resolution from its own folder, at every sidecar start, the
// way a per-platform optionalDependency of the Pi package is found; it
// replaces [PlatformPlaceholder] in <package> and appends ".exe" to <path>
// on Windows. The bridge also reads two optional facts: the Pi package's
// package.json optionalDependencies[<package>] (the version it needs) and
// the binary package's "piext": {"sizes": {"<path>": bytes}} (to tell a
// truncated file).
const NPMCommandPrefix = "npm:"

// PlatformPlaceholder in an npm command's package name stands for the
// platform as npm's os and cpu fields name it: process.platform + "-" +
// process.arch (darwin-arm64, darwin-x64, linux-x64, linux-arm64,
// win32-x64).
const PlatformPlaceholder = "{platform}"

// npmBinary is "<package>/<path>": an npm package name (scoped or not,
// lowercase, may hold {platform}) and a relative path of plain segments.
var npmBinary = regexp.MustCompile(`^(@[a-z0-9{}][a-z0-9._{}-]*/)?[a-z0-9{}][a-z0-9._{}-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)+$`)

// NPMPackOptions describe a Pi package whose sidecar comes from a
// per-platform npm package ([PackNPM]).
type NPMPackOptions struct {
	// Binary is "<package>/<path>", e.g. "@pikit/cli-{platform}/bin/pikit"
	// (see [NPMCommandPrefix]).
	Binary string
	// Args follow the executable in the command.
	Args []string
	// Manifest is the extension's manifest as JSON (see [Options]).
	Manifest json.RawMessage
	// Skills, when set, is copied into the folder's skills/.
	Skills fs.FS
	// Source says how to build the sidecar from source (one line); the
	// bridge shows it on a platform without a binary. Empty: nothing is
	// said.
	Source string
}

// PackNPM writes a Pi package into dir for publishing on npm: the bridge,
// a piext.json whose command is the npm form of o.Binary, skills and the
// extension's extra files. No executable is copied. The package.json it
// writes is the minimal one (a name and the pi manifest); the publisher
// writes its npm fields (name, version, dependencies) over it, keeping the
// "pi" member. dir must be missing, empty or an earlier pack.
func PackNPM(dir string, o NPMPackOptions) error {
	if !npmBinary.MatchString(o.Binary) || strings.Contains(o.Binary, "/../") || strings.Contains(o.Binary, "/./") {
		return fmt.Errorf("install: pack: binary %q is not <npm package>/<relative path>", o.Binary)
	}
	if strings.ContainsAny(o.Source, "\n\r") {
		return fmt.Errorf("install: pack: the source hint must be one line")
	}
	if err := checkPackDir(dir); err != nil {
		return err
	}
	m, err := ParseManifest(o.Manifest)
	if err != nil {
		return err
	}
	in := Record{Command: append([]string{NPMCommandPrefix + o.Binary}, o.Args...), Manifest: m, Source: o.Source}
	_, err = writeFolder(dir, in, o.Skills, false)
	return err
}
