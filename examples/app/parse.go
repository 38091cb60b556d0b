package app

import (
	"fmt"
	"html/template"
	"io/fs"
	"path"

	"github.com/pikit-dev/pikit/taskbar/client"
	"github.com/pikit-dev/pikit/taskbar/host"
)

// parse parses templates/*.html with [host.ParseFS], or, when the app was
// asked for source hints in a build without the pitaskbar tag, annotates
// them itself the same way ([host.Annotate] with comment pairs from
// [client.SourceAnnotation]).
func (a *App) parse() (*template.Template, error) {
	if !a.hints || host.Enabled {
		return host.ParseFS(template.New("layout.html"), a.fsys, a.prefix, "templates/*.html")
	}
	t := template.New("layout.html").Funcs(template.FuncMap{
		host.FuncSourceBegin: func(p string) template.HTML { b, _, _ := client.SourceAnnotation(p); return b },
		host.FuncSourceEnd:   func(p string) template.HTML { _, e, _ := client.SourceAnnotation(p); return e },
	})
	files, err := fs.Glob(a.fsys, "templates/*.html")
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("app: no templates/*.html (%v)", err)
	}
	for _, f := range files {
		b, err := fs.ReadFile(a.fsys, f)
		if err != nil {
			return nil, fmt.Errorf("app: read template: %w", err)
		}
		name := path.Base(f)
		tt := t
		if name != t.Name() {
			tt = t.New(name)
		}
		if _, err := tt.Parse(host.Annotate(string(b), path.Join(a.prefix, f))); err != nil {
			return nil, fmt.Errorf("app: parse %s: %w", name, err)
		}
	}
	return t, nil
}
