package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/install"
	"github.com/spf13/cobra"
)

func newExtCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ext",
		Short: "Install and run Pi extensions written in Go",
		Long: "Pi loads extensions written in TypeScript; a Go extension is installed as a small bridge\n" +
			"(pikit-NAME/ in Pi's extensions folder) that starts the Go program as a sidecar.",
	}
	cmd.AddCommand(newExtInstallCmd(), newExtUninstallCmd(), newExtListCmd(), newExtPackCmd(), newExtRunCmd())
	return cmd
}

// extDirFlags are the flags that choose the extensions folder.
type extDirFlags struct {
	agentDir string
	project  bool
}

func (f *extDirFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.agentDir, "agent-dir", "", "Pi's agent dir (default $PI_CODING_AGENT_DIR, else ~/.pi/agent)")
	cmd.Flags().BoolVar(&f.project, "project", false, "use the project's .pi/extensions in the current directory")
}

// dir resolves the extensions folder: --project → ./.pi/extensions, else
// <agentDir>/extensions with the agent dir from --agent-dir, then
// PI_CODING_AGENT_DIR, then ~/.pi/agent.
func (f *extDirFlags) dir() (string, error) {
	if f.project {
		wd, err := platform.Getwd() // Pi's process.cwd(), whose .pi/extensions Pi loads
		if err != nil {
			return "", err
		}
		return filepath.Join(wd, ".pi", "extensions"), nil
	}
	agent, err := f.agent()
	if err != nil {
		return "", err
	}
	return filepath.Join(agent, "extensions"), nil
}

// agent resolves Pi's agent dir: --agent-dir, then PI_CODING_AGENT_DIR,
// then ~/.pi/agent (absolute).
func (f *extDirFlags) agent() (string, error) {
	agent := f.agentDir
	if agent == "" {
		agent = os.Getenv("PI_CODING_AGENT_DIR")
	}
	if agent == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the agent dir: %w", err)
		}
		agent = filepath.Join(home, ".pi", "agent")
	}
	return filepath.Abs(agent)
}

// target is where an install or uninstall acts: the folder the flags
// choose, the other place Pi loads extensions from, and how messages show
// paths.
func (f *extDirFlags) target() (install.Target, error) {
	dir, err := f.dir()
	if err != nil {
		return install.Target{}, err
	}
	t := install.Target{Dir: dir, Project: f.project, Display: displayPath}
	other := extDirFlags{agentDir: f.agentDir, project: !f.project}
	if o, err := other.dir(); err == nil {
		t.Other = o
	}
	return t, nil
}

func builtin(name string) (*piext.Extension, error) {
	mk, ok := builtinExtensions()[name]
	if !ok {
		return nil, fmt.Errorf("no built-in extension %q (built in: %s; use --exec PATH for your own)", name, strings.Join(builtinNames(), ", "))
	}
	return mk(), nil
}

// selfExecutable is os.Executable with symlinks resolved (install and pack
// refuse go run / go test builds).
func selfExecutable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
}

func newExtInstallCmd() *cobra.Command {
	var f extDirFlags
	var execPath string
	cmd := &cobra.Command{
		Use:   "install NAME [--exec PATH] [--project] [--agent-dir DIR]",
		Short: "Install a Go extension where Pi discovers it (idempotent)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			t, err := f.target()
			if err != nil {
				return err
			}
			var folder string
			if execPath != "" {
				folder, err = install.Program(cmd.Context(), t, name, execPath)
				var pe *install.ProgramError
				if errors.As(err, &pe) {
					err = fmt.Errorf("--exec %w", pe)
				}
			} else {
				var ext *piext.Extension
				var exe string
				if ext, err = builtin(name); err == nil {
					if exe, err = selfExecutable(); err == nil {
						folder, err = install.Extension(t, ext, []string{exe, "ext", "run", name})
					}
				}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "installed %s in %s\n", name, folder)
			if f.project {
				fmt.Fprintln(cmd.ErrOrStderr(), "note: Pi loads project extensions only for trusted projects (in RPC mode pass --approve)")
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&execPath, "exec", "", "your own extension program (built with piext.Main) instead of a built-in one")
	return cmd
}

func newExtUninstallCmd() *cobra.Command {
	var f extDirFlags
	var force bool
	cmd := &cobra.Command{
		Use:   "uninstall NAME [--force] [--project] [--agent-dir DIR]",
		Short: "Remove an installed Go extension",
		Long: "Remove an installed Go extension. When other extensions in the same folder import files it\n" +
			"installs (e.g. stateflow's modules.ts), Pi could no longer start: uninstall refuses and names them;\n" +
			"remove them first or pass --force. The agent dir's extensions folder is left in place; a project's\n" +
			".pi/extensions and .pi are removed when the uninstall leaves them empty.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			t, err := f.target()
			if err != nil {
				return err
			}
			users, err := install.Remove(t, name, force)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "uninstalled %s\n", name)
			if len(users) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: other extensions import files of %s: %s; Pi will not start until they are removed\n", name, strings.Join(users, ", "))
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&force, "force", false, "uninstall even when other extensions import its files")
	return cmd
}

func newExtListCmd() *cobra.Command {
	var f extDirFlags
	cmd := &cobra.Command{
		Use:   "list [--project] [--agent-dir DIR]",
		Short: "List installed Go extensions, whether their program still exists, their sidecar log, and the absolute paths of the files they install for other extensions to import",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := f.dir()
			if err != nil {
				return err
			}
			list, err := install.List(dir)
			if err != nil {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "no extensions installed in %s\n", displayPath(dir))
			}
			for _, in := range list {
				state := "ok"
				if !in.CommandOK {
					state = "missing program (install again)"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\t%s\n", in.Name, state, strings.Join(in.Command, " "))
				if agent, err := f.agent(); err == nil {
					fmt.Fprintf(cmd.OutOrStdout(), "\tlog\t%s\n", piext.LogPath(agent, in.Name))
				}
				files := in.InstalledFiles()
				for _, rel := range in.Files {
					fmt.Fprintf(cmd.OutOrStdout(), "\tfile %s\t%s\n", rel, files[rel])
				}
			}
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

func newExtPackCmd() *cobra.Command {
	var npmBinary, execPath string
	cmd := &cobra.Command{
		Use:   "pack NAME DIR [--exec PATH] [--npm-binary PACKAGE/PATH]",
		Short: "Write a self-contained package of a Go extension that `pi -e DIR` loads",
		Long: "Write a self-contained package of a Go extension that `pi -e DIR` loads: a built-in one (this pikit\n" +
			"binary is copied into DIR/bin) or, with --exec PATH, your own program (a build of a main that calls\n" +
			"piext.Main, copied into DIR/bin). With --npm-binary (e.g. @pikit/cli-{platform}/bin/pikit) nothing is\n" +
			"copied: the package runs the binary of the per-platform npm package it depends on (the release's Pi packages).",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := filepath.Abs(args[1])
			if err != nil {
				return err
			}
			if err := packExtension(cmd.Context(), args[0], dir, execPath, npmBinary); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "packed %s in %s\n", args[0], dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&execPath, "exec", "", "pack your own extension program instead of a built-in one")
	cmd.Flags().StringVar(&npmBinary, "npm-binary", "", "run the binary of this npm package instead of copying one ({platform} = the platform, e.g. linux-x64)")
	return cmd
}

// packExtension writes the package of extension name into dir: the
// program at execPath (checked as `ext install --exec` checks it) or the
// built-in extension run by this pikit binary, copied into dir/bin or, with
// npmBinary, run from that npm package.
func packExtension(ctx context.Context, name, dir, execPath, npmBinary string) error {
	var exe, source string
	var run []string
	var manifest json.RawMessage
	var skills fs.FS
	if execPath != "" {
		var err error
		if exe, manifest, err = install.ProgramManifest(ctx, name, execPath); err != nil {
			var pe *install.ProgramError
			if errors.As(err, &pe) {
				err = fmt.Errorf("--exec %w", pe)
			}
			return err
		}
	} else {
		ext, err := builtin(name)
		if err != nil {
			return err
		}
		run, manifest, skills, source = []string{"ext", "run", name}, ext.Manifest(), ext.Skills, buildFromSource(name)
	}
	if npmBinary != "" {
		return install.PackNPM(dir, install.NPMPackOptions{Binary: npmBinary, Args: run, Manifest: manifest, Skills: skills, Source: source})
	}
	if exe == "" {
		var err error
		if exe, err = selfExecutable(); err != nil {
			return err
		}
	}
	return install.Pack(dir, exe, run, manifest, skills)
}

// buildFromSource is the one-line hint a Pi package of extension name
// shows on a platform without a binary: go install of this very version
// (@latest when unstamped), then pikit ext install.
func buildFromSource(name string) string {
	at := "latest"
	if version != "" {
		at = "v" + version
	}
	return fmt.Sprintf("Build it from source with Go 1.26: go install github.com/pikit-dev/pikit/cmd/pikit@%s, then pikit ext install %s", at, name)
}

func newExtRunCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "run NAME",
		Short:  "Serve a built-in extension on stdin/stdout (the sidecar the bridge starts)",
		Args:   cobra.ExactArgs(1),
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			ext, err := builtin(args[0])
			if err != nil {
				return err
			}
			return piext.Run(ext)
		},
	}
}

// displayPath shows p as ~/... under the home directory or relative to the
// current directory when inside it, so messages carry no absolute path
// where a shorter one exists.
func displayPath(p string) string {
	if wd, err := platform.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return r
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if r, err := filepath.Rel(home, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return filepath.Join("~", r)
		}
	}
	return p
}
