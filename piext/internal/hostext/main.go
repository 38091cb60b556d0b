// Command hostext is the Go extension the real-Pi host tests install with
// `pikit ext install hostprobe --exec`: it ships host.ts and api.ts beside
// the bridge (piext Extension.Files), creates a host object on
// globalThis[Symbol.for("pikit.hostprobe/1")] from its factory (HostSpec),
// and offers the tool host_call {fn, args} that calls a host function
// through Pi.CallHost and answers {value} or {code, error}.
package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/pikit-dev/pikit/piext"
)

// Symbol is the host's globalThis key.
const Symbol = "pikit.hostprobe/1"

// hostTS keeps functions other extensions register (api.ts) and exposes
// them to Go: calls.run (synchronous), asyncCalls.runAsync, calls.session
// (the bound session manager's id) and calls.retired (how many earlier
// hosts were retired, counted on globalThis).
const hostTS = `export default function (pi: any, opts: { name: string }) {
  const fns = new Map<string, (...a: any[]) => any>();
  const g: any = globalThis;
  const counter = Symbol.for("pikit.hostprobe.retired");
  g[counter] = g[counter] ?? 0;
  return {
    register(name: string, f: (...a: any[]) => any) { fns.set(name, f); },
    calls: {
      run(env: any, name: string, ...args: any[]) {
        const f = fns.get(name);
        if (!f) throw Object.assign(new Error("no function " + name), { code: -32099 });
        return f(...args);
      },
      session(env: any) { return env.sessionManager.getSessionId(); },
      retired() { return g[counter]; },
    },
    asyncCalls: {
      runAsync(env: any, name: string, ...args: any[]) { return fns.get(name)!(...args); },
    },
    retire() { g[counter]++; },
  };
}
`

// apiTS is what a companion imports: it reaches the host at call time.
const apiTS = `export function register(name: string, f: (...a: any[]) => any): void {
  const host: any = (globalThis as any)[Symbol.for("pikit.hostprobe/1")];
  if (!host) throw new Error("hostprobe host is not loaded");
  host.register(name, f);
}
`

func main() {
	piext.Main(&piext.Extension{
		Name:  "hostprobe",
		Files: map[string]string{"host.ts": hostTS, "api.ts": apiTS},
		Host:  &piext.HostSpec{File: "host.ts", Symbol: Symbol},
		Tools: []piext.Tool{{
			Name: "host_call", Description: "Call a host function",
			Parameters: json.RawMessage(`{"type":"object","properties":{"fn":{"type":"string"},"args":{"type":"array"}},"required":["fn"]}`),
			Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
				var p struct {
					Fn   string `json:"fn"`
					Args []any  `json:"args"`
				}
				if err := c.Decode(&p); err != nil {
					return nil, err
				}
				v, err := c.Pi.Session().CallHost(ctx, Symbol, p.Fn, p.Args...)
				out := map[string]any{"value": v}
				if err != nil {
					var ce *piext.CallError
					var code int64
					if errors.As(err, &ce) {
						code = ce.Code
					}
					out = map[string]any{"code": code, "error": err.Error()}
				}
				b, _ := json.Marshal(out)
				return &piext.ToolResult{Content: []piext.Content{piext.Text(string(b))}}, nil
			},
		}},
	})
}
