//go:build pitaskbar

package client_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/pikit-dev/pikit/internal/browsertest"
	"github.com/pikit-dev/pikit/taskbar/client"
	"github.com/pikit-dev/pikit/taskbar/inject"
)

const frameText = "Elements inside a frame cannot be marked. Mark the frame element's surroundings on this page, or open the framed page on its own to mark inside it."

// markingOnFramedPage opens the "framed" page, whose same-origin iframe
// shows the "inner" page (both carry the bootstrap, as a host that injects
// every page would), opens the panel and turns marking on.
func markingOnFramedPage(t *testing.T) (*site, *browsertest.Tab) {
	t.Helper()
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"framed": {}, "inner": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("framed"))
	waitJS(t, ctx, `(() => { const d = document.querySelector("iframe").contentDocument; return !!d && d.readyState === "complete" && !!d.getElementById("inside"); })()`)
	browsertest.ClickShadow(t, ctx, "[data-launcher]")
	browsertest.ClickShadow(t, ctx, "[data-mark]")
	waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-mark]").getAttribute("aria-pressed") === "true"`))
	return s, ctx
}

type markingView struct {
	Pressed, Error string
	Marks          int
	FrameTaskbars  int
}

func readMarking(t *testing.T, ctx *browsertest.Tab) markingView {
	t.Helper()
	return browsertest.Eval[markingView](t, ctx, browsertest.Shadow(`({Pressed: root.querySelector("[data-mark]").getAttribute("aria-pressed"),
		Error: root.querySelector("[data-error]").hidden ? "" : root.querySelector("[data-error]").textContent,
		Marks: root.querySelectorAll("[data-marks] li").length,
		FrameTaskbars: document.querySelector("iframe").contentDocument.querySelectorAll("#pi-browser-taskbar-host").length})`))
}

// TestBrowserClient_FrameMarkingRefused: a click inside an iframe while
// marking ends marking with guidance instead of leaving it on with nothing
// marked; the framed page itself got no second taskbar.
func TestBrowserClient_FrameMarkingRefused(t *testing.T) {
	_, ctx := markingOnFramedPage(t)
	browsertest.ClickPage(t, ctx, "iframe")
	waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-mark]").getAttribute("aria-pressed") === "false"`))
	if got, want := readMarking(t, ctx), (markingView{Pressed: "false", Error: frameText}); got != want {
		t.Errorf("after a click in the frame:\n got %+v\nwant %+v", got, want)
	}
	if f := browsertest.Focused(t, ctx); f != "data-mark" {
		t.Errorf("focus on %s, want Mark element", f)
	}
}

// TestBrowserClient_EscapeFromFrameCancelsMarking: with focus moved into a
// same-origin iframe while marking, Escape still cancels marking (no
// refusal message: the user only cancelled).
func TestBrowserClient_EscapeFromFrameCancelsMarking(t *testing.T) {
	_, ctx := markingOnFramedPage(t)
	browsertest.Do(t, ctx, `document.querySelector("iframe").contentDocument.getElementById("inside").focus()`)
	waitJS(t, ctx, `document.activeElement === document.querySelector("iframe")`)
	browsertest.Key(t, ctx, "\u001b")
	waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-mark]").getAttribute("aria-pressed") === "false"`))
	if got, want := readMarking(t, ctx), (markingView{Pressed: "false"}); got != want {
		t.Errorf("after Escape in the frame:\n got %+v\nwant %+v", got, want)
	}
}

// TestInject_FrameDocumentsGetNoTaskbar: behind inject.Middleware (what
// `pikit taskbar proxy` and the Go host use), Chromium's iframe request
// says Sec-Fetch-Dest: iframe and its document gets no bootstrap, while the
// top-level page gets one.
func TestInject_FrameDocumentsGetNoTaskbar(t *testing.T) {
	a := &api{snap: sessionSnap("ready")}
	var mu sync.Mutex
	dests := map[string]string{}
	pages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		dests[r.URL.Path] = r.Header.Get("Sec-Fetch-Dest")
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/top":
			io.WriteString(w, `<!doctype html><html lang="en"><head><title>Top</title></head><body><iframe src="/frame" title="Frame"></iframe></body></html>`)
		case "/frame":
			io.WriteString(w, `<!doctype html><html lang="en"><head><title>Frame</title></head><body><p id="framed">Framed</p></body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
	m := &inject.Middleware{Snippet: func(w http.ResponseWriter, r *http.Request) []byte {
		b, err := client.Markup(client.Bootstrap{MountBase: mountBase, CSRFToken: csrfToken})
		if err != nil {
			t.Error(err)
		}
		return []byte(b)
	}}
	mux := http.NewServeMux()
	mux.Handle(mountBase+"/", a.handler())
	mux.Handle("/", m.Handler(pages))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, srv.URL+"/top")
	waitJS(t, ctx, `(() => { const d = document.querySelector("iframe").contentDocument; return !!d && d.readyState === "complete" && !!d.getElementById("framed"); })()`)
	type view struct{ Top, Frame int }
	got := browsertest.Eval[view](t, ctx, `({Top: document.querySelectorAll("#pi-browser-taskbar-bootstrap").length,
		Frame: document.querySelector("iframe").contentDocument.querySelectorAll("#pi-browser-taskbar-bootstrap, #pi-browser-taskbar-host").length})`)
	if got != (view{Top: 1, Frame: 0}) {
		t.Errorf("bootstraps: %+v, want one on the top page and none in the frame", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if dests["/top"] != "document" || dests["/frame"] != "iframe" {
		t.Errorf("Sec-Fetch-Dest seen: %v", dests)
	}
}
