package piext_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/pirpc"
)

func TestMain(m *testing.M) { pitest.Main(m) }

func testCtx(t *testing.T) context.Context { return testCtxFor(t, 90*time.Second) }

// testCtxFor bounds a test that moves megabytes through Pi on a shared host.
func testCtxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// probe is a real Pi with the probe extension (internal/testext) installed
// through `pikit ext install probe --exec`, a persisted session, and the
// extension's record file.
type probe struct {
	env *pitest.Env
	out string // PIKIT_PROBE_OUT
	exe string // the sidecar program
}

func newProbe(t *testing.T, script modelserver.ScriptFunc) *probe {
	t.Helper()
	return newProbeWith(t, &pitest.Options{Script: script, Session: true})
}

// newProbeWith is newProbe with the environment's options given whole.
func newProbeWith(t *testing.T, opts *pitest.Options) *probe {
	t.Helper()
	env := pitest.New(t, opts)
	p := &probe{env: env, out: filepath.Join(t.TempDir(), "probe.jsonl")}
	env.Env = append(env.Env, "PIKIT_PROBE_OUT="+p.out)
	p.exe = pitest.BuildCommand(t, "./piext/internal/testext")
	env.InstallExtension(t, "probe", p.exe)
	return p
}

func (p *probe) start(t *testing.T) *pirpc.Client {
	t.Helper()
	c, err := pirpc.Start(testCtx(t), p.env.Options())
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c.Close(ctx)
	})
	return c
}

type record struct {
	Ev      string `json:"ev"`
	Pid     int    `json:"pid"`
	T       int64  `json:"t"`
	Event   string `json:"event"`
	Gen     uint64 `json:"gen"`
	Session string `json:"session"`
	Word    string `json:"word"`
	N       int    `json:"n"`
	Changed bool   `json:"changed"`
	// Payload is the hook's event object, for the hooks the probe keeps it.
	Payload json.RawMessage `json:"payload"`
}

func (p *probe) records(t *testing.T) []record {
	t.Helper()
	f, err := os.Open(p.out)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r record
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// waitRecord polls the record file until match holds for one record.
func (p *probe) waitRecord(t *testing.T, ctx context.Context, match func(record) bool) record {
	t.Helper()
	for {
		for _, r := range p.records(t) {
			if match(r) {
				return r
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no matching probe record in %+v", p.records(t))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// exited reports whether the probe sidecar pid has exited, by taking the
// lock it holds while it runs (a zombie, which platform.Alive counts as
// alive, holds none).
func (p *probe) exited(t *testing.T, pid int) bool {
	t.Helper()
	f, err := os.OpenFile(fmt.Sprintf("%s.alive.%d", p.out, pid), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ok, err := platform.TryLock(f, true)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func pids(rs []record) map[int]bool {
	m := map[int]bool{}
	for _, r := range rs {
		if r.Ev == "start" {
			m[r.Pid] = true
		}
	}
	return m
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

func toolCall(id, name, args string) modelserver.ToolCall {
	return modelserver.ToolCall{ID: id, Name: name, Arguments: []string{args}}
}

// script answers a request whose user messages contain a key with its tool
// calls, and everything else (a request ending in a tool result, too) with
// "done". It looks at this turn's user messages: an injected custom message
// may follow the prompt.
func script(cases map[string][]modelserver.ToolCall) modelserver.ScriptFunc {
	return func(r *modelserver.Request) modelserver.Script {
		if r.Last().Role != "tool" {
			// This turn's user messages: those after the last assistant one.
			for i := len(r.Messages) - 1; i >= 0 && r.Messages[i].Role != "assistant"; i-- {
				m := r.Messages[i]
				for k, calls := range cases {
					if m.Role == "user" && strings.Contains(m.Text(), k) {
						return modelserver.Script{ToolCalls: calls}
					}
				}
			}
		}
		return modelserver.Script{Text: []string{"done"}}
	}
}
