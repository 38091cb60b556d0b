package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
	"github.com/spf13/cobra"
)

// stateflowFlags are the flags every `pikit stateflow` subcommand shares.
type stateflowFlags struct {
	agentDir string
	cwd      string
	session  string
}

func newStateflowCmd() *cobra.Command {
	f := &stateflowFlags{}
	cmd := &cobra.Command{
		Use:   "stateflow",
		Short: "Read, patch, check and list a StateFlow memory store offline",
		Long: `Read, patch, check and list a StateFlow memory store offline.

The store is <agent-dir>/state-flow, shared with Pi running State Flow. A patch
takes the store's publication lock, <agent-dir>/state-flow/.state-flow-publication.lock
(the writer's PID and a newline), and waits while a running process holds it.
A lock whose PID is dead, or that is empty or malformed for 2 s, was left by a
crashed writer and is removed; if the lock names a running process that is not
Pi or pikit (a reused PID), remove the file by hand.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.PersistentFlags().StringVar(&f.agentDir, "agent-dir", "", "Pi agent directory (default $PI_CODING_AGENT_DIR, else ~/.pi/agent)")
	cmd.PersistentFlags().StringVar(&f.cwd, "cwd", "", "working directory whose CWD scope is in reach (default the current directory; need not exist)")
	cmd.PersistentFlags().StringVar(&f.session, "session", "", "session: Pi's session id (the UUID of pi --session) or the session file's basename without .jsonl; read, log and check need an existing one")
	cmd.AddCommand(newStateflowReadCmd(f), newStateflowPatchCmd(f), newStateflowCheckCmd(f), newStateflowLogCmd(f))
	return cmd
}

// where resolves the agent dir (flag, then $PI_CODING_AGENT_DIR, then
// ~/.pi/agent) and the cwd (flag, then the current directory); the
// environment is read here only.
func (f *stateflowFlags) where() (agentDir, cwd string, err error) {
	agentDir = f.agentDir
	if agentDir == "" {
		agentDir = os.Getenv("PI_CODING_AGENT_DIR")
	}
	if agentDir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", "", fmt.Errorf("stateflow: no --agent-dir and no home directory: %w", err)
		}
		agentDir = filepath.Join(home, ".pi", "agent")
	}
	// The CWD scope key is made from the directory as Pi sees its own
	// (Node's process.cwd(): symlinks resolved), so the CLI and Pi share
	// one CWD scope also behind a symlink.
	if f.cwd != "" {
		cwd, err = platform.CanonicalPath(f.cwd)
	} else {
		cwd, err = platform.Getwd()
	}
	if err != nil {
		return "", "", fmt.Errorf("stateflow: cwd: %w", err)
	}
	return agentDir, cwd, nil
}

// existing resolves --session for the commands that only look (read, log,
// check) with [store.ResolveSession]; "" when --session is not set. noMemory is
// true when neither the global nor the CWD scope has a file yet. A store
// reached through a symbolic link is an error that says so (StateFlow does
// not follow one), never "no memory".
func (f *stateflowFlags) existing() (session string, noMemory bool, err error) {
	agentDir, cwd, err := f.where()
	if err != nil {
		return "", false, err
	}
	l, err := store.NewLayout(filepath.Join(agentDir, "state-flow"), cwd, "")
	if err != nil {
		return "", false, err
	}
	if link, err := store.FirstLink(l); err != nil || link != "" {
		if err == nil {
			err = fmt.Errorf("stateflow: the State Flow store for this directory is behind a symbolic link, which State Flow does not follow: %q", link)
		}
		return "", false, err
	}
	if f.session != "" {
		if session, err = store.ResolveSession(l, f.session); err != nil {
			return "", false, err
		}
	}
	has, err := store.HasMemory(l)
	return session, !has && session == "", err
}

// patchSession resolves --session for patch: an existing session (its key,
// or Pi's session id naming one folder, as for read) is that session's key;
// a value that names none is the key of a session scope the patch creates.
// An id naming several folders is an error, as for read.
func (f *stateflowFlags) patchSession() (string, error) {
	if f.session == "" {
		return "", nil
	}
	agentDir, cwd, err := f.where()
	if err != nil {
		return "", err
	}
	l, err := store.NewLayout(filepath.Join(agentDir, "state-flow"), cwd, "")
	if err != nil {
		return "", err
	}
	session, err := store.ResolveSession(l, f.session)
	if errors.Is(err, store.ErrUnknownSession) {
		return f.session, nil
	}
	return session, err
}

// open resolves the flags and opens the store with the operator's
// config.json.
func (f *stateflowFlags) open(cmd *cobra.Command, session string) (*store.Store, error) {
	agentDir, cwd, err := f.where()
	if err != nil {
		return nil, err
	}
	root := filepath.Join(agentDir, "state-flow")
	cfg := stateflow.DefaultConfig()
	cfgPath := filepath.Join(root, "config.json")
	if data, err := os.ReadFile(cfgPath); err == nil {
		if cfg, err = stateflow.ParseConfig(data, cfgPath); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	l, err := store.NewLayout(root, cwd, session)
	if err != nil {
		return nil, err
	}
	stderr := cmd.ErrOrStderr()
	var diag *store.Diagnostics
	if cfg.Logging {
		diag = store.NewDiagnostics(agentDir)
	}
	return store.Open(l, &store.Options{
		Diagnostics:    diag,
		HistoryLimit:   cfg.HistoryLimit,
		NewSessionMode: cfg.Mode,
		OnLockWait: func(pid int) {
			fmt.Fprintf(stderr, "waiting for the StateFlow store lock held by PID %d\n", pid)
		},
	}), nil
}

// fail prints "pikit: " and err's exact text as one line (the prefix every
// pikit error carries) and exits 1.
func fail(cmd *cobra.Command, err error) error {
	fmt.Fprintln(cmd.ErrOrStderr(), "pikit:", strings.TrimPrefix(err.Error(), "\n"))
	return &exitError{code: 1}
}

func newStateflowReadCmd(f *stateflowFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "read [PATH]",
		Short: "Print what read_state returns for PATH (default effective)",
		Long: `Print what read_state returns for PATH (default effective).

With no memory yet for this agent dir and directory, read says so on stderr and
still prints the empty value with exit status 0. A store reached through a
symbolic link (State Flow follows none) and a --session that matches no session
folder are errors (exit status 1).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "effective"
			if len(args) == 1 {
				path = args[0]
			}
			session, noMemory, err := f.existing()
			if err != nil {
				return fail(cmd, err)
			}
			if noMemory {
				// The empty value still goes to stdout: scripts rely on it.
				fmt.Fprintln(cmd.ErrOrStderr(), "pikit: no State Flow memory for this directory yet")
			}
			s, err := f.open(cmd, session)
			if err != nil {
				return fail(cmd, err)
			}
			out, err := s.ReadState(cmd.Context(), store.ReadPathArgs(path))
			if err != nil {
				return fail(cmd, err)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), out)
			return err
		},
	}
}

func newStateflowPatchCmd(f *stateflowFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "patch JSON|-",
		Short: "Apply a patch_state argument (- reads stdin) and print the acknowledgement",
		Long: `Apply a patch_state argument (- reads stdin) and print the acknowledgement.

The argument is one JSON object keyed by scope (global, cwd, session), each a merge
patch of roots (intents, contract, working, artifacts, lazy); null deletes. The
session scope needs --session. It may be at most 16 MiB and nest at most 1000
levels of arrays and objects. A null that deletes a key already absent is not an
error: the tool's missing-deletion hint is printed on stderr, one JSON line each.`,
		Example: `  pikit stateflow patch '{"cwd":{"contract":{"db":"postgres"}}}'
  echo '{"session":{"working":{"step":"tests"}}}' | pikit stateflow patch --session KEY -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw := []byte(args[0])
			if args[0] == "-" {
				b, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), maxPatchInput+1))
				if err != nil {
					return fail(cmd, err)
				}
				raw = b
			}
			if len(raw) > maxPatchInput {
				return fail(cmd, fmt.Errorf("stateflow patch: input larger than %d MiB", maxPatchInput>>20))
			}
			session, err := f.patchSession()
			if err != nil {
				return fail(cmd, err)
			}
			s, err := f.open(cmd, session)
			if err != nil {
				return fail(cmd, err)
			}
			res, err := s.PatchState(cmd.Context(), raw, &store.PatchOptions{CreateSession: true})
			switch {
			case errors.Is(err, stateflow.ErrTooDeep):
				return fail(cmd, fmt.Errorf("stateflow patch: the argument is nested too deeply (more than %d levels)", stateflow.MaxDepth))
			case errors.Is(err, stateflow.ErrInvalidJSON):
				// The tool answers undecodable input with upstream's text; a
				// person typing JSON needs to hear that it is not JSON.
				return fail(cmd, errors.New("stateflow patch: the argument is not valid JSON"))
			case err != nil:
				return fail(cmd, err)
			}
			if _, err := fmt.Fprintln(cmd.OutOrStdout(), strings.TrimPrefix(res.Text(), "\n")); err != nil {
				return err
			}
			return printHints(cmd.ErrOrStderr(), res.Hints)
		},
	}
}

// maxPatchInput bounds the patch_state argument `pikit stateflow patch`
// reads: 16 MiB.
const maxPatchInput = 16 << 20

// printHints writes the missing-deletion hints a patch returned (the
// tool's details.hints), one JSON line per hint in scope order:
// "pikit: hint {"scope":…,"type":"missing-deletion","target":…,"unavailable":…}".
func printHints(w io.Writer, hints map[string][]stateflow.Hint) error {
	for _, scope := range stateflow.Scopes {
		for _, h := range hints[scope] {
			line, err := json.Marshal(struct {
				Scope string `json:"scope"`
				stateflow.Hint
			}{scope, h})
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(w, "pikit: hint %s\n", line); err != nil {
				return err
			}
		}
	}
	return nil
}

func newStateflowCheckCmd(f *stateflowFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Classify every scope in reach and print ok or the exact error",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			session, _, err := f.existing()
			if err != nil {
				return fail(cmd, err)
			}
			s, err := f.open(cmd, session)
			if err != nil {
				return fail(cmd, err)
			}
			sessions := []string{session}
			if session == "" {
				keys, err := store.Sessions(s.Layout())
				if err != nil {
					return fail(cmd, err)
				}
				sessions = append(sessions, keys...)
			}
			for _, key := range sessions {
				si, err := f.open(cmd, key)
				if err == nil {
					_, err = si.Read(cmd.Context())
				}
				if err != nil {
					return fail(cmd, err)
				}
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), "ok")
			return err
		},
	}
}

func newStateflowLogCmd(f *stateflowFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "log [SCOPE]",
		Short: "Print the retained history (checkpoint and tail) as JSON lines",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			scope := ""
			if len(args) == 1 {
				scope = args[0]
				if scope != "global" && scope != "cwd" && scope != "session" {
					return fail(cmd, fmt.Errorf("stateflow: unknown scope %q (global, cwd or session)", scope))
				}
			}
			session, _, err := f.existing()
			if err != nil {
				return fail(cmd, err)
			}
			s, err := f.open(cmd, session)
			if err != nil {
				return fail(cmd, err)
			}
			snap, err := s.Read(cmd.Context())
			if err != nil {
				return fail(cmd, err)
			}
			lines, err := store.LogLines(snap, scope)
			if err != nil {
				return fail(cmd, err)
			}
			w := cmd.OutOrStdout()
			for _, l := range lines {
				if _, err := fmt.Fprintf(w, "%s\n", l); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
