package piext_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
)

// secondModelID is a reasoning model added next to pitest's fake model, so
// set_model has somewhere to go and set_thinking_level a level to set.
const secondModelID = "fake-thinker"

// addSecondModel rewrites the environment's models.json with pitest's
// model and a second, reasoning one on the same scripted server.
func addSecondModel(t *testing.T, env *pitest.Env) {
	t.Helper()
	cost := map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
	models := map[string]any{"providers": map[string]any{pitest.Provider: map[string]any{
		"baseUrl": env.URL, "api": "openai-completions", "apiKey": pitest.APIKey,
		"models": []any{
			map[string]any{"id": pitest.ModelID, "name": "Fake Model", "contextWindow": 32000, "maxTokens": 1024, "cost": cost},
			map[string]any{"id": secondModelID, "name": "Fake Thinker", "reasoning": true, "contextWindow": 32000, "maxTokens": 1024, "cost": cost},
		},
	}}}
	b, err := json.Marshal(models)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.AgentDir, "models.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// hookPayload waits for the first record of hook event whose payload
// decodes into v with match true.
func hookPayload(t *testing.T, p *probe, event string, v any, match func() bool) record {
	t.Helper()
	return p.waitRecord(t, testCtx(t), func(r record) bool {
		return r.Ev == "hook" && r.Event == event && json.Unmarshal(r.Payload, v) == nil && match()
	})
}

func TestRealPi_ModelSelectHook(t *testing.T) {
	t.Parallel()
	p := newProbe(t, nil)
	addSecondModel(t, p.env)
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.Call(ctx, "set_model", map[string]string{"provider": pitest.Provider, "modelId": secondModelID}); err != nil {
		t.Fatalf("set_model: %v", err)
	}
	var ev struct {
		Model         struct{ ID, Provider string }
		PreviousModel *struct{ ID string }
		Source        string
	}
	hookPayload(t, p, "model_select", &ev, func() bool { return ev.Model.ID == secondModelID })
	if ev.Model.Provider != pitest.Provider || ev.Source != "set" || ev.PreviousModel == nil || ev.PreviousModel.ID != pitest.ModelID {
		t.Errorf("model_select payload = %+v", ev)
	}
	// The switch took: Pi's state names the model the hook saw.
	st, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Model == nil || st.Model.ID != secondModelID {
		t.Errorf("get_state model after set_model = %+v", st.Model)
	}
}

func TestRealPi_ThinkingLevelSelectHook(t *testing.T) {
	t.Parallel()
	p := newProbe(t, nil)
	addSecondModel(t, p.env)
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.Call(ctx, "set_model", map[string]string{"provider": pitest.Provider, "modelId": secondModelID}); err != nil {
		t.Fatalf("set_model: %v", err)
	}
	if _, err := c.Call(ctx, "set_thinking_level", map[string]string{"level": "high"}); err != nil {
		t.Fatalf("set_thinking_level: %v", err)
	}
	var ev struct{ Level, PreviousLevel string }
	hookPayload(t, p, "thinking_level_select", &ev, func() bool { return ev.Level == "high" })
	if ev.PreviousLevel == "high" || ev.PreviousLevel == "" {
		t.Errorf("thinking_level_select payload = %+v", ev)
	}
	st, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.ThinkingLevel != "high" {
		t.Errorf("get_state thinkingLevel after set_thinking_level = %q", st.ThinkingLevel)
	}
}
