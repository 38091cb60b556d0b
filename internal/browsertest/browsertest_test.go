package browsertest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/browsertest"
	"github.com/pikit-dev/pikit/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// page has a stand-in taskbar: a host with an open shadow root holding the
// elements Read looks at, a button that counts clicks and an input that
// records unshifted keys (WebKitGTK's WebDriver names a Shift+Tab
// "Unidentified"; the focus move is what counts).
const page = `<!doctype html><html><body><a id="link" href="#">link</a><script>
const h = document.createElement("div");
h.id = "pi-browser-taskbar-host";
const root = h.attachShadow({mode: "open"});
root.innerHTML = '<p data-status data-state="ready"><span data-status-text>Ready</span></p><p data-activity>idle</p>' +
  '<pre data-output>out</pre><p data-error></p><p data-retry hidden>r</p><button data-run>Run</button><input data-prompt>';
window.clicks = 0;
window.keys = [];
root.querySelector("[data-run]").addEventListener("click", () => { window.clicks++; root.querySelector("[data-status-text]").textContent = "Working"; });
root.querySelector("[data-prompt]").addEventListener("keydown", (e) => e.shiftKey || window.keys.push(e.key));
document.body.appendChild(h);
</script></body></html>`

func serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestBrowser(t *testing.T) {
	srv := serve(t)
	browsertest.ForEachEngine(t, func(t *testing.T, e browsertest.Engine) {
		tab := browsertest.New(t, &browsertest.Options{Engine: e, Width: 400, Height: 300,
			Media: []browsertest.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}})
		browsertest.Navigate(t, tab, srv.URL)

		got := browsertest.Read(t, tab)
		want := browsertest.Taskbar{Status: "Ready", State: "ready", Activity: "idle", Output: "out"}
		if got != want {
			t.Errorf("Read = %+v, want %+v", got, want)
		}
		browsertest.ClickShadow(t, tab, "[data-run]")
		browsertest.Wait(t, tab, "Working", browsertest.TextIs("[data-status-text]", "Working"), 10*time.Second)
		if n := browsertest.Eval[float64](t, tab, "window.clicks"); n != 1 {
			t.Errorf("clicks = %v", n)
		}
		if f := browsertest.Focused(t, tab); f != "data-run" {
			t.Errorf("Focused after the click = %q", f)
		}

		// Keys typed into a control inside the open shadow root, and Tab out
		// of it back to the page.
		browsertest.ClickShadow(t, tab, "[data-prompt]")
		browsertest.Key(t, tab, "ab\r")
		browsertest.Key(t, tab, "\t", browsertest.ModifierShift)
		browsertest.Key(t, tab, "\u001b")
		if v := browsertest.Eval[string](t, tab, browsertest.Shadow(`root.querySelector("[data-prompt]").value`)); v != "ab" {
			t.Errorf("typed value = %q", v)
		}
		keys := browsertest.Eval[[]string](t, tab, "window.keys")
		if wantKeys := []string{"a", "b", "Enter"}; !equal(keys, wantKeys) {
			t.Errorf("keys seen = %q, want %q", keys, wantKeys)
		}
		if f := browsertest.Focused(t, tab); f != "data-run" {
			t.Errorf("Focused after Shift+Tab = %q, want data-run", f)
		}

		browsertest.Do(t, tab, `document.getElementById("link").focus()`)
		if f := browsertest.Focused(t, tab); f != "page:a#link" {
			t.Errorf("Focused on the page = %q", f)
		}
		if v := browsertest.Eval[any](t, tab, `(() => { const h = `+browsertest.HostJS+`; h.remove(); return `+browsertest.Shadow(`1`)+`; })()`); v != nil {
			t.Errorf("Shadow without a taskbar = %v, want null", v)
		}
		if p := browsertest.Screenshot(t, tab, t.TempDir(), "x.png"); !isPNG(t, p) {
			t.Errorf("screenshot %s is not a PNG", p)
		}

		// A second tab of the same browser shares its broadcast channels.
		other := browsertest.NewTab(t, tab)
		browsertest.Navigate(t, other, srv.URL)
		browsertest.Do(t, tab, `window.heard = null; new BroadcastChannel("bt").onmessage = (m) => { window.heard = m.data; }`)
		browsertest.Do(t, other, `new BroadcastChannel("bt").postMessage("hello")`)
		browsertest.Wait(t, tab, "the other tab's message", `window.heard === "hello"`, 10*time.Second)
		if vis := browsertest.Eval[[]string](t, tab, `[document.visibilityState]`); vis[0] != "visible" {
			t.Errorf("first tab is %s with a second tab open", vis[0])
		}
		// Closing the second tab ends its page: the first tab hears it leave.
		browsertest.Do(t, tab, `window.left = false; new BroadcastChannel("bye").onmessage = () => { window.left = true; }`)
		browsertest.Do(t, other, `addEventListener("pagehide", () => new BroadcastChannel("bye").postMessage("x"))`)
		browsertest.CloseTab(t, other)
		browsertest.Wait(t, tab, "the closed tab's pagehide", `window.left`, 10*time.Second)
		if _, err := browsertest.EvalJSON(tab, `(() => { throw new Error("boom") })()`); err == nil {
			t.Error("an exception did not fail the evaluation")
		}
		if v, err := browsertest.EvalJSON(tab, `Promise.resolve(undefined)`); v != "null" || err != nil {
			t.Errorf("undefined from a promise = %s, %v; want null", v, err)
		}
	})
}

func TestSetOffline(t *testing.T) {
	srv := serve(t)
	tab := browsertest.New(t, &browsertest.Options{Width: 400, Height: 300})
	browsertest.Navigate(t, tab, srv.URL)
	fetchOK := `fetch("/x").then(() => true, () => false)`
	browsertest.SetOffline(t, tab, true)
	if browsertest.Eval[bool](t, tab, fetchOK) || browsertest.Eval[bool](t, tab, "navigator.onLine") {
		t.Error("a fetch succeeded (or navigator.onLine) while offline")
	}
	browsertest.SetOffline(t, tab, false)
	if !browsertest.Eval[bool](t, tab, fetchOK) {
		t.Error("a fetch failed after going back online")
	}
}

func TestJSString(t *testing.T) {
	for in, want := range map[string]string{`a"b`: `"a\"b"`, "</script>": `"\u003c/script\u003e"`, "": `""`} {
		if got := browsertest.JSString(in); got != want {
			t.Errorf("JSString(%q) = %s, want %s", in, got, want)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func isPNG(t *testing.T, path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n"))
}

// TestRunFresh: an action DevTools refused for a replaced document is sent
// again until it runs; any other error, or the end of ctx, ends the retries.
func TestRunFresh(t *testing.T) {
	stale := errors.New("exception: Cannot find context with specified id (-32000)")
	calls := 0
	v, err := browsertest.RunFresh(t.Context(), func() (int, error) {
		if calls++; calls < 3 {
			return 0, stale
		}
		return 7, nil
	})
	if v != 7 || err != nil || calls != 3 {
		t.Fatalf("RunFresh = %d, %v after %d calls; want 7, nil after 3", v, err, calls)
	}
	other := errors.New("net::ERR_CONNECTION_REFUSED")
	calls = 0
	if _, err := browsertest.RunFresh(t.Context(), func() (int, error) { calls++; return 0, other }); err != other || calls != 1 {
		t.Fatalf("another error: %v after %d calls; want it after 1", err, calls)
	}
	ctx, cancel := context.WithCancel(t.Context())
	calls = 0
	_, err = browsertest.RunFresh(ctx, func() (int, error) {
		if calls++; calls == 2 {
			cancel()
		}
		return 0, stale
	})
	if err != stale || calls != 2 {
		t.Fatalf("after ctx ended: %v after %d calls; want the stale error after 2", err, calls)
	}
}
