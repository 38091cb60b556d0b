//go:build pitaskbar

package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/pikit-dev/pikit/internal/leakcheck"
	"github.com/pikit-dev/pikit/taskbar/client"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

const (
	mountBase = "/dev/pi-browser-taskbar"
	csrfToken = "csrf-token-for-tests"
	hostJS    = `document.getElementById("pi-browser-taskbar-host")`
)

// --- scripted snapshot API -------------------------------------------------

type session struct {
	ID     *string `json:"id"`
	Status string  `json:"status"`
	Model  *string `json:"model"`
	Error  *string `json:"error"`
}

type task struct {
	ID              string  `json:"id"`
	Prompt          string  `json:"prompt"`
	Status          string  `json:"status"`
	Output          string  `json:"output"`
	OutputTruncated bool    `json:"output_truncated"`
	Activity        string  `json:"activity"`
	Error           *string `json:"error"`
	StartedAt       string  `json:"started_at"`
	FinishedAt      *string `json:"finished_at"`
}

type snapshot struct {
	ContractVersion int     `json:"contract_version"`
	Session         session `json:"session"`
	Task            *task   `json:"task"`
}

func str(s string) *string { return &s }

func sessionSnap(status string) snapshot {
	s := snapshot{ContractVersion: 1, Session: session{Status: status}}
	switch status {
	case "ready", "busy":
		s.Session.ID, s.Session.Model = str("session-aaaaaaaaaaaaaaaaaaaaaaaa"), str("test/fake-pi")
	case "unavailable":
		s.Session.Error = str("Pi could not be restarted")
	}
	return s
}

func taskSnap(status, activity, output string) snapshot {
	s := sessionSnap("ready")
	if status == "running" || status == "cancelling" {
		s.Session.Status = "busy"
	}
	t := &task{ID: "task/1", Prompt: "Fix it", Status: status, Output: output, Activity: activity,
		StartedAt: "2026-11-29T20:00:00.000000Z"}
	switch status {
	case "completed", "failed", "cancelled":
		t.FinishedAt = str("2026-11-29T20:01:00.000000Z")
	}
	if status == "failed" {
		t.Error = str("Pi reported a message error")
	}
	s.Task = t
	return s
}

type recorded struct {
	Method string
	Path   string
	CSRF   string
	Body   []byte
	At     time.Time
}

// readFault says how the next GET /state requests fail.
type readFault int

const (
	faultNone readFault = iota
	faultHTTP
	faultNetwork
)

// api is a small Go fake of the taskbar HTTP API with canned snapshots; it
// records every request. Mutation behaviour is scripted per test.
type api struct {
	mu         sync.Mutex
	token      string // accepted CSRF token; empty means csrfToken
	snap       snapshot
	requests   []recorded
	readFaults []readFault
	onPost     func(a *api, body []byte) (status int, resp any, dropConn bool)
	onDelete   func(a *api, id string) (status int, resp any, dropConn bool)
	onReset    func(a *api) (status int, resp any, dropConn bool)
}

func (a *api) set(s snapshot) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.snap = s
}

func (a *api) setLocked(s snapshot) { a.snap = s }

func (a *api) failReads(f ...readFault) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.readFaults = append(a.readFaults, f...)
}

func (a *api) recorded(method, path string) []recorded {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []recorded
	for _, r := range a.requests {
		if r.Method == method && (path == "" || r.Path == path) {
			out = append(out, r)
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func errorBody(code string, s *snapshot) map[string]any {
	body := map[string]any{"error": map[string]string{"code": code, "message": "server text " + code}}
	if s != nil {
		body["snapshot"] = *s
	}
	return body
}

func dropConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

func (a *api) record(r *http.Request) []byte {
	body, _ := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, recorded{Method: r.Method, Path: strings.TrimPrefix(r.URL.EscapedPath(), mountBase),
		CSRF: r.Header.Get(client.CSRFHeader), Body: body, At: time.Now()})
	return body
}

func (a *api) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+mountBase+"/state", func(w http.ResponseWriter, r *http.Request) {
		a.record(r)
		a.mu.Lock()
		fault := faultNone
		if len(a.readFaults) > 0 {
			fault, a.readFaults = a.readFaults[0], a.readFaults[1:]
		}
		s := a.snap
		a.mu.Unlock()
		switch fault {
		case faultHTTP:
			writeJSON(w, http.StatusServiceUnavailable, errorBody("unavailable", nil))
		case faultNetwork:
			dropConnection(w)
		default:
			writeJSON(w, http.StatusOK, s)
		}
	})
	mux.HandleFunc("POST "+mountBase+"/tasks", func(w http.ResponseWriter, r *http.Request) {
		body := a.record(r)
		a.mu.Lock()
		want := a.token
		if want == "" {
			want = csrfToken
		}
		if r.Header.Get(client.CSRFHeader) != want {
			a.mu.Unlock()
			writeJSON(w, http.StatusUnprocessableEntity, errorBody("invalid_csrf", nil))
			return
		}
		status, resp, drop := http.StatusAccepted, any(nil), false
		if a.onPost != nil {
			status, resp, drop = a.onPost(a, body)
		} else {
			s := taskSnap("running", "Starting Pi", "")
			a.snap = s
			resp = s
		}
		a.mu.Unlock()
		if drop {
			dropConnection(w)
			return
		}
		writeJSON(w, status, resp)
	})
	mux.HandleFunc("DELETE "+mountBase+"/tasks/{id}", func(w http.ResponseWriter, r *http.Request) {
		a.record(r)
		a.mu.Lock()
		status, resp, drop := http.StatusAccepted, any(nil), false
		if a.onDelete != nil {
			status, resp, drop = a.onDelete(a, r.PathValue("id"))
		} else {
			s := a.snap
			if s.Task != nil {
				t := *s.Task
				t.Status, t.Activity = "cancelling", "Stopping Pi"
				s.Task = &t
			}
			a.snap = s
			resp = s
		}
		a.mu.Unlock()
		if drop {
			dropConnection(w)
			return
		}
		writeJSON(w, status, resp)
	})
	mux.HandleFunc("POST "+mountBase+"/session/reset", func(w http.ResponseWriter, r *http.Request) {
		a.record(r)
		a.mu.Lock()
		status, resp, drop := http.StatusAccepted, any(nil), false
		if a.onReset != nil {
			status, resp, drop = a.onReset(a)
		} else {
			s := sessionSnap("ready")
			s.Session.ID = str("session-bbbbbbbbbbbbbbbbbbbbbbbb")
			a.snap = s
			resp = s
		}
		a.mu.Unlock()
		if drop {
			dropConnection(w)
			return
		}
		writeJSON(w, status, resp)
	})
	mux.HandleFunc("GET "+mountBase+"/assets/{name}", func(w http.ResponseWriter, r *http.Request) {
		data, err := fs.ReadFile(client.FS(), r.PathValue("name"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		ct := "text/css; charset=utf-8"
		if strings.HasSuffix(r.PathValue("name"), ".js") {
			ct = "text/javascript; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(data)
	})
	return mux
}

// --- pages -------------------------------------------------------------------

type pageOptions struct {
	RemoteAccess bool
	ProjectApp   string
	NoBootstrap  bool
}

type site struct {
	api    *api
	server *httptest.Server
	pages  map[string]pageOptions
}

// newSite serves testdata/pages/<name>.html at /<name> with the bootstrap
// markup replacing {{BOOTSTRAP}}, plus the scripted API and the assets.
func newSite(t *testing.T, initial snapshot, pages map[string]pageOptions) *site {
	t.Helper()
	s := &site{api: &api{snap: initial}, pages: pages}
	mux := http.NewServeMux()
	mux.Handle(mountBase+"/", s.api.handler())
	mux.HandleFunc("GET /{page}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("page")
		opts, ok := s.pages[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		raw, err := os.ReadFile(filepath.Join("testdata", "pages", name+".html"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		markup := ""
		if !opts.NoBootstrap {
			m, err := client.Markup(client.Bootstrap{MountBase: mountBase, CSRFToken: csrfToken,
				RemoteAccess: opts.RemoteAccess, ProjectApp: opts.ProjectApp})
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			markup = string(m)
		} else {
			markup = `<script src="` + mountBase + `/assets/client.js" defer></script>`
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(bytes.ReplaceAll(raw, []byte("{{BOOTSTRAP}}"), []byte(markup)))
	})
	s.server = httptest.NewUnstartedServer(mux)
	// Chromium silently resends a request whose reused keep-alive connection
	// closes before any answer; fresh connections make a dropped answer a real
	// ambiguous result that only the client's own logic can handle.
	s.server.Config.SetKeepAlivesEnabled(false)
	s.server.Start()
	t.Cleanup(s.server.Close)
	return s
}

func (s *site) url(page string) string { return s.server.URL + "/" + page }

// --- browser -----------------------------------------------------------------

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("PIKIT_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is required under CI=true (install it with scripts/install-test-deps)")
	}
	t.Skip("chromium not found; set PIKIT_CHROMIUM or install /usr/bin/chromium")
	return ""
}

type browserOptions struct {
	width, height int64
	scale         float64
	media         []*emulation.MediaFeature
}

// newBrowser starts a headless chromium for one test and returns a chromedp
// context bound to it; the browser stops when the test ends.
func newBrowser(t *testing.T, o browserOptions) context.Context {
	t.Helper()
	path := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true), chromedp.Flag("no-first-run", true))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	if o.width == 0 {
		o.width, o.height = 1280, 800
	}
	if o.scale == 0 {
		o.scale = 1
	}
	must(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(o.width, o.height, chromedp.EmulateScale(o.scale)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: o.media})
			return err
		}),
	))
	return ctx
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// open navigates to a page and waits until the taskbar shows a state that
// came from the API.
func open(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	must(t, chromedp.Do(ctx, chromedp.Navigate(url)))
	waitJS(t, ctx, `(() => { const h = `+hostJS+`; return h && h.shadowRoot && h.shadowRoot.querySelector("[data-status]").dataset.state !== "starting" })()`)
}

// evalJS evaluates expression (awaiting promises) and decodes the result.
func evalJS[T any](t *testing.T, ctx context.Context, expression string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expression, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %.120q: %v", expression, err)
	}
	return v
}

func doJS(t *testing.T, ctx context.Context, expression string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`(() => { `+expression+`; return null })()`))
	if err != nil && err != chromedp.ErrJSNull {
		t.Fatalf("evaluate %.120q: %v", expression, err)
	}
}

// waitJS polls a JavaScript predicate until it is truthy (10 s at most).
func waitJS(t *testing.T, ctx context.Context, predicate string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](predicate,
		chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(25*time.Millisecond))); err != nil {
		t.Fatalf("waiting for %s: %v", predicate, err)
	}
}

// waitUntil polls a Go condition (the fake API's records) for at most 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// shadow returns a JS expression evaluated with `root` bound to the
// taskbar's shadow root.
func shadow(expr string) string {
	return `(() => { const root = ` + hostJS + `.shadowRoot; return (` + expr + `); })()`
}

func statusOf(t *testing.T, ctx context.Context) (text, state string) {
	t.Helper()
	v := evalJS[[]string](t, ctx, shadow(`[root.querySelector("[data-status-text]").textContent, root.querySelector("[data-status]").dataset.state]`))
	return v[0], v[1]
}

// clickShadow clicks a taskbar control with a real pointer event at its centre.
func clickShadow(t *testing.T, ctx context.Context, selector string) {
	t.Helper()
	clickAt(t, ctx, shadow(`root.querySelector(`+jsString(selector)+`)`))
}

// clickPage clicks a host-page element with a real pointer event.
func clickPage(t *testing.T, ctx context.Context, selector string) {
	t.Helper()
	clickAt(t, ctx, `document.querySelector(`+jsString(selector)+`)`)
}

func clickAt(t *testing.T, ctx context.Context, elementExpr string) {
	t.Helper()
	pt := evalJS[[]float64](t, ctx, `(() => { const e = `+elementExpr+`; e.scrollIntoView({block: "start"}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`)
	must(t, chromedp.Do(ctx, chromedp.MouseClickXY(pt[0], pt[1])))
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func typeText(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	must(t, chromedp.Do(ctx, chromedp.KeyEvent(text)))
}

func press(t *testing.T, ctx context.Context, key string, mods ...chromedp.Modifier) {
	t.Helper()
	var opts []chromedp.KeyOption
	if len(mods) > 0 {
		opts = append(opts, chromedp.KeyModifiers(mods...))
	}
	must(t, chromedp.Do(ctx, chromedp.KeyEvent(key, opts...)))
}

// activeInTaskbar names the focused taskbar control by its data attribute or
// id, or "page:<tag>#<id>" when focus is on the host page.
func activeInTaskbar(t *testing.T, ctx context.Context) string {
	t.Helper()
	return evalJS[string](t, ctx, `(() => {
		const host = `+hostJS+`;
		if (document.activeElement !== host) { const e = document.activeElement; return "page:" + (e ? e.localName + "#" + e.id : ""); }
		const e = host.shadowRoot.activeElement;
		if (!e) return "none";
		for (const a of ["data-launcher", "data-prompt", "data-mark", "data-clear", "data-run", "data-copy", "data-close"]) if (e.hasAttribute(a)) return a;
		return e.localName + "." + e.className;
	})()`)
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	must(t, err)
	path := filepath.Join(dir, name)
	must(t, os.WriteFile(path, png, 0o600))
	return path
}

func screenshotDir(t *testing.T) string {
	if dir := os.Getenv("PIKIT_SCREENSHOT_DIR"); dir != "" {
		must(t, os.MkdirAll(dir, 0o700))
		return dir
	}
	return t.TempDir()
}

const modShift = chromedp.ModifierShift

func chromedpNavigate(ctx context.Context, url string) error {
	return chromedp.Do(ctx, chromedp.Navigate(url))
}
