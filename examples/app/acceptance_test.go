//go:build pitaskbar

package app_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/demo"
	"github.com/pikit-dev/pikit/examples/app"
	"github.com/pikit-dev/pikit/internal/browsertest"
	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/host"
)

// Browser acceptance of issue 5 item 5: the example app with the taskbar
// mounted through taskbar/host, in front of the project broker (spawned from
// this test binary, see TestMain) that drives the real Pi 1.6.0 against the
// scripted model, used from each browser engine (Chromium, Firefox ESR,
// WebKitGTK; internal/browsertest). One Pi serves the whole suite; the
// subtests share it and run in order.

// The scripted model answers by a keyword in the task's prompt.
const (
	kwFocus = "KW-FOCUS"
	kwBash  = "KW-BASH"
	kwSlow  = "KW-SLOW"
	kwNet   = "KW-NET"
	kwTabs  = "KW-TABS"
	kwKeys  = "KW-KEYS"
)

const (
	wholePageReply = "Done: I looked at the page."
	focusReply     = "Both marked elements noted."
	keysReply      = "Marked by keyboard, noted."
)

func acceptanceScript() modelserver.ScriptFunc {
	stream := func(word string, n int, end string) []string {
		return append(strings.SplitAfter(strings.TrimSpace(strings.Repeat(word+" ", n)), " "), " "+end)
	}
	return modelserver.Switch(
		modelserver.Script{Text: modelserver.Words(wholePageReply)},
		modelserver.Case{Contains: kwFocus, Script: modelserver.Script{Text: modelserver.Words(focusReply)}},
		modelserver.Case{Contains: kwKeys, Script: modelserver.Script{Text: modelserver.Words(keysReply)}},
		// One bash call that takes a while, so "Running bash" is seen; the
		// tool result is answered with the whole-page reply.
		modelserver.Case{Contains: kwBash, Script: modelserver.Script{ToolCalls: []modelserver.ToolCall{{
			Name: "bash", Arguments: []string{`{"command":`, `"sleep 2; echo tool-ran"}`}}}}},
		// 400 words over about 16 s: stopped long before the end.
		modelserver.Case{Contains: kwSlow, Script: modelserver.Script{Text: stream("word", 400, "END-SLOW"), Delay: 40 * time.Millisecond}},
		// About 5 s: outlives a short network loss.
		modelserver.Case{Contains: kwNet, Script: modelserver.Script{Text: stream("net", 100, "END-NET"), Delay: 50 * time.Millisecond}},
		modelserver.Case{Contains: kwTabs, Script: modelserver.Script{Text: stream("shared", 50, "END-TABS"), Delay: 50 * time.Millisecond}},
	)
}

// stack is the example app with the taskbar, served on loopback.
type stack struct {
	env  *pitest.Env
	root string // canonical project root holding templates/
	exe  string // the Pi launcher
	bc   *broker.Client
	url  string // base URL, ending in "/"
}

// newStack copies the example app into a fresh project, starts the broker
// client (the broker and Pi start on the first request) and serves the app
// with the taskbar mounted.
func newStack(t *testing.T) *stack {
	t.Helper()
	browsertest.Require(t, browsertest.Engines()...) // skip (or fail under CI) before starting anything
	env := pitest.New(t, &pitest.Options{Script: acceptanceScript()})
	root, err := filepath.EvalSymlinks(env.Dir)
	browsertest.Must(t, err)
	browsertest.Must(t, os.CopyFS(root, app.Files))
	base, err := os.MkdirTemp("", "tba") // short: the broker socket path must fit sun_path
	browsertest.Must(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	s := &stack{env: env, root: root, exe: env.Wrapper(t)}
	s.bc = broker.NewClient(&broker.ClientOptions{
		ProjectRoot: root, RuntimeBase: base, Executable: s.exe, Env: env.Env,
		// This binary is the broker (TestMain); it exits 1 s after the
		// last client closes.
		Command: []string{os.Args[0], "taskbar", "broker", "--grace", "1s"},
	})
	t.Cleanup(func() {
		s.bc.Close()
		s.bc.Wait()
	})
	s.url = serveApp(t, root, &host.Options{Owner: s.bc})
	return s
}

// serveApp mounts the taskbar with opts (Config filled in for root) in
// front of the example app in root and serves it until the test ends.
func serveApp(t *testing.T, root string, opts *host.Options) string {
	t.Helper()
	enabled := true
	o := *opts
	o.Config = taskbar.Config{Enabled: &enabled, ProjectRoot: root, Executable: o.Config.Executable}
	o.Getenv = func(string) (string, bool) { return "", false }
	mux := http.NewServeMux()
	mux.Handle("/", app.New(os.DirFS(root), nil))
	tb, err := host.Mount(t.Context(), mux, &o)
	browsertest.Must(t, err)
	srv := httptest.NewServer(tb.Middleware(mux))
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := tb.Close(ctx); err != nil {
			t.Errorf("taskbar Close: %v", err)
		}
	})
	return srv.URL + "/"
}

// --- taskbar in the browser ---------------------------------------------------

const (
	uiWait   = 10 * time.Second
	taskWait = time.Minute
)

func wait(t *testing.T, ctx *browsertest.Tab, what, predicate string, d time.Duration) {
	t.Helper()
	browsertest.Wait(t, ctx, what, predicate, d)
}

func statusIs(text string) string { return browsertest.TextIs("[data-status-text]", text) }

// openPage loads url and waits until the taskbar shows an idle session
// (Ready, or the retained task's Finished or Stopped).
func openPage(t *testing.T, ctx *browsertest.Tab, url string) {
	t.Helper()
	browsertest.Navigate(t, ctx, url)
	wait(t, ctx, "an idle session", browsertest.Shadow(`["Ready", "Finished", "Stopped"].includes(root.querySelector("[data-status-text]").textContent)`), taskWait)
}

func openPanel(t *testing.T, ctx *browsertest.Tab) {
	t.Helper()
	if browsertest.Eval[bool](t, ctx, browsertest.Shadow(`root.querySelector("[data-panel]").hidden`)) {
		browsertest.ClickShadow(t, ctx, "[data-launcher]")
	}
	wait(t, ctx, "the panel", browsertest.Shadow(`!root.querySelector("[data-panel]").hidden`), uiWait)
}

// setPrompt replaces the instruction by typing text into it.
func setPrompt(t *testing.T, ctx *browsertest.Tab, text string) {
	t.Helper()
	browsertest.Do(t, ctx, `const p = `+browsertest.HostJS+`.shadowRoot.querySelector("[data-prompt]"); p.focus(); p.select()`)
	browsertest.Key(t, ctx, text)
	wait(t, ctx, "the typed prompt", browsertest.Shadow(`root.querySelector("[data-prompt]").value === `+browsertest.JSString(text)), uiWait)
}

// mark marks the page element matching selector with the pointer.
func mark(t *testing.T, ctx *browsertest.Tab, selector string, want int) {
	t.Helper()
	browsertest.ClickShadow(t, ctx, "[data-mark]")
	wait(t, ctx, "selection mode", browsertest.Shadow(`root.querySelector("[data-mark]").getAttribute("aria-pressed") === "true"`), uiWait)
	browsertest.ClickPage(t, ctx, selector)
	wait(t, ctx, "the mark", browsertest.Shadow(`root.querySelectorAll("[data-marks] li").length === `+strconv.Itoa(want)), uiWait)
}

// run clicks Run and waits until the task is working.
func run(t *testing.T, ctx *browsertest.Tab) {
	t.Helper()
	wait(t, ctx, "Run enabled", browsertest.Shadow(`root.querySelector("[data-run]").textContent === "Run with Pi" && root.querySelector("[data-run]").getAttribute("aria-disabled") !== "true"`), uiWait)
	browsertest.ClickShadow(t, ctx, "[data-run]")
	wait(t, ctx, "Working", statusIs("Working"), taskWait)
}

// submit opens the panel, types prompt and runs it (see [run]).
func submit(t *testing.T, ctx *browsertest.Tab, prompt string) {
	t.Helper()
	openPanel(t, ctx)
	setPrompt(t, ctx, prompt)
	run(t, ctx)
}

// runTask submits prompt and waits for Finished with want in the output.
func runTask(t *testing.T, ctx *browsertest.Tab, prompt, want string) {
	t.Helper()
	submit(t, ctx, prompt)
	wait(t, ctx, "output "+want, browsertest.TextHas("[data-output]", want), taskWait)
	wait(t, ctx, "Finished", statusIs("Finished"), taskWait)
}

// modelPrompt returns the browser context of the last prompt the model got
// whose text contains keyword.
func modelPrompt(t *testing.T, env *pitest.Env, keyword string) demo.Envelope {
	t.Helper()
	reqs := env.Server.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if text := reqs[i].LastUserText(); strings.Contains(text, keyword) {
			e, ok := demo.ParseEnvelope(text)
			if !ok {
				t.Fatalf("the model got no well-formed envelope:\n%s", text)
			}
			return e
		}
	}
	t.Fatalf("the model never got a prompt with %s", keyword)
	return demo.Envelope{}
}

// checkFocusPoints checks that the envelope carries exactly the marked
// selectors, each with an available template source hint for its file.
func checkFocusPoints(t *testing.T, e demo.Envelope, want map[string]string) {
	t.Helper()
	fps := e.Context.FocusPoints
	if len(fps) != len(want) {
		t.Fatalf("model got %d focus points, want %d: %+v", len(fps), len(want), fps)
	}
	for _, fp := range fps {
		path, ok := want[fp.Selector]
		if !ok {
			t.Errorf("unexpected focus point %q", fp.Selector)
			continue
		}
		refs := fp.Source.References
		if fp.Source.Status != "available" || len(refs) != 1 || refs[0].Path != path || refs[0].Role != "template" {
			t.Errorf("focus point %s source = %+v, want available template %s", fp.Selector, fp.Source, path)
		}
	}
}

// visible asks the page to read state now, as a tab coming back into view
// does (the client polls every 30 s while idle).
func visible(t *testing.T, ctx *browsertest.Tab) {
	t.Helper()
	browsertest.Do(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
}

// --- the suite ----------------------------------------------------------------

func TestAcceptance(t *testing.T) {
	s := newStack(t)
	for _, e := range browsertest.Engines() {
		t.Run(string(e), func(t *testing.T) { browserFlows(t, s, e) })
	}
	t.Run("Pi missing then installed", piMissingThenInstalled)

	t.Run("proxy in front of a non-Go page server", func(t *testing.T) {
		proxyFlows(t, s)
	})
}

// browserFlows is the acceptance in one engine: whole page and focused
// tasks (marking), progress, stop (the live region's announcement), network
// loss (Chromium only), two tabs, navigation, keyboard only (focus and
// Escape), narrow and zoomed viewports (Chromium only), and axe, against
// the suite's Pi.
func browserFlows(t *testing.T, s *stack, e browsertest.Engine) {
	ctx := browsertest.New(t, &browsertest.Options{Engine: e, Width: 1280, Height: 900})
	tasks := s.url + "tasks"

	t.Run("whole page task", func(t *testing.T) {
		openPage(t, ctx, tasks)
		runTask(t, ctx, "Summarize this page.", wholePageReply)
		if e := modelPrompt(t, s.env, "Summarize this page."); len(e.Context.FocusPoints) != 0 || e.Context.Location.Path != "/tasks" {
			t.Errorf("whole-page context: path %q, %d focus points", e.Context.Location.Path, len(e.Context.FocusPoints))
		}
	})

	t.Run("focused task with two marks", func(t *testing.T) {
		openPage(t, ctx, tasks)
		openPanel(t, ctx)
		mark(t, ctx, `[data-testid="task-1-priority"]`, 1)
		mark(t, ctx, `[data-testid="task-count"]`, 2)
		wait(t, ctx, "scope", browsertest.TextIs("[data-scope]", "2 marked elements"), uiWait)
		setPrompt(t, ctx, kwFocus+": compare these two.")
		run(t, ctx)
		wait(t, ctx, "Finished", statusIs("Finished"), taskWait)
		if out := browsertest.Read(t, ctx).Output; !strings.Contains(out, focusReply) {
			t.Errorf("output = %q", out)
		}
		checkFocusPoints(t, modelPrompt(t, s.env, kwFocus), map[string]string{
			`[data-testid="task-1-priority"]`: "templates/task-item.html",
			`[data-testid="task-count"]`:      "templates/tasks.html",
		})
		browsertest.ClickShadow(t, ctx, "[data-clear]")
		wait(t, ctx, "no marks", browsertest.TextIs("[data-scope]", "Whole page"), uiWait)
	})

	t.Run("progress and output", func(t *testing.T) {
		openPage(t, ctx, tasks)
		submit(t, ctx, kwBash+": check the tool.")
		wait(t, ctx, "Running bash", browsertest.TextIs("[data-activity]", "Running bash"), taskWait)
		wait(t, ctx, "output after the tool", browsertest.TextHas("[data-output]", wholePageReply), taskWait)
		wait(t, ctx, "Finished", statusIs("Finished"), taskWait)
	})

	t.Run("stop mid-stream", func(t *testing.T) {
		openPage(t, ctx, tasks)
		submit(t, ctx, kwSlow+": write a lot.")
		wait(t, ctx, "streamed output", browsertest.TextHas("[data-output]", "word word word"), taskWait)
		wait(t, ctx, "Stop task", browsertest.TextIs("[data-run]", "Stop task"), uiWait)
		browsertest.ClickShadow(t, ctx, "[data-run]")
		wait(t, ctx, "Stopped", statusIs("Stopped"), taskWait)
		got := browsertest.Read(t, ctx)
		if got.Activity != "Task stopped" || strings.Contains(got.Output, "END-SLOW") {
			t.Errorf("after stop: activity %q, output ends %q", got.Activity, got.Output[max(0, len(got.Output)-40):])
		}
		wait(t, ctx, "the not-rolled-back warning", browsertest.Shadow(`!root.querySelector("[data-cancel-warning]").hidden && root.querySelector("[data-cancel-warning]").textContent === "Stopping cannot roll back changes Pi already made."`), uiWait)
		wait(t, ctx, "the stop announcement", browsertest.TextHas("[data-live]", "not rolled back"), uiWait)
	})

	// Only Chromium emulates a network loss (browsertest.SetOffline).
	if e == browsertest.Chromium {
		t.Run("network loss and recovery", func(t *testing.T) {
			openPage(t, ctx, tasks)
			submit(t, ctx, kwNet+": keep going.")
			wait(t, ctx, "streamed output", browsertest.TextHas("[data-output]", "net net"), taskWait)
			browsertest.SetOffline(t, ctx, true)
			wait(t, ctx, "the retry indication", browsertest.Shadow(`!root.querySelector("[data-retry]").hidden && root.querySelector("[data-retry]").textContent === "Connection lost. Retrying without clearing the last known state."`), uiWait)
			if got := browsertest.Read(t, ctx); got.Status != "Working" || !strings.Contains(got.Output, "net net") {
				t.Errorf("while offline the last snapshot was not kept: %+v", got)
			}
			browsertest.SetOffline(t, ctx, false)
			wait(t, ctx, "recovery", browsertest.Shadow(`root.querySelector("[data-retry]").hidden`), taskWait)
			wait(t, ctx, "the full output", browsertest.TextHas("[data-output]", "END-NET"), taskWait)
			wait(t, ctx, "Finished", statusIs("Finished"), taskWait)
		})
	}

	t.Run("two tabs converge", func(t *testing.T) {
		// Tab A loads first and submits after tab B has loaded: a second
		// page load must not invalidate the older tab's CSRF token.
		openPage(t, ctx, tasks)
		tabB := browsertest.NewTab(t, ctx)
		openPage(t, tabB, s.url)
		submit(t, ctx, kwTabs+": share this.")
		visible(t, tabB)
		wait(t, tabB, "busy in tab B", browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Working" && root.querySelector("[data-run]").textContent === "Stop task"`), taskWait)
		openPanel(t, tabB)
		wait(t, tabB, "output in tab B", browsertest.TextHas("[data-output]", "shared shared"), taskWait)
		wait(t, tabB, "Finished in tab B", statusIs("Finished"), taskWait)
		wait(t, ctx, "Finished in tab A", statusIs("Finished"), taskWait)
		if a, b := browsertest.Read(t, ctx).Output, browsertest.Read(t, tabB).Output; a != b || !strings.Contains(a, "END-TABS") {
			t.Errorf("tabs disagree: A %q, B %q", a, b)
		}
	})

	t.Run("navigation keeps host and draft", func(t *testing.T) {
		openPage(t, ctx, tasks)
		openPanel(t, ctx)
		setPrompt(t, ctx, "Draft that survives")
		browsertest.Do(t, ctx, browsertest.HostJS+`.testMarker = "same-host"`)
		// Turbo-style body replacement: fetch the next page, announce it,
		// swap the body, run its body scripts again.
		browsertest.Eval[bool](t, ctx, `(async () => {
			const html = await (await fetch("/about")).text();
			const next = new DOMParser().parseFromString(html, "text/html").body;
			document.dispatchEvent(new CustomEvent("turbo:before-render", {bubbles: true, cancelable: true, detail: {newBody: next}}));
			document.documentElement.replaceChild(document.adoptNode(next), document.body);
			const loads = [];
			for (const old of next.querySelectorAll("script[src]")) {
				const s = document.createElement("script");
				s.src = old.src;
				loads.push(new Promise((resolve) => { s.onload = resolve; s.onerror = resolve; }));
				old.replaceWith(s);
			}
			await Promise.all(loads);
			document.dispatchEvent(new Event("turbo:render"));
			document.dispatchEvent(new Event("turbo:load"));
			return true;
		})()`)
		got := browsertest.Eval[[]any](t, ctx, `[document.querySelectorAll("[data-pi-browser-taskbar-host]").length, `+browsertest.HostJS+`.testMarker, `+
			browsertest.HostJS+`.parentNode === document.body, !!document.querySelector('[data-testid="about"]'), `+browsertest.HostJS+`.shadowRoot.querySelector("[data-prompt]").value]`)
		if !slices.Equal(got, []any{float64(1), "same-host", true, true, "Draft that survives"}) {
			t.Fatalf("after body replacement [hosts, marker, in body, new page, draft] = %v", got)
		}
		wait(t, ctx, "state after the swap", browsertest.Shadow(`["Ready", "Finished", "Stopped"].includes(root.querySelector("[data-status-text]").textContent)`), uiWait)
		// A full navigation by link: one fresh host that reads state again.
		browsertest.ClickPage(t, ctx, `[data-testid="nav-tasks"]`)
		wait(t, ctx, "the task list", `(() => { const l = document.querySelector('[data-testid="task-list"]'); return !!l && l.getClientRects().length > 0; })()`, taskWait)
		wait(t, ctx, "an idle session", browsertest.Shadow(`["Ready", "Finished", "Stopped"].includes(root.querySelector("[data-status-text]").textContent)`), taskWait)
		got = browsertest.Eval[[]any](t, ctx, `[document.querySelectorAll("[data-pi-browser-taskbar-host]").length, `+browsertest.HostJS+`.testMarker === undefined]`)
		if !slices.Equal(got, []any{float64(1), true}) {
			t.Fatalf("after full navigation [hosts, fresh] = %v", got)
		}
	})

	t.Run("keyboard only", func(t *testing.T) {
		openPage(t, ctx, tasks)
		for i := 0; i < 30 && browsertest.Focused(t, ctx) != "data-launcher"; i++ {
			browsertest.Key(t, ctx, "\t")
		}
		if f := browsertest.Focused(t, ctx); f != "data-launcher" {
			t.Fatalf("Tab never reached the launcher (focus %s)", f)
		}
		browsertest.Key(t, ctx, "\r")
		if f := browsertest.Focused(t, ctx); f != "data-prompt" {
			t.Fatalf("focus after Enter on the launcher = %s, want the instruction", f)
		}
		browsertest.Do(t, ctx, browsertest.HostJS+`.shadowRoot.querySelector("[data-prompt]").select()`)
		browsertest.Key(t, ctx, kwKeys+": use the link.")
		browsertest.Key(t, ctx, "\t", browsertest.ModifierShift)
		if f := browsertest.Focused(t, ctx); f != "data-mark" {
			t.Fatalf("Shift+Tab from the instruction = %s, want Mark element", f)
		}
		browsertest.Key(t, ctx, "\r")
		wait(t, ctx, "selection mode", browsertest.Shadow(`root.querySelector("[data-mark]").getAttribute("aria-pressed") === "true"`), uiWait)
		for i := 0; i < 10 && !strings.HasPrefix(browsertest.Focused(t, ctx), "page:a"); i++ {
			browsertest.Key(t, ctx, "\t", browsertest.ModifierShift)
		}
		if f := browsertest.Focused(t, ctx); !strings.HasPrefix(f, "page:a") {
			t.Fatalf("Shift+Tab never reached a page link (focus %s)", f)
		}
		browsertest.Key(t, ctx, "\r")
		wait(t, ctx, "the keyboard mark", browsertest.Shadow(`root.querySelectorAll("[data-marks] li").length === 1`), uiWait)
		if p := browsertest.Eval[string](t, ctx, `location.pathname`); p != "/tasks" {
			t.Fatalf("Enter while marking followed the link to %s", p)
		}
		for i := 0; i < 6 && browsertest.Focused(t, ctx) != "data-run"; i++ {
			browsertest.Key(t, ctx, "\t")
		}
		if f := browsertest.Focused(t, ctx); f != "data-run" {
			t.Fatalf("Tab never reached Run (focus %s)", f)
		}
		browsertest.Key(t, ctx, "\r")
		wait(t, ctx, "output", browsertest.TextHas("[data-output]", keysReply), taskWait)
		wait(t, ctx, "Finished", statusIs("Finished"), taskWait)
		if n := len(modelPrompt(t, s.env, kwKeys).Context.FocusPoints); n != 1 {
			t.Errorf("keyboard task carried %d focus points, want 1", n)
		}
		browsertest.Key(t, ctx, "\u001b")
		if f := browsertest.Focused(t, ctx); f != "data-launcher" {
			t.Fatalf("focus after Escape = %s, want the launcher", f)
		}
		if !browsertest.Eval[bool](t, ctx, browsertest.Shadow(`root.querySelector("[data-panel]").hidden`)) {
			t.Error("Escape did not close the panel")
		}
	})

	// Each viewport is a browser of its own; the Browser Client tests check
	// narrow and zoomed layouts in every engine (TestBrowserClient_ReflowAndReducedMotion),
	// so the real-Pi suite takes these screenshots in Chromium only.
	if e == browsertest.Chromium {
		t.Run("narrow viewport and zoom screenshots", func(t *testing.T) {
			dir := browsertest.ScreenshotDir(t)
			for _, v := range []struct {
				name          string
				width, height int64
				scale         float64
			}{
				{"narrow-320", 320, 640, 1},
				// 200% zoom of a 1280×800 window: half the CSS pixels at scale 2.
				{"zoom-200", 640, 400, 2},
			} {
				t.Run(v.name, func(t *testing.T) {
					vctx := browsertest.New(t, &browsertest.Options{Engine: e, Width: v.width, Height: v.height, Scale: v.scale})
					openPage(t, vctx, tasks)
					openPanel(t, vctx)
					mark(t, vctx, `[data-testid="task-2-priority"]`, 1)
					setPrompt(t, vctx, "Make the second row stand out on small screens.")
					// The panel fits the viewport and nothing scrolls sideways.
					fit := browsertest.Eval[[]float64](t, vctx, browsertest.Shadow(`(() => { const r = root.querySelector("[data-panel]").getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom, document.documentElement.clientWidth, document.documentElement.clientHeight, document.documentElement.scrollWidth]; })()`))
					if fit[0] < 0 || fit[1] > fit[4] || fit[2] < 0 || fit[3] > fit[5] || fit[6] > fit[4] {
						t.Errorf("panel %v does not fit the %vx%v viewport (scroll width %v)", fit[:4], fit[4], fit[5], fit[6])
					}
					t.Logf("screenshot: %s", browsertest.Screenshot(t, vctx, dir, "acceptance-"+v.name+".png"))
				})
			}
		})
	}

	t.Run("axe in the shadow root", func(t *testing.T) {
		src := browsertest.AxeSource(t)
		openPage(t, ctx, tasks)
		check := func(state string) {
			t.Helper()
			if msgs := browsertest.Axe(t, ctx, src).Messages(); len(msgs) > 0 {
				t.Errorf("%s: %d axe violations:\n%s", state, len(msgs), strings.Join(msgs, "\n"))
			}
		}
		check("closed")
		openPanel(t, ctx)
		mark(t, ctx, `[data-testid="task-3-priority"]`, 1)
		check("open with a mark and the last output")
		setPrompt(t, ctx, kwSlow+": once more.")
		run(t, ctx)
		wait(t, ctx, "streamed output", browsertest.TextHas("[data-output]", "word word"), taskWait)
		check("working")
		browsertest.ClickShadow(t, ctx, "[data-run]")
		wait(t, ctx, "Stopped", statusIs("Stopped"), taskWait)
		check("stopped")
	})
}

// piMissingThenInstalled: the app starts with no Pi at the configured
// path: the taskbar says Unavailable with its guidance while the app works;
// once Pi is installed there, the runtime's re-probe finds it and the
// taskbar becomes Ready without restarting anything. Its own stack, with an
// in-process owner (the other owner of package host).
func piMissingThenInstalled(t *testing.T) {
	env := pitest.New(t, &pitest.Options{Script: acceptanceScript()})
	root, err := filepath.EvalSymlinks(env.Dir)
	browsertest.Must(t, err)
	browsertest.Must(t, os.CopyFS(root, app.Files))
	exe := filepath.Join(t.TempDir(), "bin", "pi")
	url := serveApp(t, root, &host.Options{InProcess: true, Config: taskbar.Config{Executable: exe}})
	ctx := browsertest.New(t, nil)
	browsertest.Navigate(t, ctx, url+"tasks")
	wait(t, ctx, "Unavailable", statusIs("Unavailable"), taskWait)
	got := browsertest.Read(t, ctx)
	if got.State != "unavailable" || got.Activity != "Check that Pi is installed and authenticated" {
		t.Errorf("unavailable taskbar = %+v", got)
	}
	if n := browsertest.Eval[float64](t, ctx, `document.querySelectorAll('[data-testid^="task-"][data-testid$="-priority"]').length`); n != 3 {
		t.Errorf("the app shows %v tasks, want 3", n)
	}
	openPanel(t, ctx)
	t.Logf("screenshot: %s", browsertest.Screenshot(t, ctx, browsertest.ScreenshotDir(t), "acceptance-unavailable.png"))
	// Install Pi: a launcher at the configured path with the offline
	// environment (the in-process runtime inherits this process's).
	var sh strings.Builder
	sh.WriteString("#!/bin/sh\n")
	for _, kv := range env.Env {
		k, v, _ := strings.Cut(kv, "=")
		sh.WriteString("export " + k + "='" + strings.ReplaceAll(v, "'", `'\''`) + "'\n")
	}
	sh.WriteString("exec '" + env.Wrapper(t) + "' \"$@\"\n")
	browsertest.Must(t, os.MkdirAll(filepath.Dir(exe), 0o700))
	browsertest.Must(t, os.WriteFile(exe+".tmp", []byte(sh.String()), 0o700))
	browsertest.Must(t, os.Rename(exe+".tmp", exe))
	// The tab reads state when it becomes visible again (the user comes
	// back after installing); repeat until the re-probe started Pi.
	deadline := time.Now().Add(taskWait)
	for browsertest.Read(t, ctx).Status != "Ready" {
		if time.Now().After(deadline) {
			t.Fatalf("taskbar never became Ready after Pi was installed: %+v", browsertest.Read(t, ctx))
		}
		visible(t, ctx)
		time.Sleep(250 * time.Millisecond)
	}
	runTask(t, ctx, "Summarize this page.", wholePageReply)
}

// nodeServer is a static page server that is not Go: Node 22 from the test
// cache serving the files of a directory.
const nodeServer = `
const http = require("http"), fs = require("fs"), path = require("path");
const dir = process.argv[1];
http.createServer((req, res) => {
  const name = req.url === "/" ? "index.html" : req.url.slice(1);
  if (!/^[a-z-]+\.html$/.test(name)) { res.writeHead(404, {"content-type": "text/plain"}); res.end("nope"); return; }
  fs.readFile(path.join(dir, name), (err, data) => {
    if (err) { res.writeHead(404, {"content-type": "text/plain"}); res.end("nope"); return; }
    res.writeHead(200, {"content-type": "text/html; charset=utf-8"});
    res.end(data);
  });
}).listen(0, "127.0.0.1", function () { console.log("PORT " + this.address().port); });
`

// staticPage is a Rails-like page with ERB source annotations.
const staticPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Static items</title></head>
<body>
<main>
<h1>Items</h1>
<!-- BEGIN app/views/items/index.html.erb -->
<ul data-testid="items">
<!-- BEGIN app/views/items/_item.html.erb --><li data-testid="item-a">Alpha</li><!-- END app/views/items/_item.html.erb -->
<!-- BEGIN app/views/items/_item.html.erb --><li data-testid="item-b">Beta</li><!-- END app/views/items/_item.html.erb -->
</ul>
<p data-testid="footer-note">Served by Node</p>
<!-- END app/views/items/index.html.erb -->
</main>
</body></html>
`

// proxyFlows runs `pikit taskbar proxy` (host.RunProxy) in front of a Node
// page server, sharing the suite's broker, and does the core flows through
// it: whole page, focused with two marks, stop.
func proxyFlows(t *testing.T, s *stack) {
	pages := t.TempDir()
	browsertest.Must(t, os.WriteFile(filepath.Join(pages, "index.html"), []byte(staticPage), 0o600))
	node := exec.Command(filepath.Join(s.env.Install.NodeBin, "node"), "-e", nodeServer, pages)
	stdout, err := node.StdoutPipe()
	browsertest.Must(t, err)
	browsertest.Must(t, node.Start())
	t.Cleanup(func() { node.Process.Kill(); node.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "PORT ") {
		t.Fatalf("node page server did not start: %q", sc.Text())
	}
	upstream := "http://127.0.0.1:" + strings.TrimPrefix(sc.Text(), "PORT ")

	enabled := true
	pctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- host.RunProxy(pctx, &host.ProxyOptions{
			Upstream: upstream, Listen: "127.0.0.1:0", Ready: func(u string) { ready <- u },
			Taskbar: host.Options{Owner: s.bc, Getenv: func(string) (string, bool) { return "", false },
				Config: taskbar.Config{Enabled: &enabled, ProjectRoot: s.root, Executable: s.exe}},
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunProxy: %v", err)
		}
	})
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		done <- err
		t.Fatalf("RunProxy: %v", err)
	}

	ctx := browsertest.New(t, nil)
	t.Run("whole page", func(t *testing.T) {
		openPage(t, ctx, base)
		runTask(t, ctx, "Summarize the static page.", wholePageReply)
		if p := modelPrompt(t, s.env, "Summarize the static page.").Context.Location.Path; p != "/" {
			t.Errorf("location path = %q", p)
		}
	})
	t.Run("focused with two marks", func(t *testing.T) {
		openPage(t, ctx, base)
		openPanel(t, ctx)
		mark(t, ctx, `[data-testid="item-b"]`, 1)
		mark(t, ctx, `[data-testid="footer-note"]`, 2)
		setPrompt(t, ctx, kwFocus+": the static items.")
		run(t, ctx)
		wait(t, ctx, "Finished", statusIs("Finished"), taskWait)
		checkFocusPoints(t, modelPrompt(t, s.env, kwFocus+": the static items."), map[string]string{
			`[data-testid="item-b"]`:      "app/views/items/_item.html.erb",
			`[data-testid="footer-note"]`: "app/views/items/index.html.erb",
		})
		browsertest.ClickShadow(t, ctx, "[data-clear]")
	})
	t.Run("stop", func(t *testing.T) {
		openPage(t, ctx, base)
		submit(t, ctx, kwSlow+": through the proxy.")
		wait(t, ctx, "streamed output", browsertest.TextHas("[data-output]", "word word"), taskWait)
		browsertest.ClickShadow(t, ctx, "[data-run]")
		wait(t, ctx, "Stopped", statusIs("Stopped"), taskWait)
		wait(t, ctx, "the warning", browsertest.Shadow(`!root.querySelector("[data-cancel-warning]").hidden`), uiWait)
	})
}
