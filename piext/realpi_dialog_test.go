package piext_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/pirpc"
)

// TestRealPi_DialogsDefaultTimeoutAndCancel: dialogs opened without a
// timeout of their own reach the RPC client with piext's
// DefaultDialogTimeout, and a client's cancel reads as cancelled for
// select, input and editor (Pi 1.6.0's RPC mode passes a cancelled
// confirm on as "No").
func TestRealPi_DialogsDefaultTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	p := newProbe(t, nil)
	c := p.start(t)
	ctx := testCtx(t)
	go c.Prompt(ctx, pirpc.PromptCommand{Message: "/probe:dialogs"})
	timeouts := map[string]int64{}
	var notify string
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		r, ok := ev.(*pirpc.ExtensionUIRequest)
		if !ok {
			return false
		}
		if r.NeedsResponse() {
			timeouts[r.Method] = r.Timeout
			if err := c.RespondUI(ctx, pirpc.ExtensionUIResponse{ID: r.ID, Cancelled: true}); err != nil {
				t.Fatal(err)
			}
		}
		if r.Method == "notify" {
			notify = r.Message
		}
		return notify != ""
	})
	// Pi's RPC editor request carries no timeout: the bridge keeps it.
	want := piext.DefaultDialogTimeout.Milliseconds()
	for _, m := range []string{"confirm", "select", "input"} {
		if timeouts[m] != want {
			t.Errorf("%s request timeout = %d ms, want the default %d ms", m, timeouts[m], want)
		}
	}
	if _, ok := timeouts["editor"]; !ok {
		t.Errorf("no editor request; requests: %v", timeouts)
	}
	if w := "dialogs confirm=answered/false select=cancelled input=cancelled editor=cancelled"; notify != w {
		t.Errorf("notify = %q, want %q", notify, w)
	}
}

// TestRealPi_AbortEndsDialogWait: a tool waiting on an editor dialog (which
// Pi's RPC mode cannot close on an abort) ends when the run is aborted:
// the wait returns ctx's error and the tool's result is an error.
func TestRealPi_AbortEndsDialogWait(t *testing.T) {
	t.Parallel()
	p := newProbe(t, script(map[string][]modelserver.ToolCall{"DIALOG": {toolCall("call_d", "probe_dialog", `{}`)}}))
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "DIALOG"}); err != nil {
		t.Fatal(err)
	}
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		r, ok := ev.(*pirpc.ExtensionUIRequest)
		return ok && r.Method == "editor"
	})
	aborted := time.Now()
	if err := c.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	evs := pitest.Until(t, ctx, c, settled)
	if ends := find[*pirpc.ToolExecutionEnd](evs); len(ends) != 1 || !ends[0].IsError {
		t.Errorf("tool end after the abort: %+v", ends)
	}
	r := p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "dialog-ended" })
	if !strings.Contains(r.Word, "context canceled") {
		t.Errorf("the dialog's wait ended with %q, want ctx's error", r.Word)
	}
	t.Logf("abort → dialog wait ended in %v", time.Unix(0, r.T).Sub(aborted))
}
