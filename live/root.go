package live

import (
	"fmt"
	"path/filepath"

	"github.com/pikit-dev/pikit/internal/platform"
)

// DefaultRoot is the project's endpoint root, relative to the project
// directory (the working directory of `pikit live` and of Pi), when no
// --root names one.
const DefaultRoot = ".pikit/live"

// ResolveRoot is the one root rule of `pikit live` and the live extension:
// root (a --root value; "" means [DefaultRoot]) taken against cwd when
// relative, as the path Pi would report after changing there
// ([platform.CanonicalPath]: absolute, symlinks resolved, ".." after
// resolving; a missing tail is kept, the root need not exist yet). cwd ""
// means this process's working directory as Pi reports its own
// ([platform.Getwd], the physical path, not $PWD), so a CLI run in a
// directory and a Pi started there resolve one root to the same path.
func ResolveRoot(cwd, root string) (string, error) {
	if root == "" {
		root = DefaultRoot
	}
	if !filepath.IsAbs(root) {
		if cwd == "" {
			wd, err := platform.Getwd()
			if err != nil {
				return "", fmt.Errorf("live: resolve root: %w", err)
			}
			cwd = wd
		}
		// Not Join: a ".." in root must follow the symlinks before it.
		root = cwd + string(filepath.Separator) + root
	}
	abs, err := platform.CanonicalPath(root)
	if err != nil {
		return "", fmt.Errorf("live: resolve root: %w", err)
	}
	return abs, nil
}
