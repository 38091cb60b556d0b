package extension_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/piinstall"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/live"
)

// addModelExtension registers the command /addmodel, which registers the
// scripted provider (base URL, key and model id filled in) so that RPC
// set_model finds a model with credentials; until then Pi has none.
const addModelExtension = `export default function (pi) {
  pi.registerCommand("addmodel", {
    description: "registers the scripted provider",
    handler: async (_args, ctx) => {
      pi.registerProvider(%q, { baseUrl: %q, api: "openai-completions", apiKey: %q,
        models: [{ id: %q, name: "Fake Model", reasoning: false, input: ["text"],
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 32000, maxTokens: 1024 }] });
      ctx.ui.notify("provider added", "info");
    },
  });
}
`

// newNoModelEnv is newEnv whose Pi starts without any model: no model
// flags, no default model, no provider in models.json; /addmodel adds one.
func newNoModelEnv(t *testing.T) *pitest.Env {
	t.Helper()
	env := newEnv(t)
	env.Args = slices.DeleteFunc(slices.Clone(env.Args), func(a string) bool {
		return a == pitest.Provider || a == pitest.ModelID || a == "--provider" || a == "--model"
	})
	write := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(env.AgentDir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("models.json", map[string]any{"providers": map[string]any{}})
	write("settings.json", map[string]any{})
	src := fmt.Sprintf(addModelExtension, pitest.Provider, env.URL, pitest.APIKey, pitest.ModelID)
	pitest.WriteExtension(t, filepath.Join(env.AgentDir, "extensions"), "addmodel.ts", src)
	return env
}

// A batch released while Pi has no model is not delivered and not
// acknowledged: the footer says so and why; once a model is selected (RPC
// set_model) it reaches the model exactly once and is acknowledged.
func TestRealPi_NoModelDeliveredOnModelSelect(t *testing.T) {
	t.Parallel()
	env := newNoModelEnv(t)
	ctx := testCtx(t)
	c := startPi(t, env)
	if st, err := c.GetState(ctx); err != nil || st.Model != nil && piinstall.ModelUsable(st.Model.Provider, st.Model.ID) {
		t.Fatalf("Pi started with model %+v (%v), want none (its placeholder)", st.Model, err)
	}
	l, _ := liveStart(t, ctx, c, "--app-origin "+appOrigin)
	root := defaultRoot(env)
	pg := newPage(t, l)
	pg.stream(ctx)
	pg.send("u1", "cp1")

	evs := untilFooter(t, ctx, c, "not delivered")
	got := footer(evs[len(evs)-1])
	if !strings.Contains(got, "no model") || strings.Contains(got, "cp1") || strings.Contains(got, env.Dir) {
		t.Errorf("footer %q: want the reason (no model), no page data, no path", got)
	}
	if s := status(t, ctx, root); s.Batches.Unacked != 1 {
		t.Fatalf("after the failed delivery: %d unacknowledged batches, want 1", s.Batches.Unacked)
	}
	if n := len(batchRequests(env, `"checkpoint_id":"cp1"`)); n != 0 {
		t.Fatalf("the batch reached a model %d times without one", n)
	}

	if got := command(t, ctx, c, "/addmodel"); got != "provider added" {
		t.Fatalf("/addmodel = %q", got)
	}
	if _, err := c.Call(ctx, "set_model", map[string]string{"provider": pitest.Provider, "modelId": pitest.ModelID}); err != nil {
		t.Fatalf("set_model: %v", err)
	}
	untilToolEnd(t, ctx, c)
	pg.awaitEvent(ctx, `unit_status {"unit_id":"u1","status":"applied"`)
	awaitDrained(t, ctx, root)
	if got := command(t, ctx, c, "/live:status"); !strings.HasPrefix(got, "live: connected") {
		t.Errorf("/live:status after the delivery = %q, want the footer connected", got)
	}
	if n := len(batchRequests(env, `"checkpoint_id":"cp1"`)); n != 1 {
		t.Errorf("the batch reached the model %d times, want 1", n)
	}
	msgs, err := c.GetMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range msgs {
		if m.Role == "user" && strings.Contains(string(m.Content), `"checkpoint_id\":\"cp1\"`) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the session holds the batch message %d times, want 1", n)
	}
}

// status reads root's board summary through the agent route.
func status(t *testing.T, ctx context.Context, root string) live.StatusSummary {
	t.Helper()
	c, err := live.NewAgentClient(root, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
