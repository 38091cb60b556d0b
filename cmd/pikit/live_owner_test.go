package main

import (
	"log/slog"
	"os/exec"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/live"
)

// TestServeLive_OwnerWatch: the endpoint process stops, keeping the
// session, when its owner exits; seen through the OS's exit notification
// (Linux: a pidfd; the lifecycle tick is a minute, so only the
// notification can notice in time) and through the portable liveness poll
// that macOS uses (here every 20 ms).
func TestServeLive_OwnerWatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		poll  bool
		check string // CE_LIVE_LIFECYCLE_CHECK_MS
	}{{"notification", false, "60000"}, {"poll", true, "20"}} {
		t.Run(tc.name, func(t *testing.T) {
			owner := exec.Command("sleep", "60")
			if err := owner.Start(); err != nil {
				t.Skip("no sleep binary")
			}
			t.Cleanup(func() { owner.Process.Kill(); owner.Wait() })
			root := t.TempDir()
			ready := make(chan live.StartLine, 1)
			done := make(chan error, 1)
			go func() {
				done <- serveLive(t.Context(), liveServeConfig{
					server: live.Server{Root: root, AppOrigin: testOrigin, OwnerPID: owner.Process.Pid,
						Logger: slog.New(slog.DiscardHandler)},
					getenv: func(k string) string {
						if k == "CE_LIVE_LIFECYCLE_CHECK_MS" {
							return tc.check
						}
						return ""
					},
					ready:     func(l live.StartLine) { ready <- l },
					pollOwner: tc.poll,
				})
			}()
			var line live.StartLine
			select {
			case line = <-ready:
			case err := <-done:
				t.Fatalf("serve ended before serving: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("serve did not come up")
			}
			select {
			case err := <-done:
				t.Fatalf("serve ended while its owner runs: %v", err)
			default:
			}
			owner.Process.Kill()
			owner.Wait()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("serve: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the owner's exit did not stop serve")
			}
			if sf, _ := live.ReadSession(root); sf.Ended || sf.PageToken != line.PageToken {
				t.Fatalf("session after the owner's exit: %+v", sf)
			}
		})
	}
}
