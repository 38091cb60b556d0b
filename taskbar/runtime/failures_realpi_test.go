package runtime_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// lockedBuffer is a log sink safe for the runtime's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRealPi_FailureClasses: provider failures seen through the real Pi
// 1.6.0 end the task failed with the fixed message of their class, and
// nothing of the provider's text (here a fake key) reaches the snapshot
// or the log.
func TestRealPi_FailureClasses(t *testing.T) {
	const secret = "sk-SECRET-fake-key-0123"
	env := pitest.New(t, &pitest.Options{
		Script: modelserver.Switch(
			modelserver.Script{Text: []string{"ok"}},
			modelserver.Case{Contains: "AUTHFAIL", Script: modelserver.Script{Status: 401,
				Body: `{"error":{"message":"Incorrect API key provided: ` + secret + `","type":"invalid_request_error","code":"invalid_api_key"}}`}},
			modelserver.Case{Contains: "TOOLONG", Script: modelserver.Script{Status: 400,
				Body: `{"error":{"message":"This model's maximum context length is 8192 tokens (` + secret + `)","type":"invalid_request_error","code":"context_length_exceeded"}}`}},
			modelserver.Case{Contains: "RATELIMIT", Script: modelserver.Script{Status: 429,
				Body: `{"error":{"message":"Rate limit reached (` + secret + `)","type":"requests","code":"rate_limit_exceeded"}}`}},
		),
		Settings: map[string]any{"retry": map[string]any{"enabled": true, "maxRetries": 1, "baseDelayMs": 10}},
	})
	var logs lockedBuffer
	r := rt.New(&rt.Options{
		Executable: env.Executable,
		Args:       append(append([]string{}, env.Args...), "--append-system-prompt", rt.SystemPolicy),
		Env:        env.Env, Dir: env.Dir,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r.Close(ctx)
	})
	waitFor(t, r, "ready", func(s rt.Snapshot) bool { return s.Session.Status == rt.SessionReady })
	for _, tc := range []struct{ word, want string }{
		{"AUTHFAIL", rt.ErrProviderRefused},
		{"TOOLONG", rt.ErrContextTooLong},
		{"RATELIMIT", rt.ErrProviderRateLimit},
	} {
		t.Run(tc.word, func(t *testing.T) {
			res, b := r.Submit("p", "Please "+tc.word+" now.")
			if res != rt.ResultAccepted {
				t.Fatalf("Submit = %s", res)
			}
			id := decode(t, b).Task.ID
			s := waitFor(t, r, "settled", func(s rt.Snapshot) bool { return s.Task.ID == id && s.Task.Status.Terminal() })
			if s.Task.Status != rt.TaskFailed || s.Task.Error == nil || *s.Task.Error != tc.want {
				t.Errorf("task = %s %v, want failed %q", s.Task.Status, s.Task.Error, tc.want)
			}
			if strings.Contains(string(r.Snapshot()), "SECRET") {
				t.Errorf("the provider's text reached the snapshot: %s", r.Snapshot())
			}
		})
	}
	if strings.Contains(logs.String(), "SECRET") {
		t.Errorf("the provider's text reached the log:\n%s", logs.String())
	}
}
