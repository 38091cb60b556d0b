package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/piext"
)

// maxScanFile bounds the bytes of one sibling file [importers] reads.
const maxScanFile = 4 << 20

// importers lists, by base name and sorted, the entries of the extensions
// dir whose .ts/.js/.mjs files mention "pikit-NAME/<file>" for one of files
// (an installation's extra files, [piext.Manifest.Files]): a sibling
// extension that imports them by a relative or absolute path. The
// extension's own folder and node_modules folders are not read; symlinks
// are not followed; unreadable files are skipped.
func importers(dir, name string, files []string) ([]string, error) {
	if len(files) == 0 {
		return nil, nil
	}
	own := piext.FolderPrefix + name
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
	sort.Strings(out)
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

// displayPath shows p as ~/... under the home directory or relative to the
// current directory when inside it, so messages carry no absolute path
// where a shorter one exists.
func displayPath(p string) string {
	if wd, err := platform.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return r
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if r, err := filepath.Rel(home, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return filepath.Join("~", r)
		}
	}
	return p
}

// checkExecFlag says plainly when --exec names no file or not an
// executable one.
func checkExecFlag(p string) error {
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--exec %s: no such file", p)
	}
	if err != nil {
		return fmt.Errorf("--exec %s: %w", p, err)
	}
	if !platform.IsExecutable(p, st) {
		return fmt.Errorf("--exec %s: is not an executable file", p)
	}
	return nil
}
