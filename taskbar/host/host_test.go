package host_test

import (
	"bytes"
	"context"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/host"
	"github.com/pikit-dev/pikit/taskbar/internal/tbtest"
)

// TestMain lets this binary stand in for the project broker (tbtest.EnvBroker)
// and fails the run when goroutines outlive the tests.
func TestMain(m *testing.M) { tbtest.Main(m) }

func TestAnnotate(t *testing.T) {
	tests := []struct {
		name, src, path, want string
	}{
		{"fragment", "<p>x</p>", "templates/a.html",
			`{{pikitSourceBegin "templates/a.html"}}<p>x</p>{{pikitSourceEnd "templates/a.html"}}`},
		{"document wrapped inside body", "<!doctype html><html><body class=\"{{.C}}\">\n<p>x</p>\n</body></html>", "l.html",
			"<!doctype html><html><body class=\"{{.C}}\">{{pikitSourceBegin \"l.html\"}}\n<p>x</p>\n{{pikitSourceEnd \"l.html\"}}</body></html>"},
		{"action with > in body tag", `<BODY data-x="{{if gt .N 1}}a{{end}}">y</BODY>`, "b.html",
			`<BODY data-x="{{if gt .N 1}}a{{end}}">{{pikitSourceBegin "b.html"}}y{{pikitSourceEnd "b.html"}}</BODY>`},
		{"bodyx is not body", "<bodyx>z</bodyx>", "c.html",
			`{{pikitSourceBegin "c.html"}}<bodyx>z</bodyx>{{pikitSourceEnd "c.html"}}`},
		{"quote in path", "<p>q</p>", `t/a"b.html`,
			`{{pikitSourceBegin "t/a\"b.html"}}<p>q</p>{{pikitSourceEnd "t/a\"b.html"}}`},
		{"absolute path left alone", "<p>x</p>", "/etc/a.html", "<p>x</p>"},
		{"traversal left alone", "<p>x</p>", "../a.html", "<p>x</p>"},
		{"comment breaker left alone", "<p>x</p>", "a--b.html", "<p>x</p>"},
		{"trailing brace left alone", "<p>{", "a.html", "<p>{"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := host.Annotate(tt.src, tt.path); got != tt.want {
				t.Errorf("Annotate = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseFS(t *testing.T) {
	fsys := fstest.MapFS{
		"templates/page.html": {Data: []byte(`<!doctype html><html><body><main>{{template "item.html" .}}</main></body></html>`)},
		"templates/item.html": {Data: []byte(`<li data-testid="row">{{.}}</li>`)},
	}
	tmpl, err := host.ParseFS(template.New("page.html"), fsys, "web", "templates/*.html")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, "page.html", "<x>"); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	want := `<!doctype html><html><body><main><li data-testid="row">&lt;x&gt;</li></main></body></html>`
	if host.Enabled {
		want = `<!doctype html><html><body><!-- BEGIN gotmpl:web/templates/page.html --><main>` +
			`<!-- BEGIN gotmpl:web/templates/item.html --><li data-testid="row">&lt;x&gt;</li><!-- END gotmpl:web/templates/item.html -->` +
			`</main><!-- END gotmpl:web/templates/page.html --></body></html>`
	}
	if got != want {
		t.Errorf("output =\n%s\nwant\n%s", got, want)
	}
}

func TestParseFS_Errors(t *testing.T) {
	fsys := fstest.MapFS{"a.html": {Data: []byte(`{{.Broken`)}}
	if _, err := host.ParseFS(template.New("x"), fsys, "", "none/*.html"); err == nil || !strings.Contains(err.Error(), "matches no files") {
		t.Errorf("no match: %v", err)
	}
	if _, err := host.ParseFS(template.New("x"), fsys, "", "*.html"); err == nil || !strings.Contains(err.Error(), "parse a.html") {
		t.Errorf("bad template: %v", err)
	}
}

func TestFuncMap(t *testing.T) {
	tmpl := template.Must(template.New("t").Funcs(host.FuncMap()).Parse(
		`{{pikitSourceBegin "t.html"}}<p>x</p>{{pikitSourceEnd "t.html"}}{{pikitSourceBegin "/abs"}}`))
	var b bytes.Buffer
	if err := tmpl.Execute(&b, nil); err != nil {
		t.Fatal(err)
	}
	want := "<p>x</p>"
	if host.Enabled {
		want = "<!-- BEGIN gotmpl:t.html --><p>x</p><!-- END gotmpl:t.html -->"
	}
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestMount checks the development-mode boundary inside one binary: with
// the pitaskbar tag the API, assets and bootstrap appear; without it the
// mux gets no route and pages are untouched. Pi is a missing executable, so
// no Pi process is started in either build.
// appPage is the page mountApp's app serves at every path.
const appPage = "<!doctype html><html><body><p>app</p></body></html>"

// mountApp mounts the taskbar (enabled, in process, with a Pi executable
// that does not exist) on a mux whose app serves appPage.
func mountApp(t *testing.T) (*http.ServeMux, *host.Taskbar) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, appPage)
	})
	enabled := true
	tb, err := host.Mount(t.Context(), mux, &host.Options{
		Config:    taskbar.Config{Enabled: &enabled, ProjectRoot: t.TempDir(), Executable: "/nonexistent/pi"},
		Getenv:    func(string) (string, bool) { return "", false },
		InProcess: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return mux, tb
}

func TestMount(t *testing.T) {
	mux, tb := mountApp(t)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := tb.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	h := tb.Middleware(mux)
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "http://127.0.0.1"+path, nil)
		req.RemoteAddr = "127.0.0.1:5555"
		h.ServeHTTP(rec, req)
		return rec
	}
	page := get("/")
	state := get(taskbar.DefaultMountBase + "/state")
	asset := get(taskbar.DefaultMountBase + "/assets/client.js")
	if !host.Enabled {
		if strings.Contains(page.Body.String(), "pi-browser-taskbar") || page.Header().Get("Set-Cookie") != "" {
			t.Errorf("plain build injected: %q", page.Body.String())
		}
		if strings.Contains(state.Body.String(), "contract_version") || strings.Contains(asset.Body.String(), "use strict") {
			t.Errorf("plain build serves the taskbar: %q %q", state.Body.String(), asset.Body.String())
		}
		if tb.Handler() != nil || tb.MountBase() != "" {
			t.Error("plain build returned a live Taskbar")
		}
		return
	}
	body := page.Body.String()
	for _, want := range []string{`id="pi-browser-taskbar-bootstrap"`, `"mount_base":"/dev/pi-browser-taskbar"`,
		`"remote_access":false`, `src="/dev/pi-browser-taskbar/assets/client.js"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s:\n%s", want, body)
		}
	}
	if !strings.Contains(page.Header().Get("Set-Cookie"), taskbar.CSRFCookieName+"=") {
		t.Errorf("no CSRF cookie set: %v", page.Header())
	}
	if state.Code != http.StatusOK || !strings.Contains(state.Body.String(), `"contract_version":1`) {
		t.Errorf("state: %d %s", state.Code, state.Body.String())
	}
	if asset.Code != http.StatusOK || !strings.HasPrefix(asset.Header().Get("Content-Type"), "text/javascript") {
		t.Errorf("asset: %d %v", asset.Code, asset.Header())
	}
}

func TestMount_Disabled(t *testing.T) {
	mux := http.NewServeMux()
	disabled := false
	tb, err := host.Mount(t.Context(), mux, &host.Options{Config: taskbar.Config{Enabled: &disabled}})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Handler() != nil {
		t.Error("disabled taskbar has a handler")
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", taskbar.DefaultMountBase+"/state", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("disabled mount answers %d", rec.Code)
	}
	if err := tb.Close(t.Context()); err != nil {
		t.Error(err)
	}
}

// TestRunProxy runs `pikit taskbar proxy` in front of a page server: with
// or without the tag (it is a development tool) it injects and serves the
// API.
func TestRunProxy(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html><body><p>upstream</p></body>")
	}))
	defer up.Close()
	enabled := true
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- host.RunProxy(ctx, &host.ProxyOptions{
			Upstream: up.URL, Listen: "127.0.0.1:0", Ready: func(u string) { ready <- u },
			Taskbar: host.Options{
				Config: taskbar.Config{Enabled: &enabled, ProjectRoot: t.TempDir(), Executable: "/nonexistent/pi"},
				Getenv: func(string) (string, bool) { return "", false },
			},
		})
	}()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		t.Fatalf("RunProxy: %v", err)
	}
	for path, want := range map[string]string{"": `id="pi-browser-taskbar-bootstrap"`, "dev/pi-browser-taskbar/state": `"contract_version":1`} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), want) {
			t.Errorf("GET /%s = %q, want %s", path, b, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("RunProxy after cancel = %v", err)
	}
}

// FuzzAnnotate checks that annotation only ever adds the two calls, and
// that a parsable template stays parsable.
func FuzzAnnotate(f *testing.F) {
	f.Add("<!doctype html><body class=\"{{.C}}\">x</body>", "t/a.html")
	f.Add("<body {{if .X}}>{{end}}</body>", "a.html")
	f.Add("<p>{{.}}</p>", "../x")
	// Bytes whose Unicode lower case has another length must not shift offsets.
	f.Add("İİİİ<body>x</body>", "a.html")
	f.Add("\xff\xfe<BODY>x</BODY>", "a.html")
	f.Fuzz(func(t *testing.T, src, p string) {
		got := host.Annotate(src, p)
		if got == src {
			return
		}
		q := strconv.Quote(p)
		begin := "{{" + host.FuncSourceBegin + " " + q + "}}"
		end := "{{" + host.FuncSourceEnd + " " + q + "}}"
		i := strings.Index(got, begin)
		if i < 0 {
			t.Fatalf("no begin call in %q", got)
		}
		rest := got[:i] + got[i+len(begin):]
		j := strings.LastIndex(rest, end)
		if j < i || rest[:j]+rest[j+len(end):] != src {
			t.Fatalf("Annotate(%q, %q) = %q changes more than the two calls", src, p, got)
		}
		if _, err := template.New("x").Funcs(host.FuncMap()).Parse(src); err == nil {
			if _, err := template.New("x").Funcs(host.FuncMap()).Parse(got); err != nil {
				t.Fatalf("annotated template no longer parses: %v\n%q", err, got)
			}
		}
	})
}

// TestMount_RefusedClientGetsNoBootstrap: a client the taskbar API would
// refuse (a remote peer, or a loopback peer naming a foreign host, as in DNS
// rebinding) gets the app's page untouched: no bootstrap, no CSRF cookie.
func TestMount_RefusedClientGetsNoBootstrap(t *testing.T) {
	mux, tb := mountApp(t)
	defer tb.Close(context.Background())
	h := tb.Middleware(mux)
	for _, tc := range []struct {
		name, host, peer string
		inject           bool
	}{
		{"loopback", "127.0.0.1:8080", "127.0.0.1:5555", true},
		{"remote peer", "127.0.0.1:8080", "192.0.2.9:5555", false},
		{"foreign host on loopback", "attacker.example:8080", "127.0.0.1:5555", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", "/", nil)
			req.Host, req.RemoteAddr = tc.host, tc.peer
			h.ServeHTTP(rec, req)
			injected := strings.Contains(rec.Body.String(), "pi-browser-taskbar-bootstrap")
			cookie := rec.Header().Get("Set-Cookie") != ""
			if !host.Enabled {
				tc.inject = false
			}
			if injected != tc.inject || cookie != tc.inject {
				t.Errorf("injected %v, cookie %v; want %v", injected, cookie, tc.inject)
			}
			if !tc.inject && rec.Body.String() != appPage {
				t.Errorf("refused client's page changed: %q", rec.Body.String())
			}
		})
	}
}

// TestAnnotate_OffsetsSurviveNonASCII pins the fuzz finding: the body range
// was searched in strings.ToLower(src), whose byte offsets differ from src
// for "İ" and invalid UTF-8, and Annotate sliced src out of range.
func TestAnnotate_OffsetsSurviveNonASCII(t *testing.T) {
	for _, src := range []string{
		"İİİİİİ<body>x</body>",
		"\xff\xff\xff<BODY>x</BODY>",
		"<body>İ</body>\xff",
	} {
		got := host.Annotate(src, "t/a.html")
		if !strings.Contains(got, ">{{"+host.FuncSourceBegin) || strings.Count(got, host.FuncSourceEnd) != 1 {
			t.Errorf("Annotate(%q) = %q: want the calls inside the body", src, got)
		}
	}
}
