package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/piext"
)

// Target is where an install or uninstall acts, as `pikit ext` resolved it
// from its flags. The zero Display shows paths as they are.
type Target struct {
	// Dir is the extensions folder acted on: <agentDir>/extensions, or a
	// project's .pi/extensions.
	Dir string
	// Other is the other extensions folder Pi loads from for the same
	// project (the agent dir's for a project install, the project's for an
	// agent-dir install); "" skips the check that an extension is installed
	// in one place only.
	Other string
	// Project is true when Dir is a project's .pi/extensions: an uninstall
	// that leaves it empty removes it and then an empty .pi (Pi asks to
	// trust a project folder on every start while it has a .pi folder).
	Project bool
	// Display shows a path in messages (e.g. relative to the current
	// directory or ~/); nil shows it as it is.
	Display func(path string) string
}

func (t Target) display(p string) string {
	if t.Display == nil {
		return p
	}
	return t.Display(p)
}

// ConflictError refuses an install of an extension that the other place
// Pi loads from already has: Pi would load both and refuse to start, their
// tools conflicting.
type ConflictError struct {
	Name    string
	Other   string // the folder that has it, as Target.Display shows it
	Project bool   // the other folder is a project's
}

func (e *ConflictError) Error() string {
	undo := "pikit ext uninstall " + e.Name
	if e.Project {
		undo += " --project"
	}
	return fmt.Sprintf("%s is already installed in %s; Pi would load both and refuse to start (their tools conflict): run %s first", e.Name, e.Other, undo)
}

// ToolConflictError refuses an install of an extension with a tool that
// another installed extension (in the same folder, or in the other place Pi
// loads from) already registers: Pi would refuse to start, with "Tool
// \"TOOL\" conflicts with PATH".
type ToolConflictError struct {
	Name    string // the extension being installed
	Tool    string
	Owner   string // the installed extension that has Tool
	Dir     string // Owner's folder, as Target.Display shows it
	Project bool   // Dir is a project's
}

func (e *ToolConflictError) Error() string {
	undo := "pikit ext uninstall " + e.Owner
	if e.Project {
		undo += " --project"
	}
	return fmt.Sprintf("%s's tool %q is already a tool of %s (in %s); Pi would load both and refuse to start (Tool %q conflicts with ...): rename the tool or run %s first", e.Name, e.Tool, e.Owner, e.Dir, e.Tool, undo)
}

// ImportedError refuses an uninstall of an extension whose extra files
// other extensions in the same folder import: Pi could no longer start.
type ImportedError struct {
	Name      string
	Dir       string   // as Target.Display shows it
	Importers []string // the importing entries' base names, sorted
}

func (e *ImportedError) Error() string {
	return fmt.Sprintf("cannot uninstall %s: other extensions in %s import its files: %s; remove them first or pass --force", e.Name, e.Dir, strings.Join(e.Importers, ", "))
}

// NotInstalledError is an uninstall of an extension the folder does not
// have; errors.Is(err, [ErrNotInstalled]) holds.
type NotInstalledError struct {
	Name string
	Dir  string // as Target.Display shows it
}

func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("%s is not installed (in %s)", e.Name, e.Dir)
}

// Is makes errors.Is(err, ErrNotInstalled) hold.
func (e *NotInstalledError) Is(target error) bool { return target == ErrNotInstalled }

// ProgramError says why a program given to install (`--exec PATH`) cannot
// be one: Path is as given.
type ProgramError struct {
	Path    string
	Problem string // "no such file", "is not an executable file", ...
	Err     error  // the underlying error, if any
}

func (e *ProgramError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Path, e.Problem, e.Err)
	}
	return e.Path + ": " + e.Problem
}

func (e *ProgramError) Unwrap() error { return e.Err }

// ManifestTimeout bounds how long [ReadManifest] waits for a program.
const ManifestTimeout = 10 * time.Second

// Program installs the extension program at path (a build of a main that
// calls piext.Main) into t.Dir as name, and returns the installed folder.
// It refuses, in order: an extension t.Other has too (*[ConflictError]),
// then what [ProgramManifest] refuses, then a tool another installed
// extension has (*[ToolConflictError]). Symlinks in path are resolved: the
// installation runs the file itself.
func Program(ctx context.Context, t Target, name, path string) (string, error) {
	if err := t.checkConflict(name); err != nil {
		return "", err
	}
	exe, raw, err := ProgramManifest(ctx, name, path)
	if err != nil {
		return "", err
	}
	if err := t.checkTools(raw); err != nil {
		return "", err
	}
	return Write(Options{Dir: t.Dir, Command: []string{exe}, Manifest: raw})
}

// ProgramManifest reads the manifest of the extension program at path and
// returns the program's absolute path, symlinks resolved, and the manifest
// as JSON. It refuses, in order: a path that is no executable file
// (*[ProgramError]), a temporary build of go run or go test
// ([ErrTempExecutable]), a program whose manifest does not declare name.
// [Program] installs what it returns; `pikit ext pack NAME DIR --exec PATH`
// packs it ([Pack], [PackNPM]).
func ProgramManifest(ctx context.Context, name, path string) (exe string, manifest json.RawMessage, err error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, &ProgramError{Path: path, Problem: "no such file"}
	case err != nil:
		return "", nil, &ProgramError{Path: path, Problem: "cannot stat", Err: err}
	case !platform.IsExecutable(path, st):
		return "", nil, &ProgramError{Path: path, Problem: "is not an executable file"}
	}
	exe, err = filepath.Abs(path)
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", nil, err
	}
	if err := CheckExecutable(exe); err != nil {
		return "", nil, err
	}
	raw, err := ReadManifest(ctx, exe)
	if err != nil {
		return "", nil, err
	}
	m, err := ParseManifest(raw)
	if err != nil {
		return "", nil, fmt.Errorf("read the manifest of %s: %w", filepath.Base(exe), err)
	}
	if m.Name != name {
		return "", nil, fmt.Errorf("%s declares the extension %q, not %q", filepath.Base(exe), m.Name, name)
	}
	return exe, raw, nil
}

// Extension installs ext, run by command (Command[0] absolute, e.g. a
// pikit binary with "ext", "run", NAME), into t.Dir and returns the
// installed folder. It refuses an extension t.Other has too
// (*[ConflictError]), then a tool another installed extension has
// (*[ToolConflictError]), then a Command[0] that is a temporary build of
// go run or go test ([ErrTempExecutable]); ext.Manifest panics on a
// malformed extension.
func Extension(t Target, ext *piext.Extension, command []string) (string, error) {
	if err := t.checkConflict(ext.Name); err != nil {
		return "", err
	}
	m := ext.Manifest()
	if err := t.checkTools(m); err != nil {
		return "", err
	}
	if len(command) > 0 {
		if err := CheckExecutable(command[0]); err != nil {
			return "", err
		}
	}
	return Write(Options{Dir: t.Dir, Command: command, Manifest: m, Skills: ext.Skills})
}

// checkConflict refuses name when t.Other has an installation of it.
func (t Target) checkConflict(name string) error {
	if t.Other == "" {
		return nil
	}
	if _, err := Read(Folder(t.Other, name)); err != nil {
		return nil
	}
	return &ConflictError{Name: name, Other: t.display(t.Other), Project: !t.Project}
}

// checkTools refuses a manifest (JSON) with a tool that an extension
// installed in t.Dir under another name, or in t.Other, registers too (Pi
// refuses to start when two extensions register one tool name). Only
// pikit's installations are known; a folder it cannot read is skipped,
// as checkConflict skips one.
func (t Target) checkTools(raw json.RawMessage) error {
	m, err := ParseManifest(raw)
	if err != nil {
		return err
	}
	for _, place := range []struct {
		dir     string
		project bool
	}{{t.Dir, t.Project}, {t.Other, !t.Project}} {
		if place.dir == "" {
			continue
		}
		installed, err := List(place.dir)
		if err != nil {
			continue
		}
		for _, in := range installed {
			if place.dir == t.Dir && in.Name == m.Name {
				continue // replaced by this install
			}
			rec, err := Read(in.Dir)
			if err != nil {
				continue
			}
			for _, tool := range m.Tools {
				for _, theirs := range rec.Manifest.Tools {
					if theirs.Name == tool.Name {
						return &ToolConflictError{Name: m.Name, Tool: tool.Name, Owner: in.Name, Dir: t.display(place.dir), Project: place.project}
					}
				}
			}
		}
	}
	return nil
}

// ReadManifest runs exe with piext.ManifestFlag, for at most
// [ManifestTimeout], and returns the manifest it prints (its last line of
// output, so a library's stray print before it does no harm).
func ReadManifest(ctx context.Context, exe string) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, ManifestTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, piext.ManifestFlag).Output()
	if err != nil {
		return nil, fmt.Errorf("read the manifest of %s: %w", filepath.Base(exe), err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := json.RawMessage(lines[len(lines)-1])
	if !json.Valid(last) {
		return nil, fmt.Errorf("read the manifest of %s: its last line of output is not JSON", filepath.Base(exe))
	}
	return last, nil
}

// Remove uninstalls name from t.Dir ([Uninstall]) and, for a project, the
// then empty .pi/extensions and .pi. When other extensions in t.Dir
// import files the installation wrote ([Importers]), it refuses
// (*[ImportedError]) unless force; it returns the importers either way.
// An extension t.Dir does not have is a *[NotInstalledError].
func Remove(t Target, name string, force bool) (importers []string, err error) {
	if in, err := Read(Folder(t.Dir, name)); err == nil {
		files := make([]string, 0, len(in.Manifest.Files))
		for p := range in.Manifest.Files {
			files = append(files, p)
		}
		if importers, err = Importers(t.Dir, name, files); err != nil {
			return nil, err
		}
	}
	if len(importers) > 0 && !force {
		return importers, &ImportedError{Name: name, Dir: t.display(t.Dir), Importers: importers}
	}
	if err := Uninstall(t.Dir, name); err != nil {
		if errors.Is(err, ErrNotInstalled) {
			return importers, &NotInstalledError{Name: name, Dir: t.display(t.Dir)}
		}
		return importers, err
	}
	if t.Project && os.Remove(t.Dir) == nil {
		os.Remove(filepath.Dir(t.Dir))
	}
	return importers, nil
}

// maxScanFile bounds the bytes of one sibling file [Importers] reads.
const maxScanFile = 4 << 20

// Importers lists, by base name and sorted, the entries of the extensions
// folder dir whose .ts/.js/.mjs files mention "pikit-NAME/<file>" for one
// of files (an installation's extra files): a sibling extension that
// imports them by a relative or absolute path. The extension's own folder
// and node_modules folders are not read; symlinks are not followed;
// unreadable files are skipped; each file is read up to 4 MiB.
func Importers(dir, name string, files []string) ([]string, error) {
	if len(files) == 0 {
		return nil, nil
	}
	own := FolderPrefix + name
	needles := make([]string, len(files))
	for i, f := range files {
		needles[i] = own + "/" + f
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Name() == own {
			continue
		}
		found := false
		_ = filepath.WalkDir(filepath.Join(dir, e.Name()), func(p string, d fs.DirEntry, err error) error {
			if err != nil || found {
				return nil
			}
			if d.IsDir() {
				if d.Name() == "node_modules" {
					return fs.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && scriptFile(d.Name()) && mentions(p, needles) {
				found = true
				return fs.SkipAll
			}
			return nil
		})
		if found {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

func scriptFile(name string) bool {
	switch filepath.Ext(name) {
	case ".ts", ".js", ".mjs":
		return true
	}
	return false
}

// mentions reports whether the file at p (its first maxScanFile bytes)
// contains one of needles.
func mentions(p string, needles []string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxScanFile))
	s := string(b)
	for _, nd := range needles {
		if strings.Contains(s, nd) {
			return true
		}
	}
	return false
}
