package extension

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/strictjson"
	"github.com/pikit-dev/pikit/live"
)

// rootFileName is the project's pointer to the root its last /live:start
// used, under <cwd>/.pikit/: {"root": "<absolute path>"}, 0600 in a 0700
// directory, written with internal/durable. A restarted Pi attaches to
// that root (when its session is unfinished), so a root given with --root
// is found again; without the file the root is [live.DefaultRoot].
const rootFileName = "live-root.json"

// maxRootFile bounds the pointer file read (a path and a little JSON).
const maxRootFile = 64 << 10

// errBadRootFile is every pointer file that names no usable root.
var errBadRootFile = errors.New("live: malformed " + rootFileName)

type rootFile struct {
	Root string `json:"root"`
}

// rootFilePath is the pointer file of the project in cwd.
func rootFilePath(cwd string) string {
	return filepath.Join(cwd, filepath.Dir(live.DefaultRoot), rootFileName)
}

// parseRootFile decodes a pointer file: one JSON object whose only member
// "root" is an absolute, clean path without NUL, at most maxRootFile bytes.
func parseRootFile(data []byte) (string, error) {
	var f rootFile
	if err := strictjson.Unmarshal(data, &f, &strictjson.Policy{MaxBytes: maxRootFile, RejectUnknownMembers: true}); err != nil {
		return "", fmt.Errorf("%w: %v", errBadRootFile, err)
	}
	if f.Root == "" || !filepath.IsAbs(f.Root) || filepath.Clean(f.Root) != f.Root || strings.ContainsRune(f.Root, 0) {
		return "", fmt.Errorf("%w: root is not an absolute clean path", errBadRootFile)
	}
	return f.Root, nil
}

// projectRoot is the root of the project in cwd: the one its pointer file
// names, else [live.DefaultRoot] there (a missing or malformed pointer).
func projectRoot(cwd string) (string, error) {
	data, err := os.ReadFile(rootFilePath(cwd))
	if err == nil {
		if root, err := parseRootFile(data); err == nil {
			return root, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("live: read %s: %w", rootFileName, err)
	}
	return live.ResolveRoot(cwd, "")
}

// writeRootFile records root as the project's root in cwd.
func writeRootFile(cwd, root string) error {
	path := rootFilePath(cwd)
	if err := durable.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("live: record the root: %w", err)
	}
	data, err := json.Marshal(rootFile{Root: root})
	if err != nil {
		return err
	}
	if err := durable.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("live: record the root: %w", err)
	}
	return nil
}
