package browsertest_test

import (
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
// elements Read looks at and a button that counts clicks.
const page = `<!doctype html><html><body><a id="link" href="#">link</a><script>
const h = document.createElement("div");
h.id = "pi-browser-taskbar-host";
const root = h.attachShadow({mode: "open"});
root.innerHTML = '<p data-status data-state="ready"><span data-status-text>Ready</span></p><p data-activity>idle</p>' +
  '<pre data-output>out</pre><p data-error></p><p data-retry hidden>r</p><button data-run>Run</button>';
window.clicks = 0;
root.querySelector("[data-run]").addEventListener("click", () => { window.clicks++; root.querySelector("[data-status-text]").textContent = "Working"; });
document.body.appendChild(h);
</script></body></html>`

func TestBrowser(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, page)
	}))
	defer srv.Close()
	ctx := browsertest.New(t, &browsertest.Options{Width: 400, Height: 300})
	browsertest.Navigate(t, ctx, srv.URL)

	got := browsertest.Read(t, ctx)
	want := browsertest.Taskbar{Status: "Ready", State: "ready", Activity: "idle", Output: "out"}
	if got != want {
		t.Errorf("Read = %+v, want %+v", got, want)
	}
	browsertest.ClickShadow(t, ctx, "[data-run]")
	browsertest.Wait(t, ctx, "Working", browsertest.TextIs("[data-status-text]", "Working"), 10*time.Second)
	if n := browsertest.Eval[float64](t, ctx, "window.clicks"); n != 1 {
		t.Errorf("clicks = %v", n)
	}
	if f := browsertest.Focused(t, ctx); f != "data-run" {
		t.Errorf("Focused after the click = %q", f)
	}
	browsertest.Do(t, ctx, `document.getElementById("link").focus()`)
	if f := browsertest.Focused(t, ctx); f != "page:a#link" {
		t.Errorf("Focused on the page = %q", f)
	}
	if v := browsertest.Eval[any](t, ctx, `(() => { const h = `+browsertest.HostJS+`; h.remove(); return `+browsertest.Shadow(`1`)+`; })()`); v != nil {
		t.Errorf("Shadow without a taskbar = %v, want null", v)
	}

	fetchOK := `fetch("/x").then(() => true, () => false)`
	browsertest.SetOffline(t, ctx, true)
	if browsertest.Eval[bool](t, ctx, fetchOK) || browsertest.Eval[bool](t, ctx, "navigator.onLine") {
		t.Error("a fetch succeeded (or navigator.onLine) while offline")
	}
	browsertest.SetOffline(t, ctx, false)
	if !browsertest.Eval[bool](t, ctx, fetchOK) {
		t.Error("a fetch failed after going back online")
	}
	if p := browsertest.Screenshot(t, ctx, t.TempDir(), "x.png"); p == "" {
		t.Error("no screenshot path")
	}
}

func TestJSString(t *testing.T) {
	for in, want := range map[string]string{`a"b`: `"a\"b"`, "</script>": `"\u003c/script\u003e"`, "": `""`} {
		if got := browsertest.JSString(in); got != want {
			t.Errorf("JSString(%q) = %s, want %s", in, got, want)
		}
	}
}
