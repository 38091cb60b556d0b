//go:build pitaskbar

package client_test

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/browsertest"
	"github.com/pikit-dev/pikit/internal/leakcheck"
	"github.com/pikit-dev/pikit/taskbar/client"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

const (
	mountBase = "/dev/pi-browser-taskbar"
	csrfToken = "csrf-token-for-tests"
)

// --- scripted snapshot API -------------------------------------------------

func str(s string) *string { return &s }

func sessionSnap(status string) rt.Snapshot {
	s := rt.Snapshot{ContractVersion: 1, Session: rt.SessionState{Status: rt.SessionStatus(status)}}
	switch status {
	case "ready", "busy":
		s.Session.ID, s.Session.Model = str("session-aaaaaaaaaaaaaaaaaaaaaaaa"), str("test/fake-pi")
	case "unavailable":
		s.Session.Error = str("Pi could not be restarted")
	}
	return s
}

func taskSnap(status, activity, output string) rt.Snapshot {
	s := sessionSnap("ready")
	if status == "running" || status == "cancelling" {
		s.Session.Status = "busy"
	}
	t := &rt.TaskState{ID: "task/1", Prompt: "Fix it", Status: rt.TaskStatus(status), Output: output, Activity: activity,
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
	Method  string
	Path    string
	CSRF    string
	IdemKey string // Idempotency-Key header
	Dest    string // Sec-Fetch-Dest header
	Body    []byte
	At      time.Time
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
	snap       rt.Snapshot
	requests   []recorded
	readFaults []readFault
	onPost     func(a *api, body []byte) (status int, resp any, dropConn bool)
	onDelete   func(a *api, id string) (status int, resp any, dropConn bool)
	onReset    func(a *api) (status int, resp any, dropConn bool)
}

func (a *api) set(s rt.Snapshot) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.snap = s
}

func (a *api) setLocked(s rt.Snapshot) { a.snap = s }

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

func errorBody(code string, s *rt.Snapshot) map[string]any {
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

// respond drops the connection when drop is set, else writes resp as JSON
// with status.
func respond(w http.ResponseWriter, status int, resp any, drop bool) {
	if drop {
		dropConnection(w)
		return
	}
	writeJSON(w, status, resp)
}

func (a *api) record(r *http.Request) []byte {
	body, _ := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, recorded{Method: r.Method, Path: strings.TrimPrefix(r.URL.EscapedPath(), mountBase),
		CSRF: r.Header.Get(client.CSRFHeader), IdemKey: r.Header.Get("Idempotency-Key"), Dest: r.Header.Get("Sec-Fetch-Dest"),
		Body: body, At: time.Now()})
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
		respond(w, status, resp, drop)
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
		respond(w, status, resp, drop)
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
		respond(w, status, resp, drop)
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
func newSite(t *testing.T, initial rt.Snapshot, pages map[string]pageOptions) *site {
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
// Engines, evaluation, clicks and screenshots come from internal/browsertest;
// what follows are this package's defaults on top of it.

type browserOptions struct {
	engine        browsertest.Engine // zero means Chromium
	width, height int64
	scale         float64
	media         []browsertest.MediaFeature
}

// newBrowser starts a browser for one test (browsertest.New).
func newBrowser(t *testing.T, o browserOptions) *browsertest.Tab {
	t.Helper()
	return browsertest.New(t, &browsertest.Options{Engine: o.engine, Width: o.width, Height: o.height, Scale: o.scale, Media: o.media})
}

// twoTabs serves a ready session and opens the "plain" page in two tabs of
// one browser of engine e.
func twoTabs(t *testing.T, e browsertest.Engine) (s *site, tabA, tabB *browsertest.Tab) {
	t.Helper()
	s = newSite(t, sessionSnap("ready"), map[string]pageOptions{"plain": {}})
	tabA = newBrowser(t, browserOptions{engine: e})
	open(t, tabA, s.url("plain"))
	tabB = browsertest.NewTab(t, tabA)
	open(t, tabB, s.url("plain"))
	return s, tabA, tabB
}

// open navigates to a page and waits until the taskbar shows a state that
// came from the API.
func open(t *testing.T, ctx *browsertest.Tab, url string) {
	t.Helper()
	browsertest.Navigate(t, ctx, url)
	waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status]").dataset.state !== "starting"`))
}

// waitJS polls a JavaScript predicate until it is truthy (10 s at most).
func waitJS(t *testing.T, ctx *browsertest.Tab, predicate string) {
	t.Helper()
	browsertest.Wait(t, ctx, predicate, predicate, 10*time.Second)
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

func statusOf(t *testing.T, ctx *browsertest.Tab) (text, state string) {
	t.Helper()
	tb := browsertest.Read(t, ctx)
	return tb.Status, tb.State
}

const modShift = browsertest.ModifierShift
