package extension_test

import (
	"fmt"
	"github.com/pikit-dev/pikit/midcompact/internal/tui"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/piext"
)

// userFirstScript acknowledges the User-manual start prompt with "OK"
// (reference §5.2) and answers everything else as mcScript does.
func userFirstScript(r *modelserver.Request) modelserver.Script {
	if r.Last().Role != "tool" {
		switch u := lastUserPrompt(r); {
		case strings.Contains(u, "FINAL STATE: USER MANUAL"):
			return modelserver.Script{Text: []string{"OK"}}
		case strings.HasPrefix(u, "hello"):
			return modelserver.Script{Text: []string{"REPLY " + u}}
		}
	}
	return mcScript(r)
}

// term is interactive Pi (TUI mode) in a private tmux server, 120×40
// (pitest.StartTmux: its cleanup waits until Pi and the sidecar exited).
type term struct {
	*pitest.Tmux
	t     *testing.T
	trace string // the sidecar logs' folder: the bridge's trace (PIKIT_PIEXT_TRACE) lands here
}

// tmuxPi starts interactive Pi of env in tmux. Without tmux the test
// skips, or fails under CI=true.
func tmuxPi(t *testing.T, env *pitest.Env) *term {
	t.Helper()
	tm := env.StartTmux(t, &pitest.TmuxOptions{Env: []string{"PIKIT_PIEXT_TRACE=1"}})
	return &term{Tmux: tm, t: t, trace: filepath.Dir(piext.LogPath(env.AgentDir, "midcompact"))}
}

func (tm *term) screen() string { return tm.Screen() }

// keys sends tmux key names.
func (tm *term) keys(ks ...string) { tm.Keys(ks...) }

func (tm *term) text(s string) { tm.Text(s) }

// wait polls the screen until cond holds, failing after a minute with the
// screen (no fixed sleeps: the wait ends as soon as Pi drew it).
func (tm *term) wait(what string, cond func(string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := tm.screen()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("screen never showed %s:\n%s\nbridge trace (last lines):\n%s", what, s, tm.traceTail(40))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// traceTail is the end of the bridge's trace logs.
func (tm *term) traceTail(n int) string {
	logs, _ := filepath.Glob(filepath.Join(tm.trace, "*.log"))
	var out []string
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		out = append(out, lines[max(0, len(lines)-n):]...)
	}
	return strings.Join(out, "\n")
}

func (tm *term) waitFor(want string) string {
	tm.t.Helper()
	return tm.wait(fmt.Sprintf("%q", want), func(s string) bool { return strings.Contains(s, want) })
}

// waitGone waits until want is no longer on the screen.
func (tm *term) waitGone(want string) {
	tm.t.Helper()
	tm.wait(fmt.Sprintf("%q gone", want), func(s string) bool { return !strings.Contains(s, want) })
}

// firstCommand waits for Pi's footer, types text until the editor echoes
// it (the editor takes input only once Pi has drawn, so the first tries
// may be lost; an echoed text is never typed twice) and presses Enter
// until the screen shows want.
func (tm *term) firstCommand(text, want string) {
	tm.t.Helper()
	tm.waitFor(pitest.Provider)
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(tm.screen(), text) {
		if time.Now().After(deadline) {
			tm.t.Fatalf("the editor never echoed %q:\n%s", text, tm.screen())
		}
		tm.text(text)
		tm.poll(5*time.Second, text)
	}
	for !strings.Contains(tm.screen(), want) {
		if time.Now().After(deadline) {
			tm.t.Fatalf("%q never showed %q:\n%s", text, want, tm.screen())
		}
		tm.keys("Enter")
		tm.poll(10*time.Second, want)
	}
}

// poll waits at most d for want (no failure).
func (tm *term) poll(d time.Duration, want string) bool {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if strings.Contains(tm.screen(), want) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// command types a slash command and submits it. Pi's autocomplete list
// may take the first Enter; a second one submits once the list closed.
func (tm *term) command(text, want string) string {
	tm.t.Helper()
	tm.text(text)
	tm.waitFor(text)
	tm.keys("Enter")
	if tm.poll(3*time.Second, want) {
		return tm.screen()
	}
	if strings.Contains(editorLine(tm.screen()), strings.Fields(text)[0]) {
		tm.keys("Enter")
	}
	return tm.waitFor(want)
}

// editorLine is the screen's last line that starts with a slash command
// (what is still in the input editor).
func editorLine(screen string) string {
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "/midcompact:") && !strings.Contains(lines[i], "Use /midcompact") {
			return lines[i]
		}
	}
	return ""
}

// hasLine reports a screen line that is exactly want (spaces trimmed).
func hasLine(screen, want string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}

// restored reads the session file Pi wrote and restores midcompact's
// state from its branch.
func restored(t *testing.T, env *pitest.Env) midcompact.Restored {
	t.Helper()
	var file string
	_ = filepath.WalkDir(env.SessionDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			file = p
		}
		return nil
	})
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("session file: %v", err)
	}
	defer f.Close()
	sf, err := pisession.Read(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sf.Branch("")
	if err != nil {
		t.Fatal(err)
	}
	return midcompact.Restore(b)
}

// Reference §5.3–§5.5 and seed 001 §Transactions, §Concurrency on the real
// Pi 1.6.0 in tmux, the extension installed by `pikit ext install
// midcompact`: the User-manual start opens the Selection chooser after the
// Agent's "OK"; its TUI answer opens the Selection overlay; j/Space/x
// select two atoms (header math), s saves one pending range; Esc closes a
// clean Selection ("plan remains"); a cancelled Review chooser changes
// nothing; Review edits the summary (ctx.ui.editor) and the topic
// (ctx.ui.input), a declined removal keeps the range, Esc closes; a
// confirmed removal empties the plan. /midcompact:status shows each plan;
// the footer says `UI editing` exactly while an overlay is open.
func TestTmux_SelectionAndReviewOverlays(t *testing.T) {
	t.Parallel()
	env := pitest.New(t, &pitest.Options{Script: userFirstScript, Session: true})
	env.InstallExtension(t, "midcompact", "")
	tm := tmuxPi(t, env)

	tm.firstCommand(firstUser, "REPLY "+firstUser)
	tm.text(secondUser)
	tm.keys("Enter")
	tm.waitFor("REPLY " + secondUser)

	tm.command("/midcompact:start", uitext.StartOptionUser)
	tm.keys("Down")
	tm.wait("User manual highlighted", func(s string) bool { return strings.Contains(s, "→ "+uitext.StartOptionUser) })
	tm.keys("Enter")
	tm.waitFor("Open Midcompact Selection") // after the Agent's OK
	if s := tm.screen(); !hasLine(s, "OK") || !strings.Contains(s, uitext.SurfaceWebOption) {
		t.Errorf("chooser before the Agent's OK or without Web UI:\n%s", s)
	}
	tm.keys("Down")
	tm.wait("TUI highlighted", func(s string) bool { return strings.Contains(s, "→ "+uitext.SurfaceTUIOption) })
	tm.keys("Enter")
	tm.waitFor(tui.SelectionTitle)
	tm.waitFor("· UI editing") // the footer: the overlay holds the UI lock
	s := tm.waitFor("> [ ] .... a0001 ")
	// The overlay is 90% of 120 columns (the whole hint line fits) and
	// lays out for 85% of 40 rows (the last atom shows with the cursor on
	// the first): the overlay options and the rows reached Pi and Go.
	if !strings.Contains(s, "s/Enter save · Esc/q close") || !strings.Contains(s, "a0005 assistant") {
		t.Errorf("overlay not sized by its options:\n%s", s)
	}
	// Keys typed in one burst reach Go in order: j, Space, j, x selects
	// a0002 and a0003 (any other order selects something else).
	tm.keys("j", "Space", "j", "x")
	s = tm.waitFor("> [*] PLAN a0003 assistant")
	if !strings.Contains(s, "[*] PLAN a0002 user") || !strings.Contains(s, "Selected 2/5 atoms | ") {
		t.Errorf("after j Space j x:\n%s", s)
	}
	tm.keys("s")
	tm.waitFor(uitext.MsgPlanSaved)
	tm.waitGone(tui.SelectionTitle)
	tm.waitGone("UI editing") // released when the overlay closed
	tm.command("/midcompact:status", "Plan v1: 1 range(s) (1 pending summary).")

	// A clean Selection closes without saving; the plan stays.
	tm.command("/midcompact:select tui", tui.SelectionTitle)
	tm.waitFor("[*] PLAN a0002 user") // opened on the saved plan
	tm.keys("Escape")
	tm.waitFor("Selection closed. The plan remains available")
	tm.waitGone(tui.SelectionTitle)

	// A cancelled Review chooser changes neither plan nor transaction.
	tm.command("/midcompact:review", "Open Midcompact Review")
	tm.keys("Escape")
	tm.waitFor("Midcompact review opening cancelled.")

	tm.command("/midcompact:review tui", tui.ReviewTitle)
	tm.waitFor("▾ d1 a0002→a0003 · 2 atoms")
	tm.keys("e")
	tm.waitFor("Summary of d1")
	tm.text("TMUX SUMMARY of the greeting")
	tm.keys("Enter")
	tm.waitFor("TMUX SUMMARY of the greeting")
	tm.waitFor(tui.ReviewTitle)
	tm.keys("t")
	tm.waitFor("Topic of d1")
	tm.text("tmux topic")
	tm.keys("Enter")
	tm.waitFor("topic: tmux topic")
	tm.keys("d")
	tm.waitFor(tui.RemoveRangeTitle)
	tm.waitFor("d1: a0002 → a0003")
	tm.keys("Escape") // declined: nothing removed
	tm.waitFor("▾ d1 a0002→a0003")
	tm.keys("Escape")
	tm.waitGone(tui.ReviewTitle)
	tm.waitGone("UI editing")
	tm.command("/midcompact:status", "Plan v3: 1 range(s) (ready for review).")
	r := restored(t, env)
	if r.Draft == nil || len(r.Draft.Ranges) != 1 || r.Draft.Ranges[0].Summary != "TMUX SUMMARY of the greeting" || r.Draft.Ranges[0].Topic != "tmux topic" {
		t.Fatalf("persisted plan = %+v", r.Draft)
	}

	tm.command("/midcompact:review tui", tui.ReviewTitle)
	tm.keys("d")
	tm.waitFor(tui.RemoveRangeTitle)
	tm.keys("Enter") // Yes
	tm.waitFor("Plan v4: no compression ranges.")
	tm.keys("q")
	tm.waitGone(tui.ReviewTitle)
	if r := restored(t, env); r.Transaction == nil || r.Draft == nil || r.Draft.Revision != 4 || len(r.Draft.Ranges) != 0 {
		t.Errorf("after remove: %+v", r.Draft)
	}
	if strings.Contains(tm.screen(), "failed") {
		t.Errorf("a failure notice:\n%s", tm.screen())
	}
}
