// Package app is the pikit example application: a small Go web app with a
// few html/template pages (a task list with data-testid attributes, a form,
// link navigation) that `pikit demo` serves with the taskbar mounted.
//
// # Templates
//
// The pages are read from templates/*.html in the file system given to [New]
// on every request, so a change Pi makes to a template shows on the next
// reload. They are parsed with [host.ParseFS], which in pitaskbar builds
// wraps each template's output in source comments; the Browser Client turns
// them into `template` source hints such as templates/tasks.html.
//
// # Example
//
//	a := app.New(os.DirFS("examples/app"), nil)
//	srv := &http.Server{Addr: "127.0.0.1:8080", Handler: a, ReadHeaderTimeout: 10 * time.Second,
//		ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 30 * time.Second}
//	err := srv.ListenAndServe()
package app

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"
)

// Files holds the example's templates, for copying the example somewhere
// when no checkout is at hand.
//
//go:embed templates/*.html
var Files embed.FS

// Priorities are the choices of the form's select.
var priorities = []string{"low", "normal", "high"}

// MaxTitle is the longest task title accepted, in bytes.
const MaxTitle = 100

// Task is one row of the task list.
type Task struct {
	ID       int
	Title    string
	Priority string
}

// Options configure [New]; nil means defaults.
type Options struct {
	// Prefix is the path of the file system's root relative to the project
	// root, used in source annotations; "" when they are the same.
	Prefix string
	// Logger receives template errors; nil discards.
	Logger *slog.Logger
	// SourceHints wraps each template's output in source comments whatever
	// the build tags (`pikit demo`, a development tool); otherwise only
	// pitaskbar builds annotate (see [host.ParseFS]).
	SourceHints bool
}

// App is the example application, an http.Handler. It is safe for
// concurrent use. Its task list lives in memory.
type App struct {
	fsys   fs.FS
	prefix string
	hints  bool
	log    *slog.Logger
	mux    *http.ServeMux
	handle http.Handler

	mu     sync.Mutex
	tasks  []Task
	nextID int
}

// New returns the app serving the templates in fsys (templates/*.html at
// its root), seeded with three tasks.
func New(fsys fs.FS, opts *Options) *App {
	var o Options
	if opts != nil {
		o = *opts
	}
	a := &App{fsys: fsys, prefix: o.Prefix, hints: o.SourceHints, log: o.Logger, mux: http.NewServeMux()}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	for _, t := range []Task{
		{Title: "Write the README", Priority: "high"},
		{Title: "Mark an element on this page", Priority: "normal"},
		{Title: "Ask Pi to change it", Priority: "low"},
	} {
		a.add(t.Title, t.Priority)
	}
	a.mux.HandleFunc("GET /{$}", a.home)
	a.mux.HandleFunc("GET /tasks", a.list)
	a.mux.HandleFunc("GET /tasks/new", a.newForm)
	a.mux.HandleFunc("POST /tasks/new", a.create)
	a.mux.HandleFunc("GET /about", a.about)
	a.handle = http.NewCrossOriginProtection().Handler(a.mux)
	return a
}

// ServeHTTP serves the pages.
func (a *App) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.handle.ServeHTTP(w, r) }

// Tasks returns a copy of the task list.
func (a *App) Tasks() []Task {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Task(nil), a.tasks...)
}

func (a *App) add(title, priority string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextID++
	a.tasks = append(a.tasks, Task{ID: a.nextID, Title: title, Priority: priority})
}

type page struct {
	Page       string
	Title      string
	Body       template.HTML
	Tasks      []Task
	Priorities []string
	Form       Task
	Error      string
}

// render executes the page template into the layout.
func (a *App) render(w http.ResponseWriter, status int, name string, p page) {
	t, err := a.parse()
	if err != nil {
		a.fail(w, err)
		return
	}
	var body bytes.Buffer
	if err := t.ExecuteTemplate(&body, name, p); err != nil {
		a.fail(w, err)
		return
	}
	p.Body = template.HTML(body.String())
	var doc bytes.Buffer
	if err := t.ExecuteTemplate(&doc, "layout.html", p); err != nil {
		a.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(doc.Bytes())
}

// fail shows a template error: this is a development app, and Pi may have
// just edited a template.
func (a *App) fail(w http.ResponseWriter, err error) {
	a.log.Error("example app: template", "err", err)
	http.Error(w, "template error: "+err.Error(), http.StatusInternalServerError)
}

func (a *App) home(w http.ResponseWriter, r *http.Request) {
	a.render(w, http.StatusOK, "home.html", page{Page: "home", Title: "Home"})
}

func (a *App) list(w http.ResponseWriter, r *http.Request) {
	a.render(w, http.StatusOK, "tasks.html", page{Page: "tasks", Title: "Tasks", Tasks: a.Tasks()})
}

func (a *App) about(w http.ResponseWriter, r *http.Request) {
	a.render(w, http.StatusOK, "about.html", page{Page: "about", Title: "About"})
}

func (a *App) newForm(w http.ResponseWriter, r *http.Request) {
	a.render(w, http.StatusOK, "new.html", page{Page: "new", Title: "New task", Priorities: priorities,
		Form: Task{Priority: "normal"}})
}

func (a *App) create(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "form too large or malformed", http.StatusBadRequest)
		return
	}
	title := strings.TrimSpace(r.PostForm.Get("title"))
	prio := r.PostForm.Get("priority")
	form := Task{Title: title, Priority: prio}
	var problem string
	switch {
	case title == "":
		problem = "Please give the task a title."
	case len(title) > MaxTitle || !utf8.ValidString(title):
		problem = fmt.Sprintf("The title must be valid text of at most %d bytes.", MaxTitle)
	case !contains(priorities, prio):
		problem = "Please pick a priority from the list."
		form.Priority = "normal"
	}
	if problem != "" {
		a.render(w, http.StatusUnprocessableEntity, "new.html", page{Page: "new", Title: "New task",
			Priorities: priorities, Form: form, Error: problem})
		return
	}
	a.add(title, prio)
	http.Redirect(w, r, "/tasks", http.StatusSeeOther)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
