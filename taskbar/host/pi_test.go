//go:build pitaskbar

package host_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/syncbuf"
	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/host"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// TestMount_FindsPiLikeTheProxy: a Go app with the taskbar mounted and no
// Pi command configured finds Pi as `pikit taskbar proxy` does (`pi` on
// PATH, else the Pi `pikit demo` installed in the cache), reaches a ready
// session with it, and logs once which Pi and which project root it uses.
func TestMount_FindsPiLikeTheProxy(t *testing.T) {
	tests := []struct {
		name   string
		onPath bool
		from   string
	}{
		{"cache", false, "the pikit cache (installed by `pikit demo`)"},
		{"path", true, "PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			if tt.onPath {
				script(t, filepath.Join(bin, "pi"), fakePiBody(t, "1.6.0", ""))
			}
			emptyPath(t, bin)
			cache := fakeCache(t, "")
			root := t.TempDir()
			logs := &syncbuf.Buffer{}
			enabled := true
			tb, err := host.Mount(t.Context(), http.NewServeMux(), &host.Options{
				Config:     taskbar.Config{Enabled: &enabled, ProjectRoot: root},
				Getenv:     func(string) (string, bool) { return "", false },
				InProcess:  true,
				PiCacheDir: cache,
				Logger:     slog.New(slog.NewJSONHandler(logs, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := tb.Close(ctx); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			var s rt.Snapshot
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("GET", "http://127.0.0.1"+taskbar.DefaultMountBase+"/state", nil)
				req.RemoteAddr = "127.0.0.1:5555"
				tb.Handler().ServeHTTP(rec, req)
				if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
					t.Fatalf("state: %v: %s", err, rec.Body)
				}
				if s.Session.Status == rt.SessionReady || time.Now().After(deadline) {
					break
				}
			}
			if s.Session.Status != rt.SessionReady {
				t.Errorf("session = %+v, want ready with the Pi the proxy would use", s.Session)
			}
			var found []map[string]any
			for line := range strings.Lines(logs.String()) {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("log line %q: %v", line, err)
				}
				if strings.HasPrefix(rec["msg"].(string), "taskbar host: using Pi") {
					found = append(found, rec)
				}
			}
			if len(found) != 1 {
				t.Fatalf("want one start record, got %d:\n%s", len(found), logs)
			}
			rec := found[0]
			if rec["level"] != "INFO" || rec["pi_version"] != "1.6.0" || rec["pi_from"] != tt.from ||
				rec["project_root"] != "…/"+filepath.Base(root) {
				t.Errorf("start record = %v", rec)
			}
			if strings.Contains(logs.String(), cache) || strings.Contains(logs.String(), root) {
				t.Errorf("log carries an absolute path:\n%s", logs)
			}
		})
	}
}

// TestMount_NoPiSaysHow: with no Pi anywhere the host warns once how to
// get one and still mounts (the taskbar shows Unavailable).
func TestMount_NoPiSaysHow(t *testing.T) {
	emptyPath(t, "")
	logs := &syncbuf.Buffer{}
	enabled := true
	tb, err := host.Mount(t.Context(), http.NewServeMux(), &host.Options{
		Config:     taskbar.Config{Enabled: &enabled, ProjectRoot: t.TempDir()},
		Getenv:     func(string) (string, bool) { return "", false },
		InProcess:  true,
		PiCacheDir: t.TempDir(),
		Logger:     slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close(context.Background())
	if n := strings.Count(logs.String(), "level=WARN msg=\"taskbar host: Pi not found"); n != 1 || !strings.Contains(logs.String(), "`pikit demo`") {
		t.Errorf("want one warning saying how to get Pi:\n%s", logs)
	}
}
