package taskbar_test

import (
	"fmt"
	"net/http"
	"os"
	"testing/fstest"

	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/broker"
)

// ExampleNewHandler mounts the taskbar API in a host's mux, in front of
// the project broker, and puts the CSRF token into the page bootstrap.
func ExampleNewHandler() {
	settings, err := taskbar.Config{}.Resolve(os.LookupEnv)
	if err != nil {
		fmt.Println(err) // e.g. "pi_browser_taskbar task_timeout must be …"
		return
	}
	client := broker.NewClient(&broker.ClientOptions{
		ProjectRoot: settings.ProjectRoot,
		Executable:  settings.Executable,
		TaskTimeout: settings.TaskTimeout,
		Getenv:      os.Getenv,
	})
	defer client.Close()
	h := taskbar.NewHandler(client, &taskbar.Options{
		AllowedHosts: settings.AllowedHosts,
		Assets:       fstest.MapFS{}, // the Browser Client's embedded assets
	})
	mux := http.NewServeMux()
	mux.Handle(h.MountBase()+"/", h)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		token := h.CSRFToken(w, r)
		fmt.Fprintf(w, `<div data-pi-browser-taskbar-bootstrap data-mount-base=%q data-csrf-token=%q data-remote-access="%t"></div>`,
			h.MountBase(), token, h.RemoteAccess())
	})
}
