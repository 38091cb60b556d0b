package extension_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
)

// The registration membrane (host.ts + modules.ts, seed 003 "Public entry
// and lifecycle") under Node 22 with Pi 1.6.0's own SessionManager: two
// in-memory SDK managers in one process host independent catalogs.
// testdata/modules_host.mjs holds one check per rule; every one must
// report OK.
func TestModulesHost_RegistrationSemantics(t *testing.T) {
	in := pitest.Require(t)
	sdk := filepath.Join(in.Root, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "index.js")
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(in.NodeBin, "node"), "--experimental-strip-types", "--no-warnings",
		filepath.Join("testdata", "modules_host.mjs"), dir, sdk, t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	want := []string{
		"host absent fails explicitly",
		"register, catalog snapshot, validate through the host",
		"duplicate id, apiVersion, id, schemaVersion, missing callbacks fail explicitly",
		"two SDK managers have independent catalogs",
		"disposer idempotent, cannot revoke a later equal-id registration",
		"disposer cannot revoke another host generation",
		"catalog change aborts old signals and fences queued old calls",
		"equal-id re-registration fences calls of the old registration",
		"native identity check fences manager reuse for another session",
		"competing ownership of a manager fails explicitly until the owner retires",
		"host retirement removes only its own binding before signalling cancellation",
		"snapshots capture immutable policy, callback identities and definition order",
		"synchronous callbacks: promises, boolean receipts, missing receipts refused",
		"Go-native ids are reserved",
		"refused registrations are listed for the session until the id registers",
	}
	got := map[string]bool{}
	done := false
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, "OK "):
			got[strings.TrimPrefix(l, "OK ")] = true
		case strings.HasPrefix(l, "FAIL "):
			t.Error(l)
		case l == "DONE":
			done = true
		}
	}
	if !done {
		t.Errorf("the script did not finish:\n%s", out)
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("check %q did not pass", w)
		}
	}
}
