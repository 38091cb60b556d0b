package extension

import (
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/loopback"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/workbench"
)

// The production surfaces: a workbench that cannot open says why
// (`Midcompact WebUI failed: <msg>`, reference §5.6), leaves the lock free
// and nothing registered.
func TestWebSurfaces_OpenFailureReleasesTheLock(t *testing.T) {
	ctx := t.Context()
	rt, h := started(t, newWebSurfaces(&workbench.Options{Server: &loopback.Options{Addr: "0.0.0.0:0"}}))
	if err := rt.openPlanning(ctx, h, h, reviewCommand, "webui"); err != nil {
		t.Fatal(err)
	}
	got := h.lastNotice()
	if !strings.HasPrefix(got, "error: Midcompact WebUI failed: ") || strings.Contains(got, "not part of this build") || rt.lock.Owner() != midcompact.LockFree || rt.surfaces.Registered() {
		t.Errorf("refused address: %q lock %s registered %v", got, rt.lock.Owner(), rt.surfaces.Registered())
	}
}

// Plan.Atom is snapshot-local: a ref of the current anchor snapshot gives
// its atom, an unknown ref nil.
func TestPlan_Atom(t *testing.T) {
	ctx := t.Context()
	rt, h := started(t, nil)
	p := &Plan{rt: rt, h: h}
	a, err := p.Atom(ctx, "a0001")
	if err != nil || a == nil || a.Ref != "a0001" {
		t.Fatalf("a0001 = %+v, %v", a, err)
	}
	if a, err := p.Atom(ctx, "a9999"); err != nil || a != nil {
		t.Errorf("a9999 = %+v, %v", a, err)
	}
}
