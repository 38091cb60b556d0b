package runtime_test

import (
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/fakepi"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// TestRuntime_NoModelIsUnavailable: Pi reporting its placeholder model
// (no provider configured) is not a ready session: it is unavailable, with
// no model shown, and a fixed message saying how to configure a provider;
// a task is refused instead of failing with "Pi rejected the task".
func TestRuntime_NoModelIsUnavailable(t *testing.T) {
	r := newRuntime(t, rt.Options{}, fakepi.Config{Scenario: "model-unknown"}.Env()...)
	s := waitFor(t, r, "unavailable", func(s rt.Snapshot) bool { return s.Session.Status == rt.SessionUnavailable })
	if s.Session.Model != nil || s.Session.ID != nil || s.Session.Error == nil || *s.Session.Error != rt.SessionNoModelMessage {
		t.Fatalf("session = %+v", s.Session)
	}
	for _, want := range []string{"no model configured", "API key", "/login", "models.json"} {
		if !strings.Contains(rt.SessionNoModelMessage, want) {
			t.Errorf("message %q lacks %q", rt.SessionNoModelMessage, want)
		}
	}
	if res, _ := r.Submit("p", "hello"); res == rt.ResultAccepted {
		t.Errorf("a task was accepted without a model")
	}
}
