package extension_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
)

// refusedTS is a companion whose module State Flow refuses (apiVersion 2):
// registerStateFlowModule throws in its session_start.
const refusedTS = `import { registerStateFlowModule } from "../pikit-stateflow/modules.ts";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  pi.on("session_start", (_event, ctx) => {
    registerStateFlowModule(ctx.sessionManager, {
      id: "x_acme_future", apiVersion: 2 as any, schemaVersion: 1, immutable: false,
      validate: (v: any): v is any => true, context: () => [],
    });
  });
}
`

// /state-flow-status lists the session's registered modules and every
// registration refused in it, on a fresh session and again after `pi -c`
// resumes it in a new process (where the companion's throw in
// session_start shows nowhere else).
func TestRealPi_StatusListsModulesAndRefusals(t *testing.T) {
	t.Parallel()
	h := moduleHarness(t, "")
	h.writeCompanion(t)
	dir := filepath.Join(h.env.AgentDir, "extensions", "acme-future")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	pitest.WriteExtension(t, dir, "index.ts", refusedTS)
	ctx := testCtx(t)
	want := []string{
		"Modules: x_acme_notes (schema 1, mutable)\n",
		"Module registration refused: registerStateFlowModule: x_acme_future: apiVersion 2 is not supported (this host speaks 1)\n",
	}
	check := func(when, msg string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: status lacks %q:\n%s", when, w, msg)
			}
		}
		if n := strings.Count(msg, "Module registration refused:"); n != 1 {
			t.Errorf("%s: %d refusal lines, want 1:\n%s", when, n, msg)
		}
	}
	c := h.start(t)
	check("fresh session", command(t, ctx, c, "/state-flow-status").Message)
	prompt(t, ctx, c, "NOTES")
	closePi(c)

	c = h.start(t, "-c")
	msg := command(t, ctx, c, "/state-flow-status").Message
	check("after pi -c", msg)
	if !strings.Contains(msg, `"x_acme_notes":{"entries":["accepted"]}`) {
		t.Errorf("after pi -c: the resumed session's module data is not in the status:\n%s", msg)
	}
}
