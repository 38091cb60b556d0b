package extension_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/pirpc"
)

func TestMain(m *testing.M) { pitest.Main(m) }

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// firstGroup finds the inventory group of the first user message.
var firstGroup = regexp.MustCompile(`(a\d{4})→(a\d{4}) \|[^\n]*\| ` + firstUser)

// mcScript is the scripted model: the start prompt makes it inspect, the
// inventory makes it plan the first user's group with a summary, RECALL makes it
// recall c0001, "CALL <json>" makes it call the tool with <json>; everything
// else is answered "ack".
func mcScript(r *modelserver.Request) modelserver.Script {
	call := func(id, args string) modelserver.Script {
		return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: id, Name: "midcompact", Arguments: []string{args}}}}
	}
	if last := r.Last(); last.Role == "tool" {
		if m := firstGroup.FindStringSubmatch(last.Text()); m != nil {
			return call("call_plan", `{"request":{"action":"plan_add","start":"`+m[1]+`","end":"`+m[2]+`","summary":"SUMMARY-ONE of the first exchange","topic":"first greeting"}}`)
		}
		return modelserver.Script{Text: []string{"planned"}}
	}
	u := lastUserPrompt(r)
	switch {
	case strings.Contains(u, uitext.StartPromptPrefix):
		return call("call_inspect", `{"request":{"action":"inspect"}}`)
	case strings.Contains(u, "PLAN again"):
		return call("call_again", `{"request":{"action":"plan_add","start":"a0004","end":"a0005","summary":"second exchange"}}`)
	case strings.Contains(u, "RECALL"):
		return call("call_recall", `{"request":{"action":"recall_read","block":"c0001","detail":"full"}}`)
	case strings.HasPrefix(u, "CALL "):
		return call("call_given", strings.TrimPrefix(u, "CALL "))
	}
	return modelserver.Script{Text: []string{"ack"}}
}

// lastUserPrompt is the last user message that is not the hidden handoff
// (Pi sends custom messages to the model as user messages).
func lastUserPrompt(r *modelserver.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == "user" && !strings.HasPrefix(m.Text(), handoffPrefix) {
			return m.Text()
		}
	}
	return ""
}

const handoffPrefix = "An active midcompact transaction exists with a persisted plan."

// session is a real Pi 1.6.0 with midcompact installed by `pikit ext
// install midcompact`, its session persisted.
type session struct {
	env *pitest.Env
	c   *pirpc.Client
}

func newEnv(t *testing.T) *pitest.Env {
	t.Helper()
	env := pitest.New(t, &pitest.Options{Script: mcScript, Session: true})
	folder := env.InstallExtension(t, "midcompact", "")
	for _, f := range []string{"SKILL.md", "references/tool-interface.md"} {
		if _, err := os.Stat(filepath.Join(folder, "skills", "midcompact", filepath.FromSlash(f))); err != nil {
			t.Errorf("the midcompact skill's %s is not installed: %v", f, err)
		}
	}
	return env
}

func startPi(t *testing.T, env *pitest.Env, extra ...string) *session {
	t.Helper()
	c, err := pirpc.Start(testCtx(t), env.Options(extra...))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c.Close(ctx)
	})
	return &session{env, c}
}

// prompt sends text and collects events until the agent settled.
func (s *session) prompt(t *testing.T, ctx context.Context, text string) []pirpc.Event {
	t.Helper()
	if _, err := s.c.Prompt(ctx, pirpc.PromptCommand{Message: text}); err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	return s.until(t, ctx, settled)
}

// command runs a slash command, answering a select dialog with the option
// starting with pick, until a notify whose text contains want.
func (s *session) command(t *testing.T, ctx context.Context, text, pick, want string) []pirpc.Event {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := s.c.Prompt(ctx, pirpc.PromptCommand{Message: text})
		errc <- err
	}()
	evs := s.until(t, ctx, func(ev pirpc.Event) bool {
		r, ok := ev.(*pirpc.ExtensionUIRequest)
		if !ok {
			return false
		}
		if r.Method == "select" {
			for _, o := range r.Options {
				if pick != "" && strings.HasPrefix(o, pick) {
					v := o
					if err := s.c.RespondUI(ctx, pirpc.ExtensionUIResponse{ID: r.ID, Value: &v}); err != nil {
						t.Fatal(err)
					}
					return false
				}
			}
			t.Fatalf("select %q options %q: no %q", r.Title, r.Options, pick)
		}
		return r.Method == "notify" && strings.Contains(r.Message, want)
	})
	if err := <-errc; err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	return evs
}

func (s *session) until(t *testing.T, ctx context.Context, stop func(pirpc.Event) bool) []pirpc.Event {
	t.Helper()
	var got []pirpc.Event
	for {
		select {
		case ev, ok := <-s.c.Events():
			if !ok {
				t.Fatalf("events closed (pi: %v) after %d events", s.c.Err(), len(got))
			}
			got = append(got, ev)
			if stop(ev) {
				return got
			}
		case <-ctx.Done():
			var seen []string
			for _, e := range got {
				seen = append(seen, e.EventType()+describe(e))
			}
			t.Fatalf("timed out after events %v", seen)
		}
	}
}

func describe(ev pirpc.Event) string {
	if r, ok := ev.(*pirpc.ExtensionUIRequest); ok {
		return "(" + r.Method + ":" + r.Message + ")"
	}
	if e, ok := ev.(*pirpc.ExtensionError); ok {
		return "(" + e.Event + ": " + e.Error + ")"
	}
	return ""
}

func settled(ev pirpc.Event) bool { _, ok := ev.(*pirpc.AgentSettled); return ok }

func find[T pirpc.Event](evs []pirpc.Event) []T {
	var out []T
	for _, ev := range evs {
		if e, ok := ev.(T); ok {
			out = append(out, e)
		}
	}
	return out
}

// notices are the notify texts among evs.
func notices(evs []pirpc.Event) []string {
	var out []string
	for _, r := range find[*pirpc.ExtensionUIRequest](evs) {
		if r.Method == "notify" {
			out = append(out, r.Message)
		}
	}
	return out
}

// entries returns the session's entries and leaf.
func (s *session) entries(t *testing.T, ctx context.Context) ([]map[string]any, string) {
	t.Helper()
	res, err := s.c.GetEntries(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(res.Entries))
	for i, raw := range res.Entries {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	leaf := ""
	if res.LeafID != nil {
		leaf = *res.LeafID
	}
	return out, leaf
}

func customOf(es []map[string]any, customType string) []map[string]any {
	var out []map[string]any
	for _, e := range es {
		if e["type"] == "custom" && e["customType"] == customType {
			out = append(out, e)
		}
	}
	return out
}
