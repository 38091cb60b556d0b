package piext_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/piext"
)

// fakeBridge serves an extension in-process and plays the bridge's side of
// the protocol with a jsonrpc.Conn; piCall answers the sidecar's pi/call.
type fakeBridge struct {
	conn  *jsonrpc.Conn
	mu    sync.Mutex
	calls []piext.PiCallParams
	ups   []piext.ToolUpdateParams
	gen   uint64
}

type rw struct {
	io.Reader
	io.Writer
	c []io.Closer
}

func (r *rw) Close() error {
	for _, c := range r.c {
		c.Close()
	}
	return nil
}

func serveFake(t *testing.T, ext *piext.Extension) *fakeBridge {
	t.Helper()
	toExtR, toExtW := io.Pipe()
	fromExtR, fromExtW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- piext.Serve(context.Background(), ext, toExtR, fromExtW) }()
	b := &fakeBridge{}
	b.conn = jsonrpc.NewConn(&rw{fromExtR, toExtW, []io.Closer{fromExtR, toExtW}}, &jsonrpc.Options{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			switch req.Method {
			case piext.MethodToolUpdate:
				var u piext.ToolUpdateParams
				_ = json.Unmarshal(req.Params, &u)
				b.ups = append(b.ups, u)
				return nil, nil
			case piext.MethodPiCall:
				var p piext.PiCallParams
				_ = json.Unmarshal(req.Params, &p)
				b.calls = append(b.calls, p)
				if p.CtxID == "" && p.Generation != b.gen {
					return nil, &jsonrpc.Error{Code: piext.CodeStaleSession, Message: "stale session"}
				}
				if p.Target == "session" && p.Method == "getLeafId" {
					return "leaf1", nil
				}
				return nil, nil
			}
			return nil, jsonrpc.ErrMethodNotFound
		}),
		// The bridge (one JavaScript thread) handles messages in arrival
		// order: a tool's update is taken before the call that follows it.
		Ordered: func(string) bool { return true },
	})
	t.Cleanup(func() {
		b.conn.Close()
		toExtW.Close()
		<-done
	})
	return b
}

func (b *fakeBridge) bind(t *testing.T, gen uint64) {
	t.Helper()
	b.mu.Lock()
	b.gen = gen
	b.mu.Unlock()
	if err := b.conn.Call(t.Context(), piext.MethodSessionBind, piext.BindParams{Generation: gen, SessionID: "s", Cwd: "/p"}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestServe_InitializeChecksProtocol(t *testing.T) {
	b := serveFake(t, &piext.Extension{Name: "demo"})
	var res piext.InitializeResult
	if err := b.conn.Call(t.Context(), piext.MethodInitialize, piext.InitializeParams{Protocol: piext.ProtocolVersion, Name: "demo"}, &res); err != nil || res.Protocol != piext.ProtocolVersion {
		t.Fatalf("initialize = %+v, %v", res, err)
	}
	err := b.conn.Call(t.Context(), piext.MethodInitialize, piext.InitializeParams{Protocol: 99}, nil)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != piext.CodeProtocolMismatch || !strings.Contains(e.Message, "run `pikit ext install demo` again") {
		t.Fatalf("mismatch error = %v", err)
	}
}

func TestServe_ToolUpdatesAndCallsBack(t *testing.T) {
	var later *piext.Pi
	ext := &piext.Extension{Name: "demo", Tools: []piext.Tool{{Name: "t", Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
		if err := c.Update(ctx, []piext.Content{piext.Text("half")}, nil); err != nil {
			return nil, err
		}
		leaf, err := c.Pi.GetLeafID(ctx)
		if err != nil {
			return nil, err
		}
		later = c.Pi.Session()
		return &piext.ToolResult{Content: []piext.Content{piext.Text("leaf=" + leaf)}}, nil
	}}}}
	b := serveFake(t, ext)
	b.bind(t, 1)
	var res piext.ToolResult
	if err := b.conn.Call(t.Context(), piext.MethodToolExecute, piext.ToolParams{Tool: "t", ToolCallID: "c1", CtxID: "1.1", Generation: 1, Params: json.RawMessage(`{}`)}, &res); err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].Text; got != "leaf=leaf1" {
		t.Errorf("result = %q", got)
	}
	b.mu.Lock()
	if len(b.ups) != 1 || b.ups[0].ToolCallID != "c1" || b.calls[0].CtxID != "1.1" {
		t.Errorf("updates %+v calls %+v", b.ups, b.calls)
	}
	b.mu.Unlock()
	// A session-scoped handle works while the session is current and says
	// "stale session" once it was replaced, without asking the bridge.
	if err := later.AppendEntry(t.Context(), "x", nil); err != nil {
		t.Fatalf("session call in the same session: %v", err)
	}
	b.bind(t, 2)
	err := later.AppendEntry(t.Context(), "x", nil)
	if !errors.Is(err, piext.ErrStaleSession) || !strings.Contains(err.Error(), "stale session") {
		t.Fatalf("after replacement: %v", err)
	}
}

func TestServe_ToolErrorIsAnErrorResult(t *testing.T) {
	b := serveFake(t, &piext.Extension{Name: "demo", Tools: []piext.Tool{{Name: "t", Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
		return nil, errors.New("no such file")
	}}}})
	var res piext.ToolResult
	if err := b.conn.Call(t.Context(), piext.MethodToolExecute, piext.ToolParams{Tool: "t"}, &res); err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Content[0].Text != "no such file" {
		t.Errorf("result = %+v", res)
	}
}

func TestServe_ContextMirrorAndEdits(t *testing.T) {
	var seen [][]string
	ext := &piext.Extension{Name: "demo", Hooks: []piext.Hook{{Event: "context", Handle: func(ctx context.Context, ev *piext.Event) (any, error) {
		var texts []string
		out := []piext.Message{}
		for _, m := range ev.Messages {
			texts = append(texts, m.Text())
			if m.Text() == "drop" {
				continue
			}
			if m.Text() == "edit" {
				out = append(out, piext.NewMessage(json.RawMessage(`{"role":"user","content":"edited"}`)))
				continue
			}
			out = append(out, m)
		}
		seen = append(seen, texts)
		if len(out) == len(ev.Messages) && !strings.Contains(strings.Join(texts, ","), "edit") {
			return &piext.ContextResult{Messages: out}, nil // unchanged: sent as null
		}
		return &piext.ContextResult{Messages: out}, nil
	}}}}
	b := serveFake(t, ext)
	b.bind(t, 1)
	msg := func(s string) json.RawMessage { return json.RawMessage(`{"role":"user","content":"` + s + `"}`) }
	call := func(wire []piext.WireMessage) (*piext.ContextEdits, error) {
		var res *piext.ContextEdits
		err := b.conn.Call(t.Context(), piext.MethodHook, piext.HookParams{Event: "context", Generation: 1, Messages: wire}, &res)
		return res, err
	}
	res, err := call([]piext.WireMessage{{Hash: "a", Message: msg("one")}, {Hash: "b", Message: msg("two")}})
	if err != nil || res != nil {
		t.Fatalf("unchanged context = %+v, %v; want null", res, err)
	}
	// Known hashes travel without their message; Go still sees the text.
	res, err = call([]piext.WireMessage{{Hash: "a"}, {Hash: "b"}, {Hash: "c", Message: msg("drop")}, {Hash: "d", Message: msg("edit")}, {Hash: "e", Message: msg("three")}})
	if err != nil {
		t.Fatal(err)
	}
	want := &piext.ContextEdits{Edits: []piext.ContextEdit{{From: 0, Count: 2}, {Message: json.RawMessage(`{"role":"user","content":"edited"}`)}, {From: 4, Count: 1}}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("edits (-want +got):\n%s", diff)
	}
	if got := strings.Join(seen[1], ","); got != "one,two,drop,edit,three" {
		t.Errorf("Go saw %q", got)
	}
	// A hash the mirror does not hold asks the bridge to resend in full.
	_, err = call([]piext.WireMessage{{Hash: "zz"}})
	if !errors.Is(err, &jsonrpc.Error{Code: piext.CodeUnknownMessage}) {
		t.Errorf("unknown hash: %v", err)
	}
}

func TestManifest_FailureDefaults(t *testing.T) {
	noop := func(context.Context, *piext.Event) (any, error) { return nil, nil }
	m := piext.ManifestOf(&piext.Extension{Name: "x", Hooks: []piext.Hook{
		{Event: "tool_call", Handle: noop}, {Event: "context", Handle: noop},
		{Event: "input", Failure: piext.FailClosed, Handle: noop}, {Event: "tool_result", Failure: piext.FailOpen, Handle: noop},
	}})
	want := []piext.HookSpec{{Event: "tool_call", FailClosed: true}, {Event: "context"}, {Event: "input", FailClosed: true}, {Event: "tool_result"}}
	if diff := cmp.Diff(want, m.Hooks); diff != "" {
		t.Errorf("hooks (-want +got):\n%s", diff)
	}
	defer func() {
		if recover() == nil {
			t.Error("a bad command name did not panic")
		}
	}()
	(&piext.Extension{Name: "x", Commands: []piext.Command{{Name: "Bad Name"}}}).Manifest()
}

func TestEntryAndMessage_KeepRawJSON(t *testing.T) {
	var es []piext.Entry
	in := `[{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":[{"type":"text","text":"hi"}],"newField":1}}]`
	if err := json.Unmarshal([]byte(in), &es); err != nil {
		t.Fatal(err)
	}
	m, ok := es[0].Message()
	if es[0].ID() != "a1" || es[0].Type() != "message" || !ok || m.Role() != "user" || m.Text() != "hi" || string(m.Field("newField")) != "1" {
		t.Errorf("accessors: id %q type %q role %q text %q", es[0].ID(), es[0].Type(), m.Role(), m.Text())
	}
	out, _ := json.Marshal(es)
	if string(out) != in {
		t.Errorf("round trip:\n%s\n%s", out, in)
	}
}

// TestMessage_RawReplaced holds a message's accessors to its current Raw:
// the scan NewMessage keeps answers only for the bytes it was made for.
func TestMessage_RawReplaced(t *testing.T) {
	m := piext.NewMessage(json.RawMessage(`{"role":"user","timestamp":1}`))
	if m.Role() != "user" || string(m.Field("timestamp")) != "1" {
		t.Fatalf("read %q %s", m.Role(), m.Field("timestamp"))
	}
	edited := m
	edited.Raw = json.RawMessage(`{"role":"assistant"}`)
	if edited.Role() != "assistant" || edited.Field("timestamp") != nil {
		t.Errorf("replaced Raw read as %q %s", edited.Role(), edited.Field("timestamp"))
	}
	if m.Role() != "user" {
		t.Errorf("original read as %q after a copy's Raw changed", m.Role())
	}
	var decoded piext.Message
	if err := json.Unmarshal([]byte(`{"role":"toolResult","role":"custom"}`), &decoded); err != nil || decoded.Role() != "custom" {
		t.Errorf("decoded: %q, %v", decoded.Role(), err)
	}
}
