// Package install writes, reads, lists and removes Go extensions in the
// folders Pi loads extensions from, and packs them for `pi -e` and npm:
// what `pikit ext install|uninstall|list|pack` do, with their policy (an
// extension installed in one place only, a --exec program that is a real
// build declaring the name asked for, no uninstall from under a sibling
// that imports its files). Authors of extensions use piext; this package
// is for installers.
//
// # The installed folder
//
// An extension NAME lives in DIR/pikit-NAME ([Folder]): package.json
// (pi.extensions ["./index.mjs"]), the bridge index.mjs (piext/bridge), the
// extension's extra files and skills/, and last piext.json ([Record]),
// which marks the folder as ours: install, uninstall and list never touch a
// folder without it. Files are 0600, folders 0700, every file written
// atomically.
package install

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/piext/bridge"
	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// RecordFile is the file that marks a folder as ours ([Record]).
const RecordFile = wire.InstallFile

// legacyEntry is the bridge's file name in installs of earlier pikit
// versions (TypeScript, which Pi transpiles); [bridge.Entry] replaces it.
const legacyEntry = "index.ts"

// FolderPrefix prefixes an installed extension's folder: pikit-NAME.
const FolderPrefix = "pikit-"

// Manifest is what an extension declares (piext's Extension.Manifest, as
// JSON): its tools, commands and hooks, which the bridge registers before
// the program runs.
type Manifest = wire.Manifest

// Record is the content of piext.json.
type Record struct {
	Protocol int `json:"protocol"`
	// Command runs the sidecar. Command[0] is absolute (install), relative
	// to the folder (a pack), or the npm form "npm:<package>/<path>" of a
	// published Pi package ([NPMCommandPrefix]).
	Command  []string `json:"command"`
	Manifest Manifest `json:"manifest"`
	// Source, in the npm form only, says how to build the sidecar from
	// source; the bridge shows it when no binary exists for the platform.
	Source string `json:"source,omitempty"`
}

// Errors of install, uninstall and pack.
var (
	ErrNotOurs        = errors.New("install: folder exists without our piext.json; not touching it")
	ErrNotInstalled   = errors.New("install: not installed")
	ErrTempExecutable = errors.New("install: the executable is a temporary build of go run or go test; build it (go build / go install) and install again")
)

// Options describe one installation.
type Options struct {
	// Dir is the extensions directory (<agentDir>/extensions or
	// <project>/.pi/extensions); the folder pikit-NAME is made in it.
	Dir string
	// Command runs the sidecar; Command[0] must be absolute.
	Command []string
	// Manifest is the extension's manifest as JSON (piext's
	// Extension.Manifest, or what a program prints for its manifest flag).
	Manifest json.RawMessage
	// Skills, when set, is copied into the folder's skills/.
	Skills fs.FS
}

// CheckExecutable refuses the temporary binaries of go run and go test,
// which vanish when they exit.
func CheckExecutable(path string) error {
	base := filepath.Base(path)
	switch {
	case strings.HasSuffix(base, ".test"):
		return fmt.Errorf("%w (%s is a go test binary)", ErrTempExecutable, base)
	case strings.Contains(filepath.ToSlash(path), "/go-build"):
		return fmt.Errorf("%w (this %s is in a go-build temporary folder)", ErrTempExecutable, base)
	}
	return nil
}

// Folder returns the folder an extension NAME installs to in dir.
func Folder(dir, name string) string { return filepath.Join(dir, FolderPrefix+name) }

// Write writes (or rewrites) the folder: package.json (pi.extensions),
// the bridge index.mjs, skills/ and last piext.json, and returns its path.
// It is idempotent and refuses a folder that exists without our
// piext.json ([ErrNotOurs]). Files are 0600, the folder 0700; every file
// is written atomically.
func Write(o Options) (string, error) {
	if len(o.Command) == 0 || !filepath.IsAbs(o.Command[0]) {
		return "", errors.New("install: the command must start with an absolute path")
	}
	m, err := ParseManifest(o.Manifest)
	if err != nil {
		return "", err
	}
	return writeFolder(Folder(o.Dir, m.Name), Record{Command: o.Command, Manifest: m}, o.Skills, true)
}

// ParseManifest decodes a manifest (strictly: exact member names, no
// duplicates) and checks its name.
func ParseManifest(raw json.RawMessage) (Manifest, error) {
	var m Manifest
	if err := wire.Decode(raw, &m); err != nil {
		return m, fmt.Errorf("install: manifest: %w", err)
	}
	if !namePattern.MatchString(m.Name) {
		return m, fmt.Errorf("install: manifest: extension name %q is not [a-z0-9-]+", m.Name)
	}
	return m, nil
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// writeFolder writes the folder for in (its Protocol set here).
func writeFolder(dir string, in Record, skills fs.FS, check bool) (string, error) {
	m := in.Manifest
	if check {
		if err := checkOurs(dir, true); err != nil {
			return "", err
		}
	}
	if err := durable.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	pkg, _ := json.MarshalIndent(map[string]any{
		"name": FolderPrefix + m.Name, "private": true, "description": "pikit Go extension " + m.Name + " (written by pikit ext install)",
		"pi": map[string]any{"extensions": []string{"./" + bridge.Entry}},
	}, "", "  ")
	in.Protocol = wire.ProtocolVersion
	inst, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return "", err
	}
	files := []durable.File{
		{Path: filepath.Join(dir, "package.json"), Data: append(pkg, '\n'), Perm: 0o600},
		{Path: filepath.Join(dir, bridge.Entry), Data: bridge.Source, Perm: 0o600},
	}
	if err := removeStaleFiles(dir, m.Files); err != nil {
		return "", err
	}
	for _, p := range sortedKeys(m.Files) {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := durable.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			return "", err
		}
		files = append(files, durable.File{Path: f, Data: []byte(m.Files[p]), Perm: 0o600})
	}
	if err := durable.WriteFiles(files); err != nil {
		return "", err
	}
	// An install before the bridge was JavaScript has index.ts: it is
	// removed, so the folder holds one bridge.
	if err := os.Remove(filepath.Join(dir, legacyEntry)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.RemoveAll(filepath.Join(dir, "skills")); err != nil {
		return "", err
	}
	if skills != nil {
		if err := copyFS(filepath.Join(dir, "skills"), skills); err != nil {
			return "", err
		}
	}
	// piext.json last: a folder is complete once it is there.
	if err := durable.WriteFile(filepath.Join(dir, RecordFile), append(inst, '\n'), 0o600); err != nil {
		return "", err
	}
	return dir, nil
}

func copyFS(dst string, src fs.FS) error {
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		if d.IsDir() {
			return durable.MkdirAll(target, 0o700)
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		return durable.WriteFile(target, b, 0o600)
	})
}

// checkOurs: a folder that does not exist is fine when missingOK; one that
// exists must hold our piext.json.
func checkOurs(dir string, missingOK bool) error {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if missingOK {
			return nil
		}
		return fmt.Errorf("%w: %s", ErrNotInstalled, filepath.Base(dir))
	}
	if _, err := Read(dir); err != nil {
		return fmt.Errorf("%w: %s", ErrNotOurs, filepath.Base(dir))
	}
	return nil
}

// Read reads a folder's piext.json.
func Read(dir string) (*Record, error) {
	b, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if err != nil {
		return nil, err
	}
	var in Record
	if err := wire.Decode(b, &in); err != nil {
		return nil, fmt.Errorf("install: %s: %w", RecordFile, err)
	}
	if in.Manifest.Name == "" || len(in.Command) == 0 {
		return nil, fmt.Errorf("install: %s: no name or command", RecordFile)
	}
	return &in, nil
}

// Uninstall removes what install wrote in dir's pikit-NAME and then the
// folder when nothing else is left in it. It refuses a folder without our
// piext.json.
func Uninstall(dir, name string) error {
	f := Folder(dir, name)
	if err := checkOurs(f, false); err != nil {
		return err
	}
	in, err := Read(f)
	if err != nil {
		return err
	}
	// piext.json first: a half-removed folder is no longer an installation.
	for _, p := range []string{RecordFile, bridge.Entry, legacyEntry, "package.json", "skills", "bin"} {
		if err := os.RemoveAll(filepath.Join(f, p)); err != nil {
			return err
		}
	}
	files, dirs := extraFiles(in.Manifest.Files)
	for _, p := range files {
		if err := os.Remove(filepath.Join(f, p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for _, d := range dirs {
		_ = os.Remove(filepath.Join(f, d)) // kept when something else is in it
	}
	if err := os.Remove(f); err != nil {
		return fmt.Errorf("install: uninstall: other files are left in %s: %w", filepath.Base(f), err)
	}
	return durable.SyncDir(dir)
}

// Installed is one row of [List].
type Installed struct {
	Name    string
	Dir     string
	Command []string
	// CommandOK is false when Command[0] no longer exists or is not
	// executable.
	CommandOK bool
	// Files are the relative paths of the extra files installed beside the
	// bridge (piext's Extension.Files), sorted.
	Files []string
}

// List returns the pikit-* folders with our piext.json in dir, by name.
func List(dir string) ([]Installed, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Installed
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), FolderPrefix) {
			continue
		}
		f := filepath.Join(dir, e.Name())
		in, err := Read(f)
		if err != nil {
			continue
		}
		exe := in.Command[0]
		if !filepath.IsAbs(exe) {
			exe = filepath.Join(f, exe)
		}
		st, err := os.Stat(exe)
		out = append(out, Installed{Name: in.Manifest.Name, Dir: f, Command: in.Command, CommandOK: err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0, Files: sortedKeys(in.Manifest.Files)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Pack writes a self-contained package into dir: the executable copied to
// dir/bin/, a command relative to dir, the bridge and package.json, so that
// `pi -e dir` loads it. args follow the executable in the command; manifest
// and skills are as in [Options].
func Pack(dir, executable string, args []string, manifest json.RawMessage, skills fs.FS) error {
	if err := CheckExecutable(executable); err != nil {
		return err
	}
	m, err := ParseManifest(manifest)
	if err != nil {
		return err
	}
	if err := checkPackDir(dir); err != nil {
		return err
	}
	bin := filepath.Join(dir, "bin")
	if err := durable.MkdirAll(bin, 0o700); err != nil {
		return err
	}
	src, err := os.Open(executable)
	if err != nil {
		return err
	}
	defer src.Close()
	data, err := io.ReadAll(src)
	if err != nil {
		return err
	}
	rel := "bin/" + filepath.Base(executable)
	if err := durable.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), data, 0o700); err != nil {
		return err
	}
	_, err = writeFolder(dir, Record{Command: append([]string{rel}, args...), Manifest: m}, skills, false)
	return err
}

// checkPackDir accepts a missing or empty dir or one with our piext.json.
func checkPackDir(dir string) error {
	if err := checkOurs(dir, true); err != nil {
		if ents, rerr := os.ReadDir(dir); rerr != nil || len(ents) > 0 {
			return err
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// extraFiles lists the folder-relative paths of an installation's extra
// files and, deepest first, the folders they are in, for removal. Paths
// that do not match the file pattern (a hand-edited piext.json) are left.
func extraFiles(files map[string]string) (out, dirs []string) {
	seen := map[string]bool{}
	for _, p := range sortedKeys(files) {
		if !wire.FilePattern.MatchString(p) || path.Clean(p) != p {
			continue
		}
		out = append(out, filepath.FromSlash(p))
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if !seen[d] {
				seen[d] = true
				dirs = append(dirs, filepath.FromSlash(d))
			}
		}
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	return out, dirs
}

// removeStaleFiles removes the extra files an earlier installation in dir
// wrote that the new manifest no longer has.
func removeStaleFiles(dir string, next map[string]string) error {
	old, err := Read(dir)
	if err != nil {
		return nil // a new folder, or not ours (checked before)
	}
	for _, p := range sortedKeys(old.Manifest.Files) {
		if _, keep := next[p]; keep || !wire.FilePattern.MatchString(p) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// InstalledFiles returns the absolute paths of an installation's extra
// files (piext's Extension.Files) by relative path, for `pikit ext list`.
func (in Installed) InstalledFiles() map[string]string {
	out := make(map[string]string, len(in.Files))
	for _, p := range in.Files {
		out[p] = filepath.Join(in.Dir, filepath.FromSlash(p))
	}
	return out
}
