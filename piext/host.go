package piext

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// HostSpec makes the bridge create a host object from the extension's
// factory: the bridge imports File (one of [Extension.Files]) with Node's
// own import (the bridge is loaded natively, not through Pi's jiti), so
// File is JavaScript (.mjs or .js), or TypeScript of erasable syntax only
// and never in a published npm package (Node strips no types under
// node_modules), and calls its default export as factory(pi, {name, dir}) (dir: the installed folder) when Pi runs the extension's
// factory (startup, /reload, and every session replacement, which reloads
// extensions). The returned object is bound on
// globalThis[Symbol.for(Symbol)], where other extensions' JavaScript finds
// it whatever their load order. A host object has the shape
//
//	{ calls?: {[fn]: (env, ...args) => value},        // synchronous: a thenable result is refused
//	  asyncCalls?: {[fn]: (env, ...args) => value|Promise}, // may return a promise
//	  retire?: () => void }
//
// where env is {sessionManager, signal}: the session manager of the Pi
// context the call is bound to and an AbortSignal aborted when Go cancels
// the call. Retirement (session_shutdown of any reason, or a factory run
// that finds its predecessor still bound) first removes the binding only
// when globalThis still holds that very object, then calls retire().
type HostSpec struct {
	File   string `json:"file"`
	Symbol string `json:"symbol"`
}

// CallHost runs fn of the host object on globalThis[Symbol.for(symbol)]
// (any extension's host, see [HostSpec]) in the context p is bound to, and
// returns its JSON value (null for undefined; the value crosses as JSON, so
// it is detached from the JavaScript objects). Cancelling ctx aborts the
// env.signal the function sees; the call times out after
// [ReverseCallTimeout]. Errors: [ErrStaleSession], [ErrStaleContext],
// [ErrUnavailable] (no host object under symbol, or no function fn),
// [ErrNotSynchronous] (a function of calls returned a thenable), a
// [*CallError] with the thrown message and, when the thrown value had a
// numeric code, that code; [ErrClosed] when the bridge went away.
func (p *Pi) CallHost(ctx context.Context, symbol, fn string, args ...any) (json.RawMessage, error) {
	if p.ctxID == "" && p.rt.generation() != p.gen {
		return nil, fmt.Errorf("piext: host %s.%s: %w: session generation %d was replaced by %d",
			symbol, fn, ErrStaleSession, p.gen, p.rt.generation())
	}
	ctx, cancel := context.WithTimeout(ctx, ReverseCallTimeout)
	defer cancel()
	if args == nil {
		args = []any{}
	}
	var out json.RawMessage
	err := p.rt.conn.Call(ctx, wire.MethodHostCall, wire.HostCallParams{CtxID: p.ctxID, Generation: p.gen, Symbol: symbol, Fn: fn, Args: args}, &out)
	if err != nil {
		return nil, fmt.Errorf("piext: host %s.%s: %w", symbol, fn, publicError(err))
	}
	return out, nil
}

// reservedFiles are the names install owns in the folder.
var reservedFiles = map[string]bool{"index.ts": true, "index.mjs": true, "package.json": true, wire.InstallFile: true}

// checkFiles validates [Extension.Files] and [Extension.Host]; it panics on
// a programming error, as [Extension.Manifest] does.
func checkFiles(files map[string]string, host *HostSpec) {
	for p := range files {
		top, _, _ := strings.Cut(p, "/")
		if !wire.FilePattern.MatchString(p) || path.Clean(p) != p || reservedFiles[p] || top == "skills" || top == "bin" {
			panic(fmt.Sprintf("piext: file %q: not a plain relative .ts/.js/.mjs/.json path, or a name install owns", p))
		}
	}
	if host != nil {
		if _, ok := files[host.File]; !ok {
			panic(fmt.Sprintf("piext: host file %q is not one of the extension's Files", host.File))
		}
		if host.Symbol == "" {
			panic("piext: host symbol is empty")
		}
	}
}
