//go:build pitaskbar

package host

import (
	"context"
	"html/template"
	"net/http"

	"github.com/pikit-dev/pikit/taskbar/client"
)

// Enabled reports whether this binary has the taskbar (built with the
// pitaskbar tag).
const Enabled = true

func annotation(p string) (template.HTML, template.HTML) {
	b, e, err := client.SourceAnnotation(p)
	if err != nil {
		return "", ""
	}
	return b, e
}

// Mount resolves the configuration, finds Pi as `pikit taskbar proxy` and
// `pikit demo` do (the configured command, else `pi` on PATH, else the Pi
// `pikit demo` installed; logged once with the project root), picks the Pi
// owner (Options.Owner, else the project broker, else an in-process
// runtime; see [Options]), and
// registers the taskbar API and assets on mux below the mount base. A
// disabled configuration mounts nothing and returns an inert Taskbar. It
// returns a *taskbar.ConfigError naming a malformed setting. The caller
// must call [Taskbar.Close].
func Mount(ctx context.Context, mux *http.ServeMux, opts *Options) (*Taskbar, error) {
	return mount(ctx, mux, opts, client.FS())
}
