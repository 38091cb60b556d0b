// Package host puts the taskbar into a Go web application: it mounts the
// taskbar API and Browser Client assets on a ServeMux, injects the bootstrap
// into the application's HTML pages, and annotates html/template output
// with source comments that the Browser Client turns into `template` source
// hints (issue 5 item 2; seed 000 "Server-owned configuration and
// activation"; reference taskbar.md §10–12).
//
// # Development mode is a build tag
//
// Everything here is real only in binaries built with `-tags pitaskbar`.
// Without the tag, [Mount] registers no route and returns an inert [Taskbar]
// whose middleware returns the application handler itself, no Pi is ever
// started, the template helpers emit nothing, and the Browser Client's bytes
// are not in the binary. [Enabled] tells which build this is. The
// development tools of cmd/pikit (`pikit demo`, `pikit taskbar proxy`) use
// [MountTool] and [RunProxy], which serve the taskbar whatever the tags; a
// binary that never calls them links none of it.
//
// # Mounting
//
//	mux := http.NewServeMux()
//	mux.Handle("/", app)
//	tb, err := host.Mount(ctx, mux, &host.Options{Config: taskbar.Config{ProjectRoot: "."}})
//	if err != nil {
//		return err // a malformed setting, named in the error
//	}
//	defer tb.Close(context.Background())
//	srv := &http.Server{Handler: tb.Middleware(mux), ...}
//
// # Who owns Pi
//
// The host process is disposable (hot reload restarts it); the broker and
// Pi are not (DESIGN.md). So with a nil [Options.Owner], Mount talks to the
// project broker through a [broker.Client] and [Taskbar.Close] leaves the
// broker, Pi and a running task alone: the next host process finds them.
// The broker is spawned on demand from the host binary itself when its main
// calls [broker.Dispatch] and says so ([Options.SelfBroker]), else from
// `pikit taskbar broker` on PATH; with neither, Pi runs in-process.
// [Options.InProcess] asks for the in-process runtime outright: `pikit
// demo` and `pikit taskbar proxy` use it so that Ctrl-C stops Pi too.
//
//	func main() {
//		if ran, err := broker.Dispatch(ctx, os.Args[1:], os.Getenv); ran { … }
//		…
//		tb, err := host.Mount(ctx, mux, &host.Options{SelfBroker: true})
//
// A page request that fails the taskbar's access check
// ([taskbar.Handler.Allowed]) gets no bootstrap and no CSRF cookie.
//
// # Templates
//
// [ParseFS] parses template files like template.ParseFS and wraps each
// file's output in <!-- BEGIN gotmpl:<path> --> … <!-- END gotmpl:<path> -->
// (the format of [client.SourceAnnotation]); a file that is a whole document
// is wrapped inside its <body>, so no comment precedes the doctype. [FuncMap]
// offers the same comments as template functions for hand-placed ranges.
package host

import (
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/pikit-dev/pikit/taskbar/client"
)

// Template function names in [FuncMap].
const (
	FuncSourceBegin = "pikitSourceBegin"
	FuncSourceEnd   = "pikitSourceEnd"
)

// ErrNotDevBuild is returned by functions that need the taskbar in a
// binary built without the pitaskbar tag.
var ErrNotDevBuild = errors.New("host: this binary was built without the pitaskbar tag, so it has no taskbar; rebuild with `-tags pitaskbar` (for example `go run -tags pitaskbar ./cmd/pikit ...`)")

// FuncMap returns the source annotation functions:
//
//	{{pikitSourceBegin "templates/list.html"}} … {{pikitSourceEnd "templates/list.html"}}
//
// Each takes a project-relative forward-slash path and returns the comment
// as template.HTML. Without the pitaskbar tag, or for a path the client
// would reject, both return "" (annotations are advisory; a bad one must not
// break the page).
func FuncMap() template.FuncMap {
	return template.FuncMap{
		FuncSourceBegin: func(p string) template.HTML { b, _ := annotation(p); return b },
		FuncSourceEnd:   func(p string) template.HTML { _, e := annotation(p); return e },
	}
}

// ParseFS parses the files matching patterns in fsys into t (see
// template.Template.ParseFS: each file becomes a template named by its base
// name). In pitaskbar builds each file's top-level output is wrapped in
// source comments naming prefix joined with the file's path in fsys (prefix is
// the path of fsys's root relative to the project root, "" when they are the
// same). Templates a file declares with {{define}} are not wrapped; place
// [FuncMap] calls inside them by hand. [FuncMap] is added to t.
func ParseFS(t *template.Template, fsys fs.FS, prefix string, patterns ...string) (*template.Template, error) {
	t = t.Funcs(FuncMap())
	var files []string
	for _, p := range patterns {
		m, err := fs.Glob(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("host: pattern %q: %w", p, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("host: pattern %q matches no files", p)
		}
		files = append(files, m...)
	}
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("host: read template: %w", err)
		}
		src := string(b)
		if Enabled {
			src = Annotate(src, path.Join(prefix, f))
		}
		name := path.Base(f)
		tt := t
		if name != t.Name() {
			tt = t.New(name)
		}
		if _, err := tt.Parse(src); err != nil {
			return nil, fmt.Errorf("host: parse %s: %w", name, err)
		}
	}
	return t, nil
}

// Annotate returns template source src with its output wrapped in source
// annotation calls for path (see [FuncMap]). A whole document (one with a
// <body> start tag and a </body> end tag) is wrapped inside the body. It
// returns src unchanged when path is not a valid annotation path, or when a
// literal "{" right before the end would merge with the inserted action.
func Annotate(src, p string) string {
	if _, _, err := client.SourceAnnotation(p); err != nil {
		return src
	}
	q := strconv.Quote(p)
	begin := "{{" + FuncSourceBegin + " " + q + "}}"
	end := "{{" + FuncSourceEnd + " " + q + "}}"
	open, close := bodyRange(src)
	if open < 0 {
		open, close = 0, len(src)
	}
	if close > 0 && src[close-1] == '{' {
		// "{" + "{{pikitSourceEnd" would lex as "{{" + "{pikit…": leave
		// this rare file unannotated rather than change its meaning.
		return src
	}
	return src[:open] + begin + src[open:close] + end + src[close:]
}

// bodyRange returns the offset just after the <body …> start tag and the
// offset of the last </body> end tag, or -1, -1. Template actions inside the
// start tag ({{…}}, which may contain '>') are skipped.
func bodyRange(src string) (int, int) {
	// ASCII-only folding keeps every offset in lower valid in src:
	// strings.ToLower changes byte lengths ("İ", invalid UTF-8).
	lower := asciiLower(src)
	i := 0
	for {
		j := strings.Index(lower[i:], "<body")
		if j < 0 {
			return -1, -1
		}
		i += j + len("<body")
		if i < len(lower) && (lower[i] == '>' || lower[i] == ' ' || lower[i] == '\t' || lower[i] == '\n' || lower[i] == '\r' || lower[i] == '/') {
			break
		}
	}
	for i < len(src) && src[i] != '>' {
		if strings.HasPrefix(src[i:], "{{") {
			k := strings.Index(src[i:], "}}")
			if k < 0 {
				return -1, -1
			}
			i += k + 2
			continue
		}
		i++
	}
	if i >= len(src) {
		return -1, -1
	}
	open := i + 1
	close := strings.LastIndex(lower, "</body")
	if close < open {
		return -1, -1
	}
	return open, close
}

// asciiLower lower-cases A–Z only, so the result has src's byte offsets.
func asciiLower(src string) string {
	b := []byte(src)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}
