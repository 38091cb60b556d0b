package piext_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/piext"
)

// context/warm fills the mirror and runs the hook's Warm, not its Handle;
// the first context call then sends ids and the handler gets the messages
// as Fresh (once); a warm-up for a replaced session changes nothing.
func TestServe_ContextWarm(t *testing.T) {
	type view struct {
		Text  string
		Fresh bool
	}
	var seen [][]view
	var warmed []string
	ext := &piext.Extension{Name: "demo", Hooks: []piext.Hook{{Event: "context", Handle: func(ctx context.Context, ev *piext.Event) (any, error) {
		var v []view
		for _, m := range ev.Messages {
			v = append(v, view{m.Text(), m.Fresh()})
		}
		seen = append(seen, v)
		return nil, nil
	}, Warm: func(ctx context.Context, ev *piext.Event) {
		for _, m := range ev.Messages {
			warmed = append(warmed, m.Text())
		}
	}}}}
	b := serveFake(t, ext)
	b.bind(t, 1)
	msg := func(s string) json.RawMessage { return json.RawMessage(`{"role":"user","content":"` + s + `"}`) }
	warm := func(gen uint64, wire []piext.WireMessage) error {
		return b.conn.Call(t.Context(), piext.MethodContextWarm, piext.WarmParams{Generation: gen, Messages: wire}, nil)
	}
	call := func(wire []piext.WireMessage) error {
		return b.conn.Call(t.Context(), piext.MethodHook, piext.HookParams{Event: "context", Generation: 1, Messages: wire}, nil)
	}
	if err := warm(1, []piext.WireMessage{{Hash: "a", Message: msg("one")}, {Hash: "b", Message: msg("two")}}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 0 || fmt.Sprint(warmed) != "[one two]" {
		t.Fatalf("warm-up: handler saw %v, Warm %v; want only Warm, with both messages", seen, warmed)
	}
	if err := call([]piext.WireMessage{{Hash: "a"}, {Hash: "b"}, {Hash: "c", Message: msg("new")}}); err != nil {
		t.Fatal(err)
	}
	if err := call([]piext.WireMessage{{Hash: "a"}, {Hash: "b"}, {Hash: "c"}}); err != nil {
		t.Fatal(err)
	}
	want := "[[{one true} {two true} {new true}] [{one false} {two false} {new false}]]"
	if got := fmt.Sprint(seen); got != want {
		t.Errorf("handler saw %s, want %s", got, want)
	}
	// A warm-up of generation 1 after the bind of generation 2 is ignored.
	b.bind(t, 2)
	if err := warm(1, []piext.WireMessage{{Hash: "x", Message: msg("old session")}}); err != nil || len(warmed) != 2 {
		t.Fatalf("stale warm-up: %v, Warm saw %v", err, warmed)
	}
	err := b.conn.Call(t.Context(), piext.MethodHook, piext.HookParams{Event: "context", Generation: 2, Messages: []piext.WireMessage{{Hash: "x"}}}, nil)
	if !errors.Is(err, &jsonrpc.Error{Code: piext.CodeUnknownMessage}) {
		t.Errorf("id of a stale warm-up: %v, want unknown message", err)
	}
	// A warm-up naming an id the mirror does not hold is refused the same way.
	if err := warm(2, []piext.WireMessage{{Hash: "nope"}}); !errors.Is(err, &jsonrpc.Error{Code: piext.CodeUnknownMessage}) {
		t.Errorf("warm-up with an unknown id: %v", err)
	}
}

// A context hook with Pass: the manifest says so; a probe runs Pass, not
// Handle, and leaves the mirror as it was, so the call that follows a
// pass names the ids of the last call that sent them; a hook without Pass
// answers a probe with pass false.
func TestServe_ContextPass(t *testing.T) {
	var handled []int
	idle := true
	ext := &piext.Extension{Name: "demo", Hooks: []piext.Hook{{Event: "context", Handle: func(ctx context.Context, ev *piext.Event) (any, error) {
		handled = append(handled, len(ev.Messages))
		return nil, nil
	}, Pass: func(ctx context.Context, ev *piext.Event) bool {
		if ev.Messages != nil {
			t.Errorf("Pass got %d messages, want none", len(ev.Messages))
		}
		return idle
	}}, {Event: "context_with_system", Handle: func(ctx context.Context, ev *piext.Event) (any, error) { return nil, nil }}}}
	specs := piext.ManifestOf(ext).Hooks
	if !specs[0].Pass || specs[1].Pass {
		t.Errorf("manifest hooks %+v: want pass on context only", specs)
	}
	b := serveFake(t, ext)
	b.bind(t, 1)
	msg := func(s string) json.RawMessage { return json.RawMessage(`{"role":"user","content":"` + s + `"}`) }
	probe := func(event string) bool {
		var res piext.PassResult
		if err := b.conn.Call(t.Context(), piext.MethodHook, piext.HookParams{Event: event, Generation: 1, Probe: true}, &res); err != nil {
			t.Fatal(err)
		}
		return res.Pass
	}
	call := func(wire []piext.WireMessage) error {
		return b.conn.Call(t.Context(), piext.MethodHook, piext.HookParams{Event: "context", Generation: 1, Messages: wire}, nil)
	}
	if err := call([]piext.WireMessage{{Hash: "a", Message: msg("one")}}); err != nil {
		t.Fatal(err)
	}
	if !probe("context") || !probe("context") {
		t.Fatal("an idle hook did not pass")
	}
	idle = false
	if probe("context") {
		t.Fatal("an active hook passed")
	}
	if err := call([]piext.WireMessage{{Hash: "a"}, {Hash: "b", Message: msg("two")}}); err != nil {
		t.Fatalf("the call after passes, naming the last sent id: %v", err)
	}
	if fmt.Sprint(handled) != "[1 2]" {
		t.Errorf("Handle saw %v, want [1 2] (never on a probe)", handled)
	}
	if probe("context_with_system") {
		t.Error("a hook without Pass passed")
	}
}

// Pass is for the context hooks only: Manifest panics elsewhere.
func TestManifest_PassOnlyOnContextHooks(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Error("no panic for Pass on tool_call")
		}
	}()
	ext := &piext.Extension{Name: "demo", Hooks: []piext.Hook{{Event: "tool_call",
		Handle: func(ctx context.Context, ev *piext.Event) (any, error) { return nil, nil },
		Pass:   func(ctx context.Context, ev *piext.Event) bool { return true }}}}
	ext.Manifest()
}
