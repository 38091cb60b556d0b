package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestVersion: `pikit --version` prints one line with the version, the
// commit and the platform; release builds stamp version and commit, other
// builds fall back to the go command's build information.
func TestVersion(t *testing.T) {
	out, _, err := runPikit(t, "", "--version")
	if err != nil || out != versionLine()+"\n" {
		t.Fatalf("--version: %q %v", out, err)
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "fedcba9876543210fedcba9876543210fedcba98"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		version, commit string
		bi              *debug.BuildInfo
		want            string
	}{
		{"0.1.0", "0123456789abcdef0123456789abcdef01234567", vcs, "pikit 0.1.0 (commit 0123456789abcdef0123456789abcdef01234567, " + platform + ")"},
		{"", "", vcs, "pikit 0.2.0 (commit fedcba987654-dirty, " + platform + ")"},
		{"", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "pikit (devel) (commit unknown, " + platform + ")"},
		{"", "", nil, "pikit (devel) (commit unknown, " + platform + ")"},
	} {
		if got := formatVersion(c.version, c.commit, c.bi); got != c.want {
			t.Errorf("formatVersion(%q, %q) = %q, want %q", c.version, c.commit, got, c.want)
		}
	}
}

func TestVCSRevision(t *testing.T) {
	for _, c := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{nil, ""},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}}, "0123456789ab"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}, "0123456789ab-dirty"},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, ""},
	} {
		if got := vcsRevision(c.settings); got != c.want {
			t.Errorf("vcsRevision(%v) = %q, want %q", c.settings, got, c.want)
		}
	}
}
