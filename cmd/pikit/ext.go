package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/piext"
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

// otherInstall reports the extensions folder of the other place Pi loads
// extensions from (the agent dir's for --project; the current directory's
// .pi/extensions otherwise) when it holds an installation of name.
func (f *extDirFlags) otherInstall(name string) (string, bool) {
	other := extDirFlags{agentDir: f.agentDir, project: !f.project}
	dir, err := other.dir()
	if err != nil {
		return "", false
	}
	if _, err := piext.ReadInstall(piext.Folder(dir, name)); err != nil {
		return "", false
	}
	return dir, true
}

// removeEmptyProjectDirs removes .pi/extensions and then .pi in the current
// directory when an uninstall left them empty: Pi asks to trust a project
// folder on every start while it has a .pi folder, even an empty one.
func removeEmptyProjectDirs(dir string) {
	if os.Remove(dir) == nil {
		os.Remove(filepath.Dir(dir))
	}
}

func builtin(name string) (*piext.Extension, error) {
	mk, ok := builtinExtensions()[name]
	if !ok {
		var names []string
		for n := range builtinExtensions() {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("no built-in extension %q (built in: %s; use --exec PATH for your own)", name, strings.Join(names, ", "))
	}
	return mk(), nil
}

// selfExecutable is os.Executable with symlinks resolved, refusing go run /
// go test builds.
func selfExecutable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", err
	}
	return exe, piext.CheckExecutable(exe)
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
			dir, err := f.dir()
			if err != nil {
				return err
			}
			if other, ok := f.otherInstall(name); ok {
				undo := "pikit ext uninstall " + name + " --project"
				if f.project {
					undo = "pikit ext uninstall " + name
				}
				return fmt.Errorf("%s is already installed in %s; Pi would load both and refuse to start (their tools conflict): run %s first", name, displayPath(other), undo)
			}
			o := piext.InstallOptions{Dir: dir}
			if execPath != "" {
				if err := checkExecFlag(execPath); err != nil {
					return err
				}
				exe, err := filepath.Abs(execPath)
				if err == nil {
					exe, err = filepath.EvalSymlinks(exe)
				}
				if err != nil {
					return err
				}
				if err := piext.CheckExecutable(exe); err != nil {
					return err
				}
				m, err := readManifest(cmd.Context(), exe)
				if err != nil {
					return err
				}
				if m.Name != name {
					return fmt.Errorf("%s declares the extension %q, not %q", filepath.Base(exe), m.Name, name)
				}
				o.Command, o.Manifest = []string{exe}, m
			} else {
				ext, err := builtin(name)
				if err != nil {
					return err
				}
				exe, err := selfExecutable()
				if err != nil {
					return err
				}
				o.Command, o.Manifest, o.Skills = []string{exe, "ext", "run", name}, ext.Manifest(), ext.Skills
			}
			folder, err := piext.WriteInstall(o)
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

// readManifest runs exe with piext.ManifestFlag.
func readManifest(ctx context.Context, exe string) (piext.Manifest, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, piext.ManifestFlag).Output()
	var m piext.Manifest
	if err != nil {
		return m, fmt.Errorf("read the manifest of %s: %w", filepath.Base(exe), err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n") // the manifest is the last line
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		return m, fmt.Errorf("read the manifest of %s: %w", filepath.Base(exe), err)
	}
	return m, nil
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
			dir, err := f.dir()
			if err != nil {
				return err
			}
			var users []string
			if in, err := piext.ReadInstall(piext.Folder(dir, name)); err == nil {
				files := make([]string, 0, len(in.Manifest.Files))
				for p := range in.Manifest.Files {
					files = append(files, p)
				}
				if users, err = importers(dir, name, files); err != nil {
					return err
				}
			}
			if len(users) > 0 && !force {
				return fmt.Errorf("cannot uninstall %s: other extensions in %s import its files: %s; remove them first or pass --force", name, displayPath(dir), strings.Join(users, ", "))
			}
			if err := piext.Uninstall(dir, name); err != nil {
				if errors.Is(err, piext.ErrNotInstalled) {
					return fmt.Errorf("%s is not installed (in %s)", name, displayPath(dir))
				}
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "uninstalled %s\n", name)
			if f.project {
				removeEmptyProjectDirs(dir)
			}
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
			list, err := piext.List(dir)
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
	var npmBinary string
	cmd := &cobra.Command{
		Use:   "pack NAME DIR [--npm-binary PACKAGE/PATH]",
		Short: "Write a self-contained package of a built-in extension that `pi -e DIR` loads",
		Long: "Write a self-contained package of a built-in extension that `pi -e DIR` loads: this pikit binary\n" +
			"is copied into DIR/bin. With --npm-binary (e.g. @pikit/cli-{platform}/bin/pikit) nothing is copied:\n" +
			"the package runs the binary of the per-platform npm package it depends on (the release's Pi packages).",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ext, err := builtin(args[0])
			if err != nil {
				return err
			}
			dir, err := filepath.Abs(args[1])
			if err != nil {
				return err
			}
			run := []string{"ext", "run", args[0]}
			if npmBinary != "" {
				err = piext.PackNPM(dir, piext.NPMPackOptions{Binary: npmBinary, Args: run, Manifest: ext.Manifest(), Skills: ext.Skills, Source: buildFromSource(args[0])})
			} else {
				var exe string
				if exe, err = selfExecutable(); err == nil {
					err = piext.Pack(dir, exe, run, ext.Manifest(), ext.Skills)
				}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "packed %s in %s\n", args[0], dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&npmBinary, "npm-binary", "", "run the binary of this npm package instead of copying pikit ({platform} = the platform, e.g. linux-x64)")
	return cmd
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
