//go:build pitaskbar

package client_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pikit-dev/pikit/internal/browsertest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/taskbar/client"
	"github.com/pikit-dev/pikit/taskbar/proxy"
)

// railsApp is a one-file Rails 6.1 application (Debian's ruby-railties,
// ruby-actionview, ruby-actionpack; WEBrick through rackup) whose page
// renders a partial per card, with annotate_rendered_view_with_filenames on.
var railsApp = map[string]string{
	"config.ru": `require "action_controller/railtie"
require "action_view/railtie"

class CardsApp < Rails::Application
  config.root = __dir__
  config.eager_load = false
  config.action_view.annotate_rendered_view_with_filenames = true
  config.hosts.clear
  config.secret_key_base = "0" * 64
  config.logger = Logger.new(nil)
  config.active_support.deprecation = :silence
  routes.append { root to: "cards#index" }
end

class CardsController < ActionController::Base
  layout "application"
  def index
    @cards = %w[Alpha Beta]
  end
end

CardsApp.initialize!
run CardsApp
`,
	"app/views/layouts/application.html.erb": `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Cards</title></head>
<body><%= yield %></body></html>
`,
	"app/views/cards/index.html.erb": `<main><h1>Cards</h1>
<ul><%= render partial: "card", collection: @cards %></ul>
</main>
`,
	"app/views/cards/_card.html.erb": `<li class="card" data-testid="card-<%= card.downcase %>"><%= card %></li>
`,
}

// startRails runs the app with rackup on a free loopback port and returns
// its base URL; it is stopped (process group killed) at cleanup. Without
// Debian's Rails it skips, or fails under CI=true.
func startRails(t *testing.T) *url.URL {
	t.Helper()
	rackup, err := exec.LookPath("rackup")
	if err == nil {
		err = exec.Command("ruby", "-e", `require "action_controller/railtie"; require "action_view/railtie"; require "webrick"`).Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Rails 6.1 from Debian is required (apt-get install ruby-railties ruby-actionview ruby-actionpack ruby-webrick): %v", err)
		}
		t.Skipf("no Rails 6.1 from Debian: %v", err)
	}
	dir := t.TempDir()
	for name, body := range railsApp {
		path := filepath.Join(dir, filepath.FromSlash(name))
		browsertest.Must(t, os.MkdirAll(filepath.Dir(path), 0o700))
		browsertest.Must(t, os.WriteFile(path, []byte(body), 0o600))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	browsertest.Must(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	browsertest.Must(t, ln.Close())
	cmd := exec.Command(rackup, "-s", "webrick", "-o", "127.0.0.1", "-p", strconv.Itoa(port), "config.ru")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "RACK_ENV=development")
	started := time.Now()
	g, err := platform.StartGroup(cmd)
	browsertest.Must(t, err)
	t.Cleanup(func() {
		_ = g.Kill()
		_ = cmd.Wait()
		_ = g.Close()
	})
	base := &url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(port)}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a guard against a hung boot
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", base.String()+"/", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Logf("rails answered %v after start", time.Since(started).Round(100*time.Millisecond))
				return base
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("rails never answered: %v", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestBrowserClient_RailsPartialHint puts the proxy in front of a real
// Rails 6.1 app, marks an element rendered by a partial, and checks the
// focus point that reaches the task request names the partial as its
// template (reference §11, ERB annotations).
func TestBrowserClient_RailsPartialHint(t *testing.T) {
	upstream := startRails(t)
	a := &api{snap: sessionSnap("ready")}
	p, err := proxy.New(&proxy.Options{Upstream: upstream, Mount: mountBase, Taskbar: a.handler(),
		Snippet: func(w http.ResponseWriter, r *http.Request) []byte {
			b, err := client.Markup(client.Bootstrap{MountBase: mountBase, CSRFToken: csrfToken})
			if err != nil {
				t.Error(err)
			}
			return []byte(b)
		}})
	browsertest.Must(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)

	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, srv.URL+"/")
	browsertest.ClickShadow(t, ctx, "[data-launcher]")
	browsertest.ClickShadow(t, ctx, "[data-mark]")
	browsertest.ClickPage(t, ctx, `[data-testid="card-beta"]`)
	waitJS(t, ctx, browsertest.Shadow(`root.querySelectorAll("[data-marks] li").length === 1`))
	browsertest.ClickShadow(t, ctx, "[data-prompt]")
	browsertest.Key(t, ctx, "Make the card bold")
	browsertest.ClickShadow(t, ctx, "[data-run]")
	waitUntil(t, "the task POST", func() bool { return len(a.recorded("POST", "/tasks")) == 1 })

	var body struct {
		Context struct {
			FocusPoints []struct {
				Selector string          `json:"selector"`
				Source   json.RawMessage `json:"source"`
			} `json:"focus_points"`
		} `json:"context"`
	}
	browsertest.Must(t, json.Unmarshal(a.recorded("POST", "/tasks")[0].Body, &body))
	if len(body.Context.FocusPoints) != 1 {
		t.Fatalf("focus points: %+v", body.Context.FocusPoints)
	}
	var got any
	browsertest.Must(t, json.Unmarshal(body.Context.FocusPoints[0].Source, &got))
	want := map[string]any{"status": "available", "references": []any{
		map[string]any{"role": "template", "path": "app/views/cards/_card.html.erb", "precision": "template"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("source hint of the marked card (-want +got):\n%s", diff)
	}
}
