package browsertest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// Loading pages and running JavaScript in them.

// Navigate loads url in the tab and waits for its load event.
func Navigate(t testing.TB, tab *Tab, url string) {
	t.Helper()
	if err := tab.d.navigate(tab.ctx, url); err != nil {
		t.Fatalf("%s: navigate: %v", tab.Engine, err)
	}
}

// Reload reloads the tab's page and waits for its load event.
func Reload(t testing.TB, tab *Tab) {
	t.Helper()
	if err := tab.d.reload(tab.ctx); err != nil {
		t.Fatalf("%s: reload: %v", tab.Engine, err)
	}
}

// evalJSON evaluates expr (awaiting a promise) and returns its value as
// JSON; undefined is null.
func (tab *Tab) evalJSON(expr string) (string, error) {
	return tab.d.evalString(tab.ctx, "(async () => { const v = await (\n"+expr+"\n); return JSON.stringify(v === undefined ? null : v); })()")
}

// Eval evaluates expr in the page (awaiting a promise) and decodes its
// JSON value; an exception ends the test.
func Eval[T any](t testing.TB, tab *Tab, expr string) T {
	t.Helper()
	var v T
	raw, err := tab.evalJSON(expr)
	if err == nil {
		err = json.Unmarshal([]byte(raw), &v)
	}
	if err != nil {
		t.Fatalf("%s: evaluate %.120q: %v", tab.Engine, expr, err)
	}
	return v
}

// Do evaluates the statements in js for their effect.
func Do(t testing.TB, tab *Tab, js string) {
	t.Helper()
	Eval[any](t, tab, `(() => { `+js+"\n; return null })()")
}

// Wait polls a JavaScript predicate every 25 ms until it is truthy, at most
// timeout; on timeout it ends the test naming what, with the taskbar's
// status, activity, output and error. An evaluation error (a page being
// replaced) counts as not yet. The bound only stops a broken run.
func Wait(t testing.TB, tab *Tab, what, predicate string, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		raw, err := tab.evalJSON(`!!(` + predicate + "\n)")
		if err == nil && raw == "true" {
			return
		}
		if err != nil {
			last = err
		}
		select {
		case <-tick.C:
			continue
		case <-deadline.C:
		case <-tab.ctx.Done():
		}
		break
	}
	state, _ := tab.evalJSON(Shadow(`["[data-status-text]", "[data-activity]", "[data-output]", "[data-error]", "[data-retry]"].map((s) => (root.querySelector(s) || {}).textContent).join(" | ")`))
	t.Fatalf("%s: waiting for %s: timed out after %v (last error: %v; taskbar: %s)", tab.Engine, what, timeout, last, state)
}

// JSString quotes s as a JavaScript string literal.
func JSString(s string) string { return mustJSON(s) }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("browsertest: %v", err)) // only strings and string slices come here
	}
	return string(b)
}
