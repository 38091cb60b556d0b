package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version and commit are stamped by release builds (internal/release):
//
//	-ldflags "-X main.version=0.1.0 -X main.commit=<40 hex>"
//
// They stay empty in every other build, where [versionLine] reads the
// module version and VCS revision that the go command records.
var (
	version string
	commit  string
)

// versionLine is what `pikit --version` prints: [formatVersion] of the
// stamped values and this binary's build information.
func versionLine() string {
	bi, _ := debug.ReadBuildInfo()
	return formatVersion(version, commit, bi)
}

// formatVersion is the version line: the version (the npm packages'
// version in lockstep; without a stamp the module version, "v" dropped, or
// "(devel)"), the commit (without a stamp the VCS revision cut to 12 hex
// digits with "-dirty" for a modified tree, or "unknown") and the platform
// as GOOS/GOARCH, e.g. "pikit 0.1.0 (commit 0123456789ab, linux/amd64)".
// bi may be nil.
func formatVersion(v, c string, bi *debug.BuildInfo) string {
	if bi != nil {
		if v == "" {
			v = bi.Main.Version
		}
		if c == "" {
			c = vcsRevision(bi.Settings)
		}
	}
	v = strings.TrimPrefix(v, "v")
	if v == "" {
		v = "(devel)"
	}
	if c == "" {
		c = "unknown"
	}
	return fmt.Sprintf("pikit %s (commit %s, %s/%s)", v, c, runtime.GOOS, runtime.GOARCH)
}

// vcsRevision is the build's VCS revision cut to 12 hex digits, with
// "-dirty" when the tree had changes; "" without one.
func vcsRevision(settings []debug.BuildSetting) string {
	var rev string
	dirty := false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return ""
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
