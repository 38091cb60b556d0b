package runtime_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/fakepi"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// TestRuntime_MissingExecutableInstalledLater: a session left unavailable
// because the executable was not found becomes ready once the executable
// appears (Pi installed while the host runs), with no restart of the
// runtime; until then no process is started.
func TestRuntime_MissingExecutableInstalledLater(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "pi")
	r := newRuntime(t, rt.Options{Executable: exe, Args: []string{}, Env: fakepi.Config{}.Env()})
	s := waitFor(t, r, "unavailable", func(s rt.Snapshot) bool { return s.Session.Status == rt.SessionUnavailable })
	if str(s.Session.Error) != "Pi executable was not found" {
		t.Fatalf("snapshot = %s", r.Snapshot())
	}
	if pid := r.PiPID(); pid != 0 {
		t.Fatalf("a process %d runs while the executable is missing", pid)
	}
	// "Install" Pi: a launcher for this binary as the fake Pi (Windows: a
	// copy of it, found by its PATHEXT extension).
	if runtime.GOOS == "windows" {
		bin, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(exe+".exe", bin, 0o700); err != nil {
			t.Fatal(err)
		}
	} else {
		script := "#!/bin/sh\nexec " + shellQuote(os.Args[0]) + " \"$@\"\n"
		if err := os.WriteFile(exe, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s = waitFor(t, r, "ready after install", ready)
	if s.Session.ID == nil || s.Session.Error != nil {
		t.Fatalf("snapshot = %s", r.Snapshot())
	}
	if res, _ := r.Submit("p", "x"); res != rt.ResultAccepted {
		t.Fatalf("Submit after install = %s", res)
	}
}

// TestRuntime_OtherUnavailableNotReprobed: a Pi that exists but cannot
// start stays unavailable (no endless respawning).
func TestRuntime_OtherUnavailableNotReprobed(t *testing.T) {
	r := newRuntime(t, rt.Options{}, fakepi.Config{Scenario: "exit-on-start"}.Env()...)
	waitFor(t, r, "unavailable", func(s rt.Snapshot) bool { return s.Session.Status == rt.SessionUnavailable })
	ch, _ := r.Changed()
	select {
	case <-ch:
		t.Fatalf("state changed after unavailable: %s", r.Snapshot())
	case <-time.After(2*rt.ReprobeInterval + 500*time.Millisecond):
	}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
