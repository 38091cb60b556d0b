package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/piext"
)

// ownSession: with PIKIT_PROBE_OWN_SESSION=1 the sidecar runs in a session
// of its own, as a child with this process's stdio, and this process only
// waits for it. The test harness ends Pi's process group when Pi dies; the
// sidecar then outlives that as a sidecar outlives a Pi killed alone, with
// only its pipes to tell. It reports whether it ran the sidecar so.
func ownSession() bool {
	if os.Getenv("PIKIT_PROBE_OWN_SESSION") != "1" {
		return false
	}
	exe, err := os.Executable()
	if err != nil {
		os.Exit(1)
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "PIKIT_PROBE_OWN_SESSION=0")
	platform.Detach(cmd)
	if err := cmd.Start(); err != nil {
		os.Exit(1)
	}
	cmd.Wait()
	return true
}

// startFaults runs before piext.Main, as a library's init would:
//   - PIKIT_PROBE_NOISE=1 prints to stdout (still the bridge's pipe): lines
//     that are not JSON-RPC (text, JSON values, an array) and last a text
//     without LF, which the first message then follows on its line;
//   - PIKIT_PROBE_SLOW_START=<file>: the first start (the file does not
//     exist yet; it is created) sleeps 8 s before serving;
//   - PIKIT_PROBE_START_GATE=<file>: the start waits (recorded as "gated")
//     until the file exists, so a test holds the sidecar's initialize
//     answer for as long as it needs.
func startFaults(rec *recorder) {
	if f := os.Getenv("PIKIT_PROBE_START_GATE"); f != "" {
		rec.log("gated")
		waitForFile(context.Background(), f)
	}
	if os.Getenv("PIKIT_PROBE_NOISE") == "1" {
		fmt.Print("PROBE-NOISE plain text\n42\nnull\n\"a string\"\n[1,2]\n{\"not\":\"rpc\"}\nPROBE-NOISE glued: ")
	}
	if f := os.Getenv("PIKIT_PROBE_SLOW_START"); f != "" {
		if _, err := os.Stat(f); err != nil {
			os.WriteFile(f, nil, 0o600)
			rec.log("slow-start")
			time.Sleep(8 * time.Second)
		}
	}
	rec.log("serving")
}

// faultTools are the probe's fault-injecting tools, for the real-Pi fault
// tests (piext/realpi_fault_test.go).
func faultTools(rec *recorder) []piext.Tool {
	return []piext.Tool{
		{Name: "probe_stubborn", Label: "Probe stubborn", Description: "Run until the process ends, ignoring cancellation",
			Parameters: obj(`{"type":"object","properties":{}}`),
			Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
				rec.log("stubborn")
				time.Sleep(24 * time.Hour) // ctx ignored (a sleep: select{} would let Go's deadlock check end the process)
				return nil, nil
			}},
		{Name: "probe_stderr", Label: "Probe stderr", Description: "Write n bytes of lines to stderr",
			Parameters: obj(`{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`),
			Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
				var p struct {
					N int `json:"n"`
				}
				if err := c.Decode(&p); err != nil {
					return nil, err
				}
				line := strings.Repeat("e", 1023) + "\n"
				for i := 0; i < p.N; i += len(line) {
					os.Stderr.WriteString(line)
				}
				rec.log("stderr", "n", p.N)
				return &piext.ToolResult{Content: []piext.Content{piext.Text("wrote")}}, nil
			}},
	}
}

// replaceFaults are the session-replacement probes, on with
// PIKIT_PROBE_REPLACE=1 (read at install time too: it sets the context
// hook's own timeout, which lets Pi's abort of the run reach the hook):
//   - the context hook of a conversation whose last user message says
//     SLOWCTX waits until its ctx ends (Pi aborts the run);
//   - session_shutdown starts calling the session's session-scoped handle
//     (getLeafId) until a call fails, and records the first error as
//     "stale-probe" (word: its text, changed: errors.Is ErrStaleSession).
type replaceFaults struct {
	rec *recorder
	on  bool
}

func newReplaceFaults(rec *recorder) *replaceFaults {
	return &replaceFaults{rec: rec, on: os.Getenv("PIKIT_PROBE_REPLACE") == "1"}
}

func (f *replaceFaults) timed(h piext.Hook) piext.Hook {
	if f.on {
		h.Timeout = time.Minute
	}
	return h
}

func (f *replaceFaults) shutdown(ctx context.Context, ev *piext.Event) (any, error) {
	if !f.on {
		return nil, nil
	}
	s := ev.Pi.Session()
	go func() {
		for i := 0; i < 100000; i++ {
			if _, err := s.GetLeafID(context.Background()); err != nil {
				f.rec.log("stale-probe", "word", err.Error(), "changed", errors.Is(err, piext.ErrStaleSession))
				return
			}
		}
	}()
	return nil, nil
}

// waitsOut reports whether the last user message asks the context hook to
// wait (SLOWCTX).
func waitsOut(msgs []piext.Message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role() == "user" {
			return strings.Contains(msgs[i].Text(), "SLOWCTX")
		}
	}
	return false
}

// dialogCommand, /probe:dialogs, opens one dialog of each kind without a
// timeout of its own (so each gets piext's default) and notifies how each
// ended: "dialogs confirm=STATUS/YES select=… input=… editor=…".
func dialogCommand() piext.Command {
	return piext.Command{Name: "probe:dialogs", Description: "One dialog of each kind, then how each ended",
		Run: func(ctx context.Context, c *piext.CommandCall) error {
			var out []string
			conf, err := c.Pi.Confirm(ctx, "Probe confirm", "a question", piext.DialogOptions{})
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("confirm=%s/%v", conf.Status, conf.Confirmed))
			for _, d := range []struct {
				kind string
				open func() (piext.DialogResult, error)
			}{
				{"select", func() (piext.DialogResult, error) {
					return c.Pi.Select(ctx, "Probe select", []string{"one", "two"}, piext.DialogOptions{})
				}},
				{"input", func() (piext.DialogResult, error) {
					return c.Pi.Input(ctx, "Probe input", "type", piext.DialogOptions{})
				}},
				{"editor", func() (piext.DialogResult, error) { return c.Pi.Editor(ctx, "Probe editor", "prefill") }},
			} {
				r, err := d.open()
				if err != nil {
					return err
				}
				out = append(out, d.kind+"="+string(r.Status))
			}
			return c.Pi.Notify(ctx, "dialogs "+strings.Join(out, " "), "info")
		}}
}

// dialogTool, probe_dialog, opens an editor (which Pi cannot close on an
// abort) and records "dialog-ended" (word: the error, or the status) when
// the wait ends.
func dialogTool(rec *recorder) piext.Tool {
	return piext.Tool{Name: "probe_dialog", Label: "Probe dialog", Description: "Open an editor dialog and wait for it",
		Parameters: obj(`{"type":"object","properties":{}}`),
		Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
			r, err := c.Pi.Editor(ctx, "Probe tool editor", "")
			if err != nil {
				rec.log("dialog-ended", "word", err.Error())
				return nil, err
			}
			rec.log("dialog-ended", "word", string(r.Status))
			return &piext.ToolResult{Content: []piext.Content{piext.Text("dialog " + string(r.Status))}}, nil
		}}
}
