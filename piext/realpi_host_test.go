package piext_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// companionTS is an ordinary Pi extension in <agentDir>/extensions/acme-comp
// (byte order loads it before pikit-hostprobe) that imports the host's
// api.ts by its sibling path and registers functions in session_start,
// after every factory (so the host exists whatever the load order).
const companionTS = `import { register } from "../pikit-hostprobe/api.ts";
export default function (pi: any) {
  pi.on("session_start", () => {
    register("add", (a: number, b: number) => a + b);
    register("later", () => Promise.resolve(42));
    register("shape", () => ({ keep: [1, "x", null], drop: undefined, f: () => 1 }));
  });
}
`

// The host mechanism end to end on the real Pi: Files installed beside the
// bridge, a host object created by the factory and reached from a
// companion loaded earlier, Go calling the companion's functions through
// it; a thenable from a synchronous row refused; asyncCalls awaited; env
// carries the bound session manager; an unknown function is unavailable;
// a session replacement (new_session reloads extensions) retires the old
// host.
func TestRealPi_HostCallsReachCompanionFunctions(t *testing.T) {
	t.Parallel()
	calls := func(pairs ...string) []modelserver.ToolCall {
		var out []modelserver.ToolCall
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, toolCall("call_"+pairs[i], "host_call", pairs[i+1]))
		}
		return out
	}
	env := pitest.New(t, &pitest.Options{Session: true, Script: script(map[string][]modelserver.ToolCall{
		"HOST": calls(
			"add", `{"fn":"run","args":["add",2,3]}`,
			"later", `{"fn":"run","args":["later"]}`,
			"async", `{"fn":"runAsync","args":["later"]}`,
			"shape", `{"fn":"run","args":["shape"]}`,
			"session", `{"fn":"session"}`,
			"missing", `{"fn":"nope"}`,
			"thrown", `{"fn":"run","args":["unregistered"]}`,
		),
		"RETIRED": calls("retired", `{"fn":"retired"}`),
	})})
	folder := env.InstallExtension(t, "hostprobe", pitest.BuildCommand(t, "./piext/internal/hostext"))
	for _, f := range []string{"host.ts", "api.ts"} {
		st, err := os.Stat(filepath.Join(folder, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("installed %s: %v", f, err)
		}
	}
	comp := filepath.Join(env.AgentDir, "extensions", "acme-comp")
	if err := os.MkdirAll(comp, 0o700); err != nil {
		t.Fatal(err)
	}
	pitest.WriteExtension(t, comp, "index.ts", companionTS)
	c, err := pirpc.Start(testCtx(t), env.Options())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = c.Close(cctx)
	})
	ctx := testCtx(t)

	results := func(msg string) map[string]string {
		t.Helper()
		if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: msg}); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, e := range find[*pirpc.ToolExecutionEnd](pitest.Until(t, ctx, c, settled)) {
			var r struct{ Content []struct{ Text string } }
			_ = json.Unmarshal(e.Result, &r)
			if len(r.Content) == 1 {
				out[strings.TrimPrefix(e.ToolCallID, "call_")] = r.Content[0].Text
			}
		}
		return out
	}
	st, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := results("HOST calls")
	want := map[string]string{
		"add":     `{"value":5}`,
		"async":   `{"value":42}`,
		"shape":   `{"value":{"keep":[1,"x",null]}}`,
		"session": `{"value":"` + st.SessionID + `"}`,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s, want %s", k, got[k], w)
		}
	}
	for k, w := range map[string]string{
		"later":   `"code":-32016`,
		"missing": `"code":-32014`,
		"thrown":  `"code":-32099`,
	} {
		if !strings.Contains(got[k], w) {
			t.Errorf("%s: %s, want %s", k, got[k], w)
		}
	}
	if !strings.Contains(got["later"], "returned a promise; a synchronous result is required") {
		t.Errorf("later: %s", got["later"])
	}

	// A session replacement runs the factories again: the old host is
	// retired (one retire call), the new one is bound and reached.
	if _, err := c.Call(ctx, "new_session", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	got = results("RETIRED count")
	if got["retired"] != `{"value":1}` {
		t.Errorf("retired after new_session: %s", got["retired"])
	}
}
