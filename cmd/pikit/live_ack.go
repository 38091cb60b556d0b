package main

import (
	"errors"
	"time"

	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

// ackTimeout bounds one ack request: an ack is a journal append.
const ackTimeout = 30 * time.Second

func newLiveAckCmd() *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use:   "ack [--root DIR] CHECKPOINT_ID",
		Short: "Acknowledge a served batch; prints {ok, checkpoint_id[, already_acked]}",
		Long: `Acknowledge the batch of CHECKPOINT_ID (the wake envelope's checkpoint_id)
with POST /checkpoints/<id>/ack, as the agent: the agent token is read from
state/session.json and never appears in argv. A repeat ack prints
"already_acked":true. An unknown checkpoint, a stopped endpoint or any other
answer exits 1 with the endpoint's answer on stderr.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := live.ResolveRoot("", root)
			if err != nil {
				return err
			}
			c, err := live.NewAgentClient(root, ackTimeout)
			if errors.Is(err, live.ErrNoSession) {
				return err
			}
			if errors.Is(err, live.ErrNotRunning) {
				return errors.New("live: the endpoint is stopped; its checkpoints cannot be acknowledged")
			}
			if err != nil {
				return err
			}
			res, err := c.Ack(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(live.MarshalLine(res))
			return err
		},
	}
	cmd.Flags().StringVar(&root, "root", "", rootUsage)
	return cmd
}
