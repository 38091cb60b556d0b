//go:build !pitaskbar

package host

import (
	"context"
	"html/template"
	"net/http"
)

// Enabled reports whether this binary has the taskbar: false without the
// pitaskbar build tag.
const Enabled = false

func annotation(string) (template.HTML, template.HTML) { return "", "" }

// Mount does nothing without the pitaskbar tag: no route, no Pi, no
// configuration read; the Taskbar it returns is inert.
func Mount(context.Context, *http.ServeMux, *Options) (*Taskbar, error) { return &Taskbar{}, nil }
