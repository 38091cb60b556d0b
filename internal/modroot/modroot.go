// Package modroot finds the module root: the nearest directory holding
// go.mod. Tests use it to reach files beside the checkout (the test peers
// cache .cache/testdeps, ../shared); `pikit taskbar contract` uses it for
// the default contract directory.
//
// # Example
//
//	root, err := modroot.Find(".")
//	if err != nil {
//		return err // not inside a module
//	}
//	cache := filepath.Join(root, ".cache", "testdeps")
package modroot

import (
	"errors"
	"os"
	"path/filepath"
)

// Find walks up from start (made absolute against the working directory)
// and returns the first directory that holds a go.mod file, start included.
// It fails when start cannot be made absolute or no directory up to the
// file system root holds go.mod.
func Find(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above " + start)
		}
		dir = parent
	}
}
