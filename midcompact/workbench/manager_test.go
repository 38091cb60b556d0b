package workbench_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/loopback"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/midcompact/workbench"
)

// failingPlan cannot read its state (e.g. the transaction ended).
type failingPlan struct{ *testPlan }

var errGone = errors.New(uitext.MsgToolNoTransaction)

func (failingPlan) State(context.Context, string) (*midcompact.ReviewState, error) {
	return nil, errGone
}

// An Open that fails leaves nothing registered and does not release the
// caller's lock (the extension releases it itself).
func TestOpen_Errors(t *testing.T) {
	p := newTestPlan(t)
	m := workbench.NewManager(nil)
	if _, err := m.Open(t.Context(), "tui", p); !errors.Is(err, workbench.ErrView) {
		t.Errorf("bad view: %v", err)
	}
	if _, err := m.Open(t.Context(), workbench.ViewReview, failingPlan{p}); !errors.Is(err, errGone) {
		t.Errorf("plan error: %v", err)
	}
	remote := workbench.NewManager(&workbench.Options{Server: &loopback.Options{Addr: "0.0.0.0:0"}})
	if _, err := remote.Open(t.Context(), workbench.ViewReview, p); err == nil || !strings.Contains(err.Error(), "not a loopback IP") {
		t.Errorf("remote addr: %v", err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	taken := workbench.NewManager(&workbench.Options{Server: &loopback.Options{Addr: busy.Addr().String()}})
	if _, err := taken.Open(t.Context(), workbench.ViewReview, p); err == nil {
		t.Error("listening on a taken port succeeded")
	}
	if m.Registered() || remote.Registered() || taken.Registered() {
		t.Error("a failed Open stayed registered")
	}
	if _, _, notices, released := p.snapshot(); released != 0 || len(notices) != 0 {
		t.Errorf("failed Open released %d, notices %q", released, notices)
	}
	if err := taken.CloseAll(t.Context()); err != nil {
		t.Error(err)
	}
}

// Workbenches are per manager (per session): closing one session's leaves
// another's alone; CloseAll with nothing open is a no-op.
func TestManager_PerSession(t *testing.T) {
	a := openBench(t, workbench.ViewReview, nil)
	b := openBench(t, workbench.ViewSelection, nil)
	if !a.m.Registered() || !b.m.Registered() {
		t.Fatal("not registered after Open")
	}
	if err := a.m.CloseAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if a.m.Registered() || !b.m.Registered() {
		t.Errorf("registered: a %v b %v", a.m.Registered(), b.m.Registered())
	}
	b.login(t)
	if r := b.do(t, "GET", "/api/state", "", nil); r.StatusCode != 200 {
		t.Errorf("other session's workbench: %d", r.StatusCode)
	}
	if err := a.m.CloseAll(t.Context()); err != nil {
		t.Error(err)
	}
	if _, _, _, released := a.plan.snapshot(); released != 1 {
		t.Errorf("released %d times", released)
	}
	// CloseAll gives up when its ctx ends first.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := b.m.CloseAll(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled CloseAll: %v", err)
	}
}

// CloseAll racing Open (session shutdown during the opening command): a
// workbench whose Open succeeded is closed and releases the lock exactly
// once; nothing stays registered.
func TestManager_CloseAllRacesOpen(t *testing.T) {
	for i := 0; i < 20; i++ {
		m := workbench.NewManager(nil)
		p := newTestPlan(t)
		opened := make(chan error, 1)
		go func() {
			_, err := m.Open(t.Context(), workbench.ViewReview, p)
			opened <- err
		}()
		if err := m.CloseAll(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := <-opened; err != nil {
			t.Fatal(err)
		}
		if err := m.CloseAll(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, _, _, released := p.snapshot(); released != 1 || m.Registered() {
			t.Fatalf("run %d: released %d, registered %v", i, released, m.Registered())
		}
	}
}
