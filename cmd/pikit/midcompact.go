package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/spf13/cobra"
)

func newMidcompactCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "midcompact",
		Short: "Planned mid-conversation compaction for Pi: offline inspection of session files",
	}
	cmd.AddCommand(newMidcompactAtomsCmd(), newMidcompactStatusCmd())
	return cmd
}

func newMidcompactAtomsCmd() *cobra.Command {
	var leaf string
	cmd := &cobra.Command{
		Use:   "atoms SESSION.jsonl",
		Short: "Print the branch's atoms as a JSON array",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return fmt.Errorf("midcompact atoms: %w", err)
			}
			defer f.Close()
			atoms, err := midcompact.FileAtoms(f, leaf)
			if err != nil {
				return fmt.Errorf("midcompact atoms: %s: %w", args[0], err)
			}
			out, err := json.MarshalIndent(atoms, "", "  ")
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(append(out, '\n'))
			return err
		},
	}
	cmd.Flags().StringVar(&leaf, "leaf", "", "entry id ending the branch (default: the last entry in file order)")
	return cmd
}

func newMidcompactStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status SESSION.jsonl",
		Short: "Print the midcompact status of the session's current branch",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return fmt.Errorf("midcompact status: %w", err)
			}
			defer f.Close()
			text, err := midcompact.FileStatus(f)
			if err != nil {
				return fmt.Errorf("midcompact status: %s: %w", args[0], err)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), text)
			return err
		},
	}
}
