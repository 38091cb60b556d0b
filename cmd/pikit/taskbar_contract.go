package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pikit-dev/pikit/taskbar/contract"
	"github.com/spf13/cobra"
)

func newTaskbarContractCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "contract",
		Short: "Inspect and verify the taskbar contract",
	}
	cmd.AddCommand(
		newTaskbarContractVerifyCmd(),
		newTaskbarContractNormalizeCmd(),
		newTaskbarContractEnvelopeCmd(),
	)
	return cmd
}

func newTaskbarContractVerifyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "verify [DIR]",
		Short: "Check a contract directory: schemas, every manifest fixture, prompt goldens",
		Long: "Verify reads a contract directory (schemas/, fixtures/manifest.json) unchanged and runs\n" +
			"every check of the conformance suite. DIR defaults to " + contract.DefaultContractDir + "\n" +
			"next to the module root above the working directory.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var dir string
			if len(args) == 1 {
				dir = args[0]
			} else {
				d, err := contract.FindContractDir(".")
				if err != nil {
					return fmt.Errorf("no DIR given and %w", err)
				}
				dir = d
			}
			if fi, err := os.Stat(filepath.Join(dir, "fixtures", "manifest.json")); err != nil || !fi.Mode().IsRegular() {
				// Name the directory the user gave or we derived: "open ." helps nobody.
				return fmt.Errorf("contract verify: %s is not a taskbar contract directory (it needs schemas/ and fixtures/manifest.json); pass DIR", dir)
			}
			r, err := contract.Verify(dir)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, c := range r.Checks {
				status := "ok  "
				if !c.OK {
					status = "FAIL"
				}
				line := status + "  " + c.Name
				if c.Detail != "" {
					line += ": " + c.Detail
				}
				fmt.Fprintln(out, line)
			}
			failed := len(r.Failed())
			fmt.Fprintf(out, "%d passed, %d failed\n", len(r.Checks)-failed, failed)
			if !r.OK() {
				return &exitError{code: 1, err: fmt.Errorf("contract verify: %d of %d checks failed", failed, len(r.Checks))}
			}
			return nil
		},
	}
}

func newTaskbarContractNormalizeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "normalize FILE",
		Short: "Print a browser context normalized, as canonical JSON",
		Long: "Normalize reads a browser context document (FILE, or - for stdin), normalizes and\n" +
			"validates it, and prints the canonical JSON the prompt envelope would carry. On\n" +
			"rejection it prints '<code>: <reason>' on stderr and exits 1.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readContractInput(cmd, args[0])
			if err != nil {
				return err
			}
			c, err := contract.NormalizeContext(data)
			if err != nil {
				return contractFailure(cmd, err)
			}
			out := append(c.CanonicalJSON(), '\n')
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
}

func newTaskbarContractEnvelopeCmd() *cobra.Command {
	var prompt string
	cmd := &cobra.Command{
		Use:   "envelope --prompt TEXT FILE",
		Short: "Print the exact prompt envelope sent to Pi for a prompt and a browser context",
		Long: "Envelope normalizes the prompt and the browser context in FILE (or - for stdin) as a\n" +
			"task request would be, and prints the exact envelope bytes, without a trailing newline.\n" +
			"On rejection it prints '<code>: <reason>' on stderr and exits 1.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readContractInput(cmd, args[0])
			if err != nil {
				return err
			}
			t, err := contract.NewTask(prompt, data)
			if err != nil {
				return contractFailure(cmd, err)
			}
			_, err = cmd.OutOrStdout().Write(t.Envelope())
			return err
		},
	}
	cmd.Flags().StringVar(&prompt, "prompt", "", "task instruction (required)")
	_ = cmd.MarkFlagRequired("prompt")
	return cmd
}

// readContractInput reads at most one byte past the request cap, so an
// oversized file is reported as oversized_payload without reading it all.
func readContractInput(cmd *cobra.Command, name string) ([]byte, error) {
	var r io.Reader = cmd.InOrStdin()
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return io.ReadAll(io.LimitReader(r, contract.MaxRequestBytes+1))
}

// contractFailure prints "<code>: <reason>" and exits 1 without a second
// message from main.
func contractFailure(cmd *cobra.Command, err error) error {
	var e *contract.Error
	if !errors.As(err, &e) {
		return err
	}
	reason := e.Reason
	if reason == "" {
		reason = e.Message
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", e.Code, reason)
	return &exitError{code: 1}
}
