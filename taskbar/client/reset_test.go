//go:build pitaskbar

package client_test

import (
	"net/http"
	"testing"

	"github.com/pikit-dev/pikit/internal/browsertest"
)

func TestBrowserClient_SessionReset(t *testing.T) {
	tests := []struct {
		name    string
		onReset func(a *api) (int, any, bool)
		error   string
		status  string
	}{
		{name: "accepted", status: "Ready"},
		{name: "rejected", status: "Finished", error: "Pi kept the current session.",
			onReset: func(a *api) (int, any, bool) {
				kept := taskSnap("completed", "Task completed", "kept output")
				return http.StatusConflict, errorBody("session_reset_rejected", &kept), false
			}},
		{name: "ambiguous", status: "Ready", error: "The request result was uncertain; current project state was reconciled.",
			onReset: func(a *api) (int, any, bool) {
				a.setLocked(sessionSnap("ready"))
				return 0, nil, true
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, taskSnap("completed", "Task completed", "kept output"), map[string]pageOptions{"plain": {}})
			s.api.onReset = tt.onReset
			ctx := newBrowser(t, browserOptions{})
			open(t, ctx, s.url("plain"))
			browsertest.ClickShadow(t, ctx, "[data-launcher]")

			// Asked first; Escape keeps the session and returns to the control.
			browsertest.ClickShadow(t, ctx, "[data-reset]")
			waitJS(t, ctx, browsertest.Shadow(`!root.querySelector("[data-reset-confirm]").hidden`))
			browsertest.Key(t, ctx, "\u001b")
			if f := browsertest.Eval[bool](t, ctx, browsertest.Shadow(`root.activeElement === root.querySelector("[data-reset]") && root.querySelector("[data-reset-confirm]").hidden && !root.querySelector("[data-panel]").hidden`)); !f {
				t.Fatal("Escape did not cancel the confirmation back to New session")
			}
			if n := len(s.api.recorded("POST", "/session/reset")); n != 0 {
				t.Fatalf("cancelled reset sent %d requests", n)
			}

			browsertest.ClickShadow(t, ctx, "[data-reset]")
			browsertest.ClickShadow(t, ctx, "[data-reset-yes]")
			waitUntil(t, "POST /session/reset", func() bool { return len(s.api.recorded("POST", "/session/reset")) == 1 })
			waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === `+browsertest.JSString(tt.status)))
			if tt.error != "" {
				waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-error]").textContent === `+browsertest.JSString(tt.error)))
				waitUntil(t, "reconciling read", func() bool {
					posts := s.api.recorded("POST", "/session/reset")
					for _, g := range s.api.recorded("GET", "/state") {
						if g.At.After(posts[0].At) {
							return true
						}
					}
					return false
				})
			} else if out := browsertest.Eval[bool](t, ctx, browsertest.Shadow(`root.querySelector("[data-output]").hidden`)); !out {
				t.Error("task feedback kept after an accepted reset")
			}
			if r := s.api.recorded("POST", "/session/reset"); len(r) != 1 || r[0].CSRF != csrfToken {
				t.Fatalf("reset requests = %+v, want exactly one with the token", r)
			}
		})
	}
	// Not offered while a task holds the session.
	s := newSite(t, taskSnap("running", "Pi is working", ""), map[string]pageOptions{"plain": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("plain"))
	if !browsertest.Eval[bool](t, ctx, browsertest.Shadow(`root.querySelector("[data-reset]").disabled`)) {
		t.Error("New session is enabled while Pi is working")
	}
}
