package host

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/pikit-dev/pikit/internal/piinstall"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/taskbar"
)

// Where a host's Pi came from, as [Mount] logs it ("pi_from").
const (
	piFromConfig = "configuration" // Config.Executable or PI_BROWSER_TASKBAR_EXECUTABLE
	piFromPath   = "PATH"
	piFromCache  = "the pikit cache (installed by `pikit demo`)"
)

// resolvePi completes s.Executable for a Go host exactly as `pikit taskbar
// proxy` and `pikit demo` find Pi: a command set in the configuration or
// PI_BROWSER_TASKBAR_EXECUTABLE as given, else `pi` on PATH at
// [piinstall.MinVersion] or newer, else the Pi that `pikit demo` installed
// in cacheDir ("" means os.UserCacheDir()/pikit). It never installs or uses
// the network. It logs once, at Info, which Pi (version, where from) and
// which project root the host uses; with no Pi it logs a Warn saying how to
// get one and leaves "pi" (package runtime looks for it again later). The
// executable and project root are logged relative to the working
// directory or home ("~/…"), never as other absolute paths.
func resolvePi(ctx context.Context, s *taskbar.Settings, configured bool, cacheDir string, log *slog.Logger) {
	root := displayPath(s.ProjectRoot)
	if configured {
		log.Info("taskbar host: using the configured Pi command", "pi_from", piFromConfig, "project_root", root)
		return
	}
	inst, err := piinstall.Find(ctx, &piinstall.Options{CacheDir: cacheDir})
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("taskbar host: Pi not found (no `pi` "+piinstall.MinVersion+" or newer on PATH, none in the pikit cache), so the taskbar shows Unavailable; "+getPi(),
				"project_root", root)
		}
		return
	}
	from := piFromPath
	if inst.Source != piinstall.SourcePath {
		from = piFromCache
		s.Executable = inst.Executable
	}
	log.Info("taskbar host: using Pi", "pi_version", inst.Version, "pi_from", from, "project_root", root)
}

// piConfigured reports whether a Pi command is set in c or the
// environment (then it is used as given).
func piConfigured(c taskbar.Config, getenv func(string) (string, bool)) bool {
	if c.Executable != "" {
		return true
	}
	_, set := getenv(taskbar.EnvExecutable)
	return set
}

// displayPath shows an absolute path relative to the working directory
// when inside it ("." or "web/app"), else relative to the home directory
// ("~/src/app"), else by its last element only.
func displayPath(p string) string {
	if p == "" {
		return ""
	}
	if wd, err := platform.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if rel, err := filepath.Rel(home, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return "…/" + filepath.Base(p)
}
