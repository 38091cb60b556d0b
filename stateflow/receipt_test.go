package stateflow

import (
	"errors"
	"testing"
)

func TestBuildStateUpdates(t *testing.T) {
	roots := BuiltinRoots()
	cur := map[string]map[string]any{
		"global":  obj(t, `{"working":{"masked":"g","inherited":"g"}}`),
		"cwd":     obj(t, `{"working":{"inherited":"c"},"lazy":{"plan":[1]}}`),
		"session": obj(t, `{"working":{"masked":"s","list":[1,2]},"intents":{"verify":{"r":{"$ref":"session.working.checks"}}}}`),
	}
	cur["session"]["working"].(map[string]any)["checks"] = "x"
	args, err := DecodePatchArgs(roots, []byte(`{"global":{"working":{"masked":"g2","direct":"d"}},"cwd":{"working":{"inherited":null},"lazy":{"more":{}}},"session":{"working":{"list":{"[0]":9}},"intents":{"verify":null}}}`))
	if err != nil {
		t.Fatal(err)
	}
	st, err := stage(roots, cur, args)
	if err != nil {
		t.Fatal(err)
	}
	u := BuildStateUpdates(roots, args, st, overlayStates(st.Before), overlayStates(st.After), "p1")
	got := canon(t, u)
	want := `{"cascaded":["session.working.checks"],"effective":[{"path":["working","masked"],"value":"s"},` +
		`{"path":["working","inherited"],"value":"g"},{"deleted":true,"path":["intents","verify"]},{"path":["working","list"],"value":[9,2]}],"projection":"p1"}`
	if got != want {
		t.Errorf("state_updates\n got  %s\n want %s", got, want)
	}
	if u.LazyNavigation != nil {
		t.Errorf("lazy unchanged ({} pruned) but navigation sent: %+v", u.LazyNavigation)
	}
}

func overlayStates(m map[string]map[string]any) map[string]any {
	return Overlay(m["global"], m["cwd"], m["session"])
}

func TestResolvePolicy(t *testing.T) {
	bad := &ConfigError{Msg: "broken"}
	p := ResolvePolicy(Config{}, bad, "active")
	if p.Mode != "off" || p.ToolsExposed() || p.ToolError().Error() != "broken" {
		t.Errorf("malformed config: %+v", p)
	}
	p = ResolvePolicy(DefaultConfig(), nil, "")
	var te *ToolError
	if p.Mode != "off" || !errors.As(p.ToolError(), &te) || te.Msg != msgToolsDisabled {
		t.Errorf("default: %+v", p)
	}
	if p := ResolvePolicy(Config{Mode: "passive"}, nil, "active"); p.Mode != "active" || !p.ToolsExposed() {
		t.Errorf("session mode wins: %+v", p)
	}
}
