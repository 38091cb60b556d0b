package piext_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/piext"
)

// A hook's own Timeout travels in the manifest (the bridge's limit) and
// bounds Handle in Go; OmitPayload travels too. Zero keeps HookTimeout.
func TestHook_DeclaredTimeout(t *testing.T) {
	deadlines := map[string]time.Duration{}
	handle := func(ctx context.Context, ev *piext.Event) (any, error) {
		d, ok := ctx.Deadline()
		if !ok {
			t.Errorf("%s: no deadline", ev.Name)
		}
		deadlines[ev.Name] = time.Until(d)
		return nil, nil
	}
	ext := &piext.Extension{Name: "demo", Hooks: []piext.Hook{
		{Event: "agent_start", Handle: handle, Timeout: 90 * time.Second, OmitPayload: true},
		{Event: "agent_end", Handle: handle},
	}}
	raw, err := json.Marshal(piext.ManifestOf(ext).Hooks)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"event":"agent_start","failClosed":false,"timeoutMs":90000,"omitPayload":true},{"event":"agent_end","failClosed":false}]`; string(raw) != want {
		t.Errorf("manifest hooks = %s, want %s", raw, want)
	}
	b := serveFake(t, ext)
	b.bind(t, 1)
	for _, ev := range []string{"agent_start", "agent_end"} {
		if err := b.conn.Call(t.Context(), piext.MethodHook, piext.HookParams{Event: ev, Generation: 1, Payload: json.RawMessage(`{}`)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if d := deadlines["agent_start"]; d <= piext.HookTimeout || d > 90*time.Second {
		t.Errorf("declared 90 s: deadline in %v", d)
	}
	if d := deadlines["agent_end"]; d > piext.HookTimeout {
		t.Errorf("default: deadline in %v, want at most %v", d, piext.HookTimeout)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "agent_start") {
			t.Errorf("a negative timeout did not panic: %v", r)
		}
	}()
	(&piext.Extension{Name: "x", Hooks: []piext.Hook{{Event: "agent_start", Handle: handle, Timeout: -1}}}).Manifest()
}

// BenchmarkHookOmitPayload is the sidecar's share of a
// before_provider_request hook whose 15 MB payload is sent (what the
// bridge does without Hook.OmitPayload) against the same hook with a null
// payload (OmitPayload), in the same run; the bridge's own encoding, in
// Node, comes on top of the first.
//
//	go test -run XX -bench HookOmitPayload -benchmem ./piext/
func BenchmarkHookOmitPayload(b *testing.B) {
	noop := func(context.Context, *piext.Event) (any, error) { return nil, nil }
	ext := &piext.Extension{Name: "demo", Hooks: []piext.Hook{{Event: "before_provider_request", Handle: noop, OmitPayload: true}}}
	conn := serveBench(b, ext)
	ctx := context.Background()
	payload, _ := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user", "content": strings.Repeat("x", 15<<20)}}})
	for _, c := range []struct {
		name    string
		payload json.RawMessage
	}{{"omitted-baseline", json.RawMessage(`null`)}, {"payload-15MB", payload}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if err := conn.Call(ctx, piext.MethodHook, piext.HookParams{Event: "before_provider_request", Generation: 1, Payload: c.payload}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
