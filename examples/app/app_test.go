package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/pikit-dev/pikit/examples/app"
	"github.com/pikit-dev/pikit/internal/leakcheck"
	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/host"
)

// TestMain lets this binary be the project broker the acceptance suite
// spawns (`app.test taskbar broker …`, as a host binary's main does with
// broker.Dispatch), and fails the run when goroutines outlive the tests.
func TestMain(m *testing.M) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	ran, err := broker.Dispatch(ctx, os.Args[1:], os.Getenv)
	stop()
	if ran {
		if err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(leakcheck.Run(m))
}

func do(t *testing.T, h http.Handler, method, target string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestApp_Pages(t *testing.T) {
	a := app.New(os.DirFS("."), nil)
	tests := []struct {
		path  string
		wants []string
	}{
		{"/", []string{`data-testid="intro"`, `href="/tasks"`, `aria-current="page">Home`}},
		{"/tasks", []string{`data-testid="task-list"`, `data-testid="task-1"`, `data-testid="task-3-priority"`, "3 open tasks"}},
		{"/tasks/new", []string{`data-testid="new-task-form"`, `name="title"`, `<option value="normal" selected>`}},
		{"/about", []string{`data-testid="about"`}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := do(t, a, "GET", tt.path, nil)
			body := rec.Body.String()
			if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
				t.Fatalf("%d %v", rec.Code, rec.Header())
			}
			if !strings.HasPrefix(body, "<!doctype html>") {
				t.Errorf("page does not start with the doctype (a comment before it would mean quirks mode)")
			}
			for _, w := range tt.wants {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %s", w)
				}
			}
			annotated := strings.Contains(body, "<!-- BEGIN gotmpl:templates/layout.html -->")
			if annotated != host.Enabled {
				t.Errorf("layout annotated = %v in a build with host.Enabled = %v", annotated, host.Enabled)
			}
		})
	}
	if rec := do(t, a, "GET", "/missing", nil); rec.Code != http.StatusNotFound {
		t.Errorf("missing page: %d", rec.Code)
	}
}

func TestApp_Form(t *testing.T) {
	a := app.New(os.DirFS("."), nil)
	rec := do(t, a, "POST", "/tasks/new", url.Values{"title": {"  Ship it <now>  "}, "priority": {"high"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/tasks" {
		t.Fatalf("create: %d %v", rec.Code, rec.Header())
	}
	tasks := a.Tasks()
	if got := tasks[len(tasks)-1]; got.Title != "Ship it <now>" || got.Priority != "high" || got.ID != 4 {
		t.Errorf("new task = %+v", got)
	}
	if body := do(t, a, "GET", "/tasks", nil).Body.String(); !strings.Contains(body, "Ship it &lt;now&gt;") ||
		!strings.Contains(body, `data-testid="task-4"`) {
		t.Errorf("list does not show the escaped new task")
	}
	for _, bad := range []url.Values{
		{"title": {"   "}, "priority": {"low"}},
		{"title": {strings.Repeat("x", app.MaxTitle+1)}, "priority": {"low"}},
		{"title": {"ok"}, "priority": {"urgent"}},
	} {
		rec := do(t, a, "POST", "/tasks/new", bad)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `data-testid="form-error"`) {
			t.Errorf("%v: %d", bad, rec.Code)
		}
	}
	if n := len(a.Tasks()); n != 4 {
		t.Errorf("invalid posts added tasks: %d", n)
	}
	// A cross-site form post is refused.
	req := httptest.NewRequest("POST", "/tasks/new", strings.NewReader("title=x&priority=low"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	rec = httptest.NewRecorder()
	a.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("cross-site post: %d", rec.Code)
	}
}

func TestApp_TemplateErrorShown(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, app.Files); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/templates/about.html", []byte("{{.Broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := do(t, app.New(os.DirFS(dir), nil), "GET", "/about", nil)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "template error") {
		t.Errorf("%d %q", rec.Code, rec.Body.String())
	}
}

// TestApp_SourceHintsWithoutTag: with SourceHints (as `pikit demo` asks),
// the pages carry source comments whatever the build tags.
func TestApp_SourceHintsWithoutTag(t *testing.T) {
	a := app.New(os.DirFS("."), &app.Options{SourceHints: true})
	body := do(t, a, "GET", "/tasks", nil).Body.String()
	for _, want := range []string{"<!-- BEGIN gotmpl:templates/layout.html -->", "<!-- END gotmpl:templates/layout.html -->", "<!-- BEGIN gotmpl:templates/task-item.html -->"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if !strings.HasPrefix(body, "<!doctype html>") {
		t.Error("page does not start with the doctype")
	}
}
