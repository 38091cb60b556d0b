package piext_test

import (
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// newReplaceProbe is a probe with the session-replacement probes on
// (PIKIT_PROBE_REPLACE, set before the install: the context hook gets its
// own timeout, so Pi's abort of the run reaches it).
func newReplaceProbe(t *testing.T) *probe {
	t.Helper()
	env := pitest.New(t, &pitest.Options{Session: true, Script: script(nil)})
	p := &probe{env: env, out: t.TempDir() + "/probe.jsonl"}
	env.Env = append(env.Env, "PIKIT_PROBE_OUT="+p.out, "PIKIT_PROBE_REPLACE=1")
	p.exe = pitest.BuildCommand(t, "./piext/internal/testext")
	env.InstallExtension(t, "probe", p.exe)
	return p
}

// TestRealPi_StaleSessionAcrossReplacement: a session-scoped handle used
// from session_shutdown on, through the whole replacement (the old
// session's disposal, the factory's re-run, the new session_start), fails
// first with piext.ErrStaleSession, never with Pi's generic error for a
// stale ctx or a runtime not yet initialized.
func TestRealPi_StaleSessionAcrossReplacement(t *testing.T) {
	t.Parallel()
	p := newReplaceProbe(t)
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.GetState(ctx); err != nil {
		t.Fatal(err)
	}
	p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "hook" && r.Event == "session_start" })
	if res, err := c.NewSession(ctx, pirpc.NewSessionCommand{}); err != nil || res.Cancelled {
		t.Fatalf("new_session: %+v %v", res, err)
	}
	r := p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "stale-probe" })
	if !r.Changed || !strings.Contains(r.Word, "stale session") {
		t.Errorf("first failed call of the old session's handle: %q (ErrStaleSession: %v), want the stale-session error", r.Word, r.Changed)
	}
}

// TestRealPi_ReplacementAbortIsNoFailure: new_session while the context
// hook (with its own timeout, so Pi's abort reaches it) waits aborts the
// run; that abort is Pi ending the run, not the hook failing, so no
// extension_error reaches the user, and the new session's turn works.
func TestRealPi_ReplacementAbortIsNoFailure(t *testing.T) {
	t.Parallel()
	p := newReplaceProbe(t)
	c := p.start(t)
	ctx := testCtx(t)
	go c.Prompt(ctx, pirpc.PromptCommand{Message: "SLOWCTX please"})
	p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "context-wait" })
	if res, err := c.NewSession(ctx, pirpc.NewSessionCommand{}); err != nil || res.Cancelled {
		t.Fatalf("new_session: %+v %v", res, err)
	}
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "hello again"}); err != nil {
		t.Fatal(err)
	}
	// Every event since the start, up to the new session's run settling
	// (the aborted one may settle too, as aborted).
	evs := pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		s, ok := ev.(*pirpc.AgentSettled)
		return ok && !s.Aborted
	})
	for _, e := range find[*pirpc.ExtensionError](evs) {
		t.Errorf("extension error after a replacement's abort: %s: %s", e.Event, e.Error)
	}
}
