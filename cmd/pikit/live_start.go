package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/gofrs/flock"
	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

func newLiveStartCmd() *cobra.Command {
	var f liveFlags
	cmd := &cobra.Command{
		Use:   "start [--root DIR] [--app-origin ORIGIN]",
		Short: "Start or resume the endpoint; prints {url, port, page_token, status}",
		Long: `Start or resume the detached endpoint for --root (default .pikit/live under
the working directory) and print its start line,
{"url","port","page_token","status":"started"|"resumed"|"running"}, on stdout.
--app-origin is required for a fresh start; a resume without it keeps the
session's own.

The server process lives as long as its owner: --owner-pid, by default the
grandparent of this command (the agent behind the shell that runs start),
else its parent. start names the owner it watches on stderr. When the owner
exits, the process stops but the session stays; start resumes it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			origin, proxies, err := f.parse(cmd)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if f.foreground {
				if f.ownerPID == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "pikit live: --foreground without --owner-pid watches no owner")
				}
				return serveLive(cmd.Context(), liveServeConfig{
					server: live.Server{Root: f.root, AppOrigin: origin, Host: f.host, Port: f.port, PortSet: cmd.Flags().Changed("port"),
						OwnerPID: f.ownerPID, TrustProxy: proxies, Logger: newLiveLogger()},
					getenv: os.Getenv,
					ready:  func(l live.StartLine) { out.Write(live.MarshalLine(l)) },
				})
			}
			return startDetached(cmd, &f, origin, proxies)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&f.foreground, "foreground", false, "run the server in this process")
	return cmd
}

// startDetached starts or resumes the endpoint as a detached process that
// watches its owner (--owner-pid, else [defaultOwnerPID]), names the owner
// on stderr and prints the start line on stdout.
func startDetached(cmd *cobra.Command, f *liveFlags, origin string, proxies []netip.Addr) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	owner, how := f.ownerPID, "--owner-pid"
	if owner == 0 {
		owner, how = defaultOwnerPID()
	}
	name, err := platform.ProcessName(owner)
	if err != nil {
		return fmt.Errorf("live: owner pid %d (%s) is not running; pass --owner-pid with the pid of a running process whose life the server should share", owner, how)
	}
	line, err := startLive(cmd.Context(), liveStart{
		root: f.root, appOrigin: origin, host: f.host, port: f.port, portSet: cmd.Flags().Changed("port"),
		ownerPID: owner, trustProxy: proxies, exe: exe,
	})
	if err != nil {
		return err
	}
	if line.Status == "running" {
		fmt.Fprintln(cmd.ErrOrStderr(), runningOwnerNote(f.root))
	} else {
		fmt.Fprintf(cmd.ErrOrStderr(), "pikit live: watching owner pid %d (%s, %s); the server stops, keeping the session, when it exits\n", owner, name, how)
	}
	_, err = cmd.OutOrStdout().Write(live.MarshalLine(line))
	return err
}

// liveStart says how to start the detached endpoint process:
// exe live serve --root <root> [flags].
type liveStart struct {
	root, appOrigin, host string
	port, ownerPID        int
	portSet               bool
	trustProxy            []netip.Addr
	exe                   string
}

// startLive starts or resumes the detached endpoint for o.root and returns
// its start line (reference §3.1): "running" when an endpoint process
// already serves the live session.
func startLive(ctx context.Context, o liveStart) (live.StartLine, error) {
	pidPath, err := live.PIDFile(o.root)
	if err != nil {
		return live.StartLine{}, err
	}
	dir := filepath.Dir(pidPath)
	if err := durable.MkdirAll(dir, 0o700); err != nil {
		return live.StartLine{}, fmt.Errorf("live: create state dir: %w", err)
	}
	lk := flock.New(filepath.Join(dir, "start.lock"), flock.SetPermissions(0o600))
	ok, err := lk.TryLock()
	if err != nil {
		return live.StartLine{}, fmt.Errorf("live: start lock: %w", err)
	}
	if !ok {
		return live.StartLine{}, errors.New("live: another start for this root is in progress")
	}
	defer lk.Unlock()
	if line, ok, err := runningLine(ctx, o); err != nil || ok {
		return line, err
	}
	return spawnLive(ctx, o, filepath.Dir(dir))
}

// runningLine answers for an endpoint process that already serves o.root's
// live session: its "running" start line, ok true. A process that serves
// an ended session (or whose files cannot be read) is stopped first; ok is
// then false and a new process is to be started.
func runningLine(ctx context.Context, o liveStart) (line live.StartLine, ok bool, err error) {
	_, running, err := endpointPID(o.root)
	if err != nil || !running {
		return live.StartLine{}, false, err
	}
	sess, serr := live.ReadSession(o.root)
	rep, rerr := live.ReadStatus(o.root, true)
	if serr == nil && rerr == nil && !rep.SessionEnded {
		if o.appOrigin != "" && o.appOrigin != sess.AppOrigin {
			return live.StartLine{}, false, fmt.Errorf("live: already running with --app-origin %s; stop it first", sess.AppOrigin)
		}
		return live.StartLine{URL: sess.URL, Port: sess.Port, PageToken: sess.PageToken, Status: "running"}, true, nil
	}
	return live.StartLine{}, false, stopEndpointProcess(ctx, o.root)
}

// serveArgs are the arguments after the executable of the detached
// process: live serve --root root --ready-fd fd and o's flags.
func (o liveStart) serveArgs(root, readyFD string) []string {
	args := []string{"live", "serve", "--root", root, "--ready-fd", readyFD}
	if o.appOrigin != "" {
		args = append(args, "--app-origin", o.appOrigin)
	}
	if o.host != "" {
		args = append(args, "--host", o.host)
	}
	if o.portSet {
		args = append(args, "--port", strconv.Itoa(o.port))
	}
	if o.ownerPID > 1 {
		args = append(args, "--owner-pid", strconv.Itoa(o.ownerPID))
	}
	for _, a := range o.trustProxy {
		args = append(args, "--trust-proxy", a.String())
	}
	return args
}

// spawnLive starts `o.exe live serve` detached, its output appended to
// the server log, and returns the start line it writes on its ready pipe
// within 5 s (or ctx's deadline, if sooner).
func spawnLive(ctx context.Context, o liveStart, root string) (live.StartLine, error) {
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return live.StartLine{}, fmt.Errorf("live: ready pipe: %w", err)
	}
	defer readyR.Close()
	defer readyW.Close() // closed again right after the start, so EOF on readyR means the server's end is gone
	cmd := exec.Command(o.exe)
	args := o.serveArgs(root, platform.PassFile(cmd, readyW))
	logPath, _ := live.ServerLog(o.root)
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return live.StartLine{}, fmt.Errorf("live: open server log: %w", err)
	}
	defer logf.Close()
	logStart, _ := logf.Seek(0, io.SeekEnd)
	cmd.Args = append(cmd.Args, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	platform.Detach(cmd)
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		return live.StartLine{}, fmt.Errorf("live: spawn server: %w", err)
	}
	line, rerr := readReady(ctx, readyR)
	if rerr != nil {
		_ = cmd.Process.Kill()
		werr := cmd.Wait()
		if errors.Is(rerr, os.ErrDeadlineExceeded) {
			return live.StartLine{}, errors.New("live: server did not come up within 5 s (see state/server.log)")
		}
		if why := lastLogLine(logPath, logStart); why != "" {
			return live.StartLine{}, fmt.Errorf("live: server exited during start: %s (%v; log: state/server.log)", why, werr)
		}
		return live.StartLine{}, fmt.Errorf("live: server exited during start (see state/server.log): %v", werr)
	}
	_ = cmd.Process.Release() // it runs on in its own session
	return line, nil
}

// readReady reads the start line the server writes on its ready pipe
// once it serves, within 5 s or by ctx's deadline if sooner; EOF first
// means it exited during start.
func readReady(ctx context.Context, r *os.File) (live.StartLine, error) {
	deadline := time.Now().Add(5 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = r.SetReadDeadline(deadline)
	data, err := jsonl.NewReader(r, 0).Next()
	var line live.StartLine
	if err == nil {
		err = json.Unmarshal(data, &line)
	}
	return line, err
}

// lastLogLine returns the last non-empty line the server wrote to its log
// at path from offset from on (at most the last 4 KiB of it), without a
// "pikit: " prefix: the reason a server that exited during start gave.
// "" when there is none or the log cannot be read.
func lastLogLine(path string, from int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size()-from > 4096 {
		from = fi.Size() - 4096
	}
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return ""
	}
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.TrimPrefix(strings.TrimSpace(lines[len(lines)-1]), "pikit: ")
}
