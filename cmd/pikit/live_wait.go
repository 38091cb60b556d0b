package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

// Exit codes of `live wait` (reference §3.2).
const (
	waitBatch = 0
	waitEnded = 1
	waitError = 2
	waitTaken = 3
)

func newLiveWaitCmd() *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use:   "wait [--root DIR]",
		Short: "Print one wake envelope (exit 0), session-ended (1), error (2) or wait-taken (3)",
		Long: `Long-poll the endpoint of --root for the next batch and print one line.

Exit 0: the wake envelope of a batch. Until that batch is acknowledged
(` + "`live ack CHECKPOINT_ID`" + `), every later wait serves it again, oldest first, so
a batch is never lost to a crashed agent; acknowledge it once handled.
Exit 1: {"status":"session-ended"}: the session ended and no batch is left.
Exit 2: an error, or the endpoint is not running (an ended session that
still holds batches exits 2: run ` + "`live start`" + ` to resume it).
Exit 3: {"status":"wait-taken"}: another wait is already parked on this
endpoint (one waiter at a time); the endpoint keeps running.

A wait with nothing to serve polls again every CE_LIVE_WAIT_TIMEOUT_MS
(default 30 s) until a batch arrives or the session ends.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := live.ResolveRoot("", root)
			if err != nil {
				return &exitError{code: waitError, err: err}
			}
			if code := waitLive(cmd.Context(), root, os.Getenv, cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "", rootUsage)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{code: waitError, err: err} })
	return cmd
}

// waitLive long-polls GET /wait through [live.AgentClient.Wait] and
// writes one line to out: the wake envelope, {"status":"session-ended"} or
// {"status":"wait-taken"}. It returns the exit code of reference §3.2.
func waitLive(ctx context.Context, root string, get func(string) string, out, errOut io.Writer) int {
	// One long poll lasts at most the endpoint's wait timeout.
	timeout := envMillis(get, "CE_LIVE_WAIT_TIMEOUT_MS", live.DefaultWaitTimeout) + 30*time.Second
	client, err := live.NewAgentClient(root, timeout)
	_, running, lerr := endpointPID(root)
	if err != nil || lerr != nil || !running {
		if (err == nil || errors.Is(err, live.ErrNotRunning)) && live.EndedAndDrained(root) {
			fmt.Fprintln(out, `{"status":"session-ended"}`)
			return waitEnded
		}
		fmt.Fprintln(errOut, "Endpoint is not running; run `start --root` to resume the session")
		return waitError
	}
	ans, err := client.Wait(ctx)
	var answer *live.AnswerError
	switch {
	case errors.Is(err, live.ErrUnreachable):
		if ctx.Err() != nil {
			return waitError
		}
		// stop retires the tokens just after the process exits.
		if waitReleased(ctx, root, 3*time.Second) && endedSoon(ctx, root) {
			fmt.Fprintln(out, `{"status":"session-ended"}`)
			return waitEnded
		}
		fmt.Fprintln(errOut, "wait: endpoint unreachable")
		return waitError
	case errors.As(err, &answer):
		fmt.Fprintf(errOut, "wait: unexpected HTTP %d\n", answer.Status)
		return waitError
	case err != nil:
		fmt.Fprintln(errOut, err)
		return waitError
	}
	switch ans.Outcome {
	case live.WaitBatch:
		out.Write(append(ans.Body, '\n'))
		return waitBatch
	case live.WaitEnded:
		out.Write(append(ans.Body, '\n'))
		return waitEnded
	}
	fmt.Fprintln(out, `{"status":"wait-taken"}`)
	return waitTaken
}

// endedSoon reports whether root's session is ended and drained now or
// within 3 s (stop retires the tokens right after the process exits).
func endedSoon(ctx context.Context, root string) bool {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(3 * time.Second)
	for {
		if live.EndedAndDrained(root) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-deadline:
			return false
		case <-tick.C:
		}
	}
}
