//go:build !pitaskbar

package host

import (
	"context"
	"html/template"
	"net/http"

	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// Enabled reports whether this binary has the taskbar: false without the
// pitaskbar build tag.
const Enabled = false

func annotation(string) (template.HTML, template.HTML) { return "", "" }

// Taskbar is inert in binaries built without the pitaskbar tag.
type Taskbar struct{}

// Mount does nothing without the pitaskbar tag: no route, no Pi, no
// configuration read.
func Mount(context.Context, *http.ServeMux, *Options) (*Taskbar, error) { return &Taskbar{}, nil }

// Handler returns nil: there is no API.
func (*Taskbar) Handler() http.Handler { return nil }

// MountBase returns "".
func (*Taskbar) MountBase() string { return "" }

// Middleware returns h itself: nothing is injected.
func (*Taskbar) Middleware(h http.Handler) http.Handler { return h }

// Snippet returns nil.
func (*Taskbar) Snippet(http.ResponseWriter, *http.Request) []byte { return nil }

// Close does nothing.
func (*Taskbar) Close(context.Context) error { return nil }

// watchSession returns at once: there is no runtime.
func (*Taskbar) watchSession(context.Context, func(runtime.SessionState) bool) {}
