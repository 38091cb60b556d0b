package taskbar_test

import (
	"net/http"
	"testing"

	"github.com/pikit-dev/pikit/taskbar"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// keyed is request with an Idempotency-Key.
func keyed(method, path string, body []byte, key string) *http.Request {
	req := request(method, path, body)
	req.Header.Set(taskbar.IdempotencyKeyHeader, key)
	return req
}

// TestHandler_IdempotencyKey: a mutation resent with the same
// Idempotency-Key (a browser retrying a POST on a reset connection) gets
// the original outcome and never starts, stops or resets twice, also when
// the resend reaches another host process of the project (broker), and
// also after the task ended (a late resend never starts a new task).
func TestHandler_IdempotencyKey(t *testing.T) {
	for name, handlers := range map[string]func(t *testing.T) (http.Handler, http.Handler){
		"in-process": func(t *testing.T) (http.Handler, http.Handler) {
			o, _ := inProcessOwner(t, rt.Options{})
			h := taskbar.NewHandler(o, nil)
			return h, h
		},
		"broker, two host processes": func(t *testing.T) (http.Handler, http.Handler) {
			newClient := brokerProject(t)
			return taskbar.NewHandler(newClient(), nil), taskbar.NewHandler(newClient(), nil)
		},
	} {
		t.Run(name, func(t *testing.T) {
			h1, h2 := handlers(t)
			base := taskbar.DefaultMountBase
			poll(t, h1, "ready", isReady)
			first := do(h1, keyed("POST", base+"/tasks", taskBody(t, "hold this task"), "k-submit-1"))
			if first.status != http.StatusAccepted {
				t.Fatalf("POST = %d %s", first.status, first.body)
			}
			id := decodeView(t, first.body).Task.ID
			again := do(h2, keyed("POST", base+"/tasks", taskBody(t, "hold this task"), "k-submit-1"))
			if again.status != first.status || decodeView(t, again.body).Task.ID != id {
				t.Fatalf("resent POST = %d %s, want %d with task %s", again.status, again.body, first.status, id)
			}
			if other := do(h2, keyed("POST", base+"/tasks", taskBody(t, "another"), "k-submit-2")); other.status != http.StatusConflict {
				t.Errorf("a new key while busy = %d, want 409", other.status)
			}

			stop := do(h1, keyed("DELETE", base+"/tasks/"+id, nil, "k-stop-1"))
			poll(t, h1, "cancelled", func(s rt.Snapshot) bool { return s.Task != nil && s.Task.Status == rt.TaskCancelled })
			stopAgain := do(h2, keyed("DELETE", base+"/tasks/"+id, nil, "k-stop-1"))
			if stopAgain.status != stop.status {
				t.Errorf("resent DELETE = %d, want the original %d", stopAgain.status, stop.status)
			}

			// The first POST resent after its task ended: no new task.
			late := do(h2, keyed("POST", base+"/tasks", taskBody(t, "hold this task"), "k-submit-1"))
			if late.status != first.status {
				t.Errorf("late resent POST = %d, want the original %d", late.status, first.status)
			}
			if s := poll(t, h1, "state", func(rt.Snapshot) bool { return true }); s.Task == nil || s.Task.ID != id || s.Task.Status != rt.TaskCancelled {
				t.Fatalf("after the late resend the task is %+v, want %s still cancelled", s.Task, id)
			}

			// A Pi slow to settle the abort (a loaded machine) is replaced
			// after the cancellation deadline; reset needs it ready again.
			poll(t, h1, "ready for reset", isReady)
			reset := do(h1, keyed("POST", base+"/session/reset", nil, "k-reset-1"))
			if reset.status != http.StatusAccepted {
				t.Fatalf("reset = %d %s", reset.status, reset.body)
			}
			s := poll(t, h1, "reset done", func(s rt.Snapshot) bool { return s.Session.Status == rt.SessionReady && s.Task == nil })
			resetAgain := do(h2, keyed("POST", base+"/session/reset", nil, "k-reset-1"))
			s2 := poll(t, h1, "state", func(rt.Snapshot) bool { return true })
			if resetAgain.status != reset.status || s2.Session.ID == nil || *s2.Session.ID != *s.Session.ID {
				t.Errorf("resent reset = %d (first %d), session %v then %v: reset twice", resetAgain.status, reset.status, *s.Session.ID, s2.Session.ID)
			}
		})
	}
}
