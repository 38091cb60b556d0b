package workbench_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/midcompact/workbench"
)

// Seed 001 §Concurrency: "The registered workbench retains the UI lock until
// its asynchronous cleanup finishes." A page close that waits for an edit in
// flight keeps the workbench registered and the lock unreleased, refusing
// new requests meanwhile; once the edit ends, cleanup releases the lock
// exactly once and deregisters.
func TestRules_LockHeldUntilCleanupEnds(t *testing.T) {
	b := openBench(t, workbench.ViewReview, &workbench.Options{CloseTimeout: time.Minute})
	b.login(t)
	hold, edit := b.heldEdit(t, "in flight")
	if r := b.do(t, "POST", "/api/close", "", nil); r.StatusCode != 200 {
		t.Fatalf("close %d", r.StatusCode)
	}
	// The close has started (new requests are refused) but cleanup waits
	// for the edit: the lock stays held.
	for deadline := time.Now().Add(10 * time.Second); b.do(t, "GET", "/api/state", "", nil).StatusCode != 410; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("state still served after the page closed")
		}
	}
	time.Sleep(100 * time.Millisecond)
	if _, _, _, released := b.plan.snapshot(); released != 0 || !b.m.Registered() {
		t.Fatalf("during cleanup: released %d, registered %v", released, b.m.Registered())
	}
	close(hold)
	if status := <-edit; status != 200 {
		t.Errorf("edit accepted before the close answered %d", status)
	}
	waitClosed(t, b)
	if d, saves, notices, released := b.plan.snapshot(); released != 1 || saves != 1 || d.Ranges[0].Summary != "in flight" ||
		strings.Join(notices, "|") != "info: Midcompact review-webui closed." {
		t.Errorf("after cleanup: released %d saves %d summary %q notices %q", released, saves, d.Ranges[0].Summary, notices)
	}
}
