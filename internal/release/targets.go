package release

import "strings"

// Target is one GOOS/GOARCH the release builds.
type Target struct {
	GOOS, GOARCH string
}

// Targets returns the five release targets: darwin/arm64, darwin/amd64,
// linux/amd64, linux/arm64, windows/amd64.
func Targets() []Target {
	return []Target{{"darwin", "arm64"}, {"darwin", "amd64"}, {"linux", "amd64"}, {"linux", "arm64"}, {"windows", "amd64"}}
}

// ParseTarget reads "GOOS/GOARCH".
func ParseTarget(s string) (Target, bool) {
	goos, goarch, ok := strings.Cut(s, "/")
	if !ok || goos == "" || goarch == "" || strings.Contains(goarch, "/") {
		return Target{}, false
	}
	return Target{goos, goarch}, true
}

func (t Target) String() string { return t.GOOS + "/" + t.GOARCH }

// OS is the target's name in npm's os field (Node's process.platform).
func (t Target) OS() string {
	if t.GOOS == "windows" {
		return "win32"
	}
	return t.GOOS
}

// CPU is the target's name in npm's cpu field (Node's process.arch).
func (t Target) CPU() string {
	switch t.GOARCH {
	case "amd64":
		return "x64"
	case "386":
		return "ia32"
	}
	return t.GOARCH
}

// Platform is OS-CPU, e.g. linux-x64: the suffix of the per-platform
// package's name and what the bridge's {platform} becomes on that machine.
func (t Target) Platform() string { return t.OS() + "-" + t.CPU() }

// Executable is the binary's file name: pikit, or pikit.exe on Windows.
func (t Target) Executable() string {
	if t.GOOS == "windows" {
		return "pikit.exe"
	}
	return "pikit"
}
