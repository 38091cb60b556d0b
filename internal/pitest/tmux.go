package pitest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TmuxOptions configure [Env.StartTmux]; nil means defaults.
type TmuxOptions struct {
	// Width and Height of the terminal in cells; zero means 120×40.
	Width, Height int
	// Env is extra environment ("K=V") for Pi, after the Env's own.
	Env []string
	// Args follow the Env's args on Pi's command line.
	Args []string
}

// Tmux is interactive Pi (TUI mode) of an [Env] in a private tmux server
// (its own socket), in a window named "pi".
type Tmux struct {
	t    testing.TB
	env  *Env
	sock string
}

// tmuxSockets numbers the servers of this process.
var tmuxSockets atomic.Uint64

// StartTmux starts interactive Pi of this environment in a new private
// tmux server. Its cleanup ends the server (Pi gets the terminal's hangup)
// and then waits until every process of the environment has exited
// ([Env.WaitExited]), before temp dirs made earlier in the test are
// removed. Without tmux the test is skipped, or fails under CI=true.
func (e *Env) StartTmux(t testing.TB, opts *TmuxOptions) *Tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		MissingPeer(t, "pitest: tmux not installed")
	}
	if opts == nil {
		opts = &TmuxOptions{}
	}
	w, h := opts.Width, opts.Height
	if w == 0 {
		w = 120
	}
	if h == 0 {
		h = 40
	}
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	var sh strings.Builder
	sh.WriteString("#!/bin/sh\n")
	for _, kv := range append(append([]string(nil), e.Env...), opts.Env...) {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&sh, "export %s=%s\n", k, quote(v))
	}
	fmt.Fprintf(&sh, "cd %s\nexec %s", quote(e.Dir), quote(e.Executable))
	for _, a := range append(append([]string(nil), e.Args...), opts.Args...) {
		sh.WriteString(" " + quote(a))
	}
	sh.WriteString("\n")
	script := filepath.Join(t.TempDir(), "run-pi")
	if err := os.WriteFile(script, []byte(sh.String()), 0o700); err != nil {
		t.Fatalf("pitest: %v", err)
	}
	tm := &Tmux{t: t, env: e, sock: fmt.Sprintf("pikit-pitest-%d-%d", os.Getpid(), tmuxSockets.Add(1))}
	t.Cleanup(tm.Close)
	tm.Run("new-session", "-d", "-s", "pi", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), script)
	return tm
}

// Run runs a tmux command on this server and returns its output; a failure
// fails the test.
func (tm *Tmux) Run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("pitest: tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Kill ends the server (Pi gets the terminal's hangup) without waiting for
// Pi to exit; an ended server is fine. The cleanup still waits.
func (tm *Tmux) Kill() {
	_ = exec.Command("tmux", "-L", tm.sock, "kill-server").Run()
}

// Screen is the visible pane.
func (tm *Tmux) Screen() string { return tm.Run("capture-pane", "-p", "-t", "pi") }

// Keys sends tmux key names ("Enter", "Escape", "Down", "j").
func (tm *Tmux) Keys(keys ...string) { tm.Run(append([]string{"send-keys", "-t", "pi"}, keys...)...) }

// Text types s literally.
func (tm *Tmux) Text(s string) { tm.Run("send-keys", "-t", "pi", "-l", s) }

// Close ends the server now (Pi gets the hangup) and waits until the
// environment's processes have exited; the cleanup does it again, which is
// then a no-op.
func (tm *Tmux) Close() {
	tm.t.Helper()
	tm.Kill()
	tm.env.WaitExited(tm.t)
}

// Poll reports whether cond holds for the screen within d, checking every
// 50 ms (the wait ends as soon as Pi drew it).
func (tm *Tmux) Poll(d time.Duration, cond func(screen string) bool) bool {
	end := time.Now().Add(d)
	for {
		if cond(tm.Screen()) {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
