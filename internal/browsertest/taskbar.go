package browsertest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pikit-dev/pikit/internal/modroot"
)

// The taskbar's Shadow DOM as the tests read it, and the test peers cache.

// HostJS is a JavaScript expression for the taskbar's Shadow-DOM host.
const HostJS = `document.getElementById("pi-browser-taskbar-host")`

// Shadow returns a JavaScript expression that evaluates expr with `root`
// bound to the taskbar's shadow root, or null when there is no taskbar.
func Shadow(expr string) string {
	return `(() => { const h = ` + HostJS + `; if (!h || !h.shadowRoot) return null; const root = h.shadowRoot; return (` + expr + "\n); })()"
}

// Taskbar reads the taskbar's shown status text, data-state, activity,
// output, error and retry note.
type Taskbar struct {
	Status, State, Activity, Output, Error, Retry string
}

// Read returns the taskbar's visible state.
func Read(t testing.TB, tab *Tab) Taskbar {
	t.Helper()
	v := Eval[[]string](t, tab, Shadow(`[root.querySelector("[data-status-text]").textContent, root.querySelector("[data-status]").dataset.state,
		root.querySelector("[data-activity]").textContent, root.querySelector("[data-output]").textContent,
		root.querySelector("[data-error]").textContent, root.querySelector("[data-retry]").hidden ? "" : root.querySelector("[data-retry]").textContent]`))
	return Taskbar{Status: v[0], State: v[1], Activity: v[2], Output: v[3], Error: v[4], Retry: v[5]}
}

// TextIs returns a predicate: the taskbar element sel has exactly text.
func TextIs(sel, text string) string {
	return Shadow(`root.querySelector(` + JSString(sel) + `).textContent === ` + JSString(text))
}

// TextHas returns a predicate: the taskbar element sel contains text.
func TextHas(sel, text string) string {
	return Shadow(`root.querySelector(` + JSString(sel) + `).textContent.includes(` + JSString(text) + `)`)
}

// ClickShadow clicks the taskbar control matching selector in the shadow
// root with a real pointer event.
func ClickShadow(t testing.TB, tab *Tab, selector string) {
	t.Helper()
	ClickAt(t, tab, Shadow(`root.querySelector(`+JSString(selector)+`)`))
}

// ClickPage clicks the host-page element matching selector with a real
// pointer event.
func ClickPage(t testing.TB, tab *Tab, selector string) {
	t.Helper()
	ClickAt(t, tab, `document.querySelector(`+JSString(selector)+`)`)
}

// Focused names the focused element: the taskbar control by its data
// attribute (data-launcher, data-prompt, data-mark, data-clear, data-run,
// data-copy, data-close) or tag and class, or "page:<tag>#<id>" when focus
// is on the host page.
func Focused(t testing.TB, tab *Tab) string {
	t.Helper()
	return Eval[string](t, tab, `(() => {
		const host = `+HostJS+`;
		if (document.activeElement !== host) { const e = document.activeElement; return "page:" + (e ? e.localName + "#" + e.id : ""); }
		const e = host.shadowRoot.activeElement;
		if (!e) return "none";
		for (const a of ["data-launcher", "data-prompt", "data-mark", "data-clear", "data-run", "data-copy", "data-close"]) if (e.hasAttribute(a)) return a;
		return e.localName + "." + e.className;
	})()`)
}

// TestDeps returns the test peers cache: $PIKIT_TESTDEPS, else
// .cache/testdeps beside the go.mod above the working directory ("" when
// there is none).
func TestDeps() string {
	if dir := os.Getenv("PIKIT_TESTDEPS"); dir != "" {
		return dir
	}
	root, err := modroot.Find(".")
	if err != nil {
		return ""
	}
	return filepath.Join(root, ".cache", "testdeps")
}
