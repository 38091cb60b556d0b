package browsertest

import (
	"os"
	"path/filepath"
	"testing"
)

// Screenshot saves a PNG of the viewport as dir/name and returns its path.
func Screenshot(t testing.TB, tab *Tab, dir, name string) string {
	t.Helper()
	png, err := tab.d.screenshot(tab.ctx)
	if err != nil {
		t.Fatalf("%s: screenshot: %v", tab.Engine, err)
	}
	path := filepath.Join(dir, name)
	Must(t, os.WriteFile(path, png, 0o600))
	return path
}

// ScreenshotDir is $PIKIT_SCREENSHOT_DIR (created 0700), else a test temp
// dir.
func ScreenshotDir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("PIKIT_SCREENSHOT_DIR"); dir != "" {
		Must(t, os.MkdirAll(dir, 0o700))
		return dir
	}
	return t.TempDir()
}
