package piext_test

import (
	"strings"
	"testing"
	"time"
)

// tmuxPi runs interactive Pi (TUI mode) with the probe extension in a
// private tmux server (pitest.StartTmux: its cleanup waits until Pi and the
// sidecar exited) and returns a function that runs tmux commands on it.
func tmuxPi(t *testing.T, p *probe) func(args ...string) string {
	t.Helper()
	tm := p.env.StartTmux(t, nil)
	return func(args ...string) string {
		if args[0] == "kill-server" {
			tm.Kill() // the test measures the exit itself
			return ""
		}
		return tm.Run(args...)
	}
}

func TestTmux_ReloadKeepsOneSidecar(t *testing.T) {
	t.Parallel()
	p := newProbe(t, nil)
	tmux := tmuxPi(t, p)
	ctx := testCtx(t)
	first := p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "hook" && r.Event == "session_start" }).Pid
	// The editor takes input once Pi has drawn; retry the command until the
	// reload shows up as the second session_start.
	deadline := time.Now().Add(60 * time.Second)
	for {
		tmux("send-keys", "-t", "pi", "/reload", "Enter")
		if waitFor(func() bool {
			for _, r := range p.records(t) {
				if r.Ev == "hook" && r.Event == "session_start" && r.Gen >= 2 {
					return true
				}
			}
			return false
		}, 10*time.Second) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session_start after /reload; screen:\n%s", tmux("capture-pane", "-p", "-t", "pi"))
		}
	}
	if got := pids(p.records(t)); len(got) != 1 || !got[first] {
		t.Errorf("sidecars after /reload = %v, want only %d", got, first)
	}
	screen := tmux("capture-pane", "-p", "-t", "pi")
	if strings.Contains(screen, "stray print") {
		t.Errorf("a sidecar print reached the terminal:\n%s", screen)
	}
	tmux("kill-server")
	killed := time.Now()
	if !waitFor(func() bool { return !alive(first) }, 5*time.Second) {
		t.Errorf("sidecar %d alive 5 s after the terminal closed", first)
	}
	t.Logf("terminal closed → sidecar gone in %v", time.Since(killed))
}

func waitFor(cond func() bool, d time.Duration) bool {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

// commandUntil types command into Pi's editor until the screen shows want:
// the editor takes input only once Pi has drawn, so the first tries may be
// lost. It fails the test after a minute.
func commandUntil(t *testing.T, tmux func(...string) string, screen func() string, command, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(screen(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never showed %q; screen:\n%s", command, want, screen())
		}
		tmux("send-keys", "-t", "pi", command, "Enter")
		waitFor(func() bool { return strings.Contains(screen(), want) }, 10*time.Second)
	}
}

func TestTmux_RemoteComponent(t *testing.T) {
	t.Parallel()
	p := newProbe(t, nil)
	tmux := tmuxPi(t, p)
	ctx := testCtx(t)
	p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "hook" && r.Event == "session_start" })
	screen := func() string { return tmux("capture-pane", "-p", "-t", "pi") }
	commandUntil(t, tmux, screen, "/probe:panel", "PROBE PANEL count=0 width=")
	for _, line := range strings.Split(screen(), "\n") {
		if len([]rune(line)) > 120 {
			t.Errorf("a line wider than the terminal: %d columns", len([]rune(line)))
		}
	}
	tmux("send-keys", "-t", "pi", "Up")
	if !waitFor(func() bool { return strings.Contains(screen(), "PROBE PANEL count=1") }, 20*time.Second) {
		t.Fatalf("Up did not reach Go; screen:\n%s", screen())
	}
	tmux("send-keys", "-t", "pi", "Up")
	waitFor(func() bool { return strings.Contains(screen(), "PROBE PANEL count=2") }, 20*time.Second)
	tmux("send-keys", "-t", "pi", "Enter")
	if !waitFor(func() bool { return strings.Contains(screen(), "panel result 2") }, 20*time.Second) {
		t.Fatalf("no result after Enter; screen:\n%s", screen())
	}
}

// TestTmux_StatusClearKeepsPiAlive sets and then clears a footer status and a
// widget from Go in interactive Pi: clearing (Go's "" and nil, JSON null)
// must reach Pi as undefined, or the footer's next render throws and Pi exits.
func TestTmux_StatusClearKeepsPiAlive(t *testing.T) {
	t.Parallel()
	p := newProbe(t, nil)
	tmux := tmuxPi(t, p)
	ctx := testCtx(t)
	p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "hook" && r.Event == "session_start" })
	screen := func() string { return tmux("capture-pane", "-p", "-t", "pi") }
	commandUntil(t, tmux, screen, "/probe:status set", "PROBE-STATUS")
	tmux("send-keys", "-t", "pi", "/probe:status clear", "Enter")
	if !waitFor(func() bool { return strings.Contains(screen(), "status cleared") }, 20*time.Second) {
		t.Fatalf("no notice after clearing; screen:\n%s", screen())
	}
	// Pi must survive the renders after the clear.
	tmux("send-keys", "-t", "pi", "x")
	waitFor(func() bool { return false }, 2*time.Second)
	got := screen()
	if strings.Contains(got, "uncaughtException") || strings.Contains(got, "TypeError") {
		t.Fatalf("Pi crashed after the status was cleared:\n%s", got)
	}
	if strings.Contains(got, "PROBE-STATUS") || strings.Contains(got, "PROBE-WIDGET") {
		t.Errorf("status or widget still shown after clearing:\n%s", got)
	}
	if out := tmux("list-panes", "-t", "pi", "-F", "#{pane_dead}"); strings.TrimSpace(out) != "0" {
		t.Errorf("Pi's pane is dead after clearing the status (%q)", out)
	}
}

// TestTmux_DialogsCancelled: Escape on each dialog kind in interactive Pi
// reads as cancelled, a confirm too (not as "No").
func TestTmux_DialogsCancelled(t *testing.T) {
	t.Parallel()
	p := newProbe(t, nil)
	tmux := tmuxPi(t, p)
	ctx := testCtx(t)
	p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "hook" && r.Event == "session_start" })
	screen := func() string { return tmux("capture-pane", "-p", "-t", "pi") }
	commandUntil(t, tmux, screen, "/probe:dialogs", "Probe confirm")
	for _, next := range []string{"Probe select", "Probe input", "Probe editor", "dialogs confirm="} {
		tmux("send-keys", "-t", "pi", "Escape")
		if !waitFor(func() bool { return strings.Contains(screen(), next) }, 20*time.Second) {
			t.Fatalf("no %q after Escape; screen:\n%s", next, screen())
		}
	}
	if want := "dialogs confirm=cancelled/false select=cancelled input=cancelled editor=cancelled"; !strings.Contains(screen(), want) {
		t.Errorf("screen lacks %q:\n%s", want, screen())
	}
}
