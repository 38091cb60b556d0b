package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/gofrs/flock"
)

// ServeOptions configure [Serve], the endpoint process itself.
type ServeOptions struct {
	Root       string
	AppOrigin  string // required for a fresh start; a resume keeps the stored one
	Host       string // bind address; default 127.0.0.1 (or the stored one on resume)
	Port       int    // 0: the stored port on resume, else ephemeral
	PortSet    bool   // Port was given explicitly (no fallback on EADDRINUSE)
	OwnerPID   int    // 0: none; the process stops when it dies
	TrustProxy []netip.Addr
	// Getenv reads CE_LIVE_* and OPENAI_* settings (nil: os.Getenv).
	Getenv func(string) string
	Logger *slog.Logger
	// Ready, when set, receives the start line once the listener is up.
	Ready func(StartLine)
}

// StartLine is what start prints: never the agent token.
type StartLine struct {
	URL       string `json:"url"`
	Port      int    `json:"port"`
	PageToken string `json:"page_token"`
	Status    string `json:"status"` // started | resumed | running
}

func envDuration(get func(string) string, name string, def time.Duration) time.Duration {
	n, err := strconv.ParseInt(get(name), 10, 64)
	if err != nil || n <= 0 {
		return def
	}
	return time.Duration(n) * time.Millisecond
}

func envInt(get func(string) string, name string, def int64) int64 {
	n, err := strconv.ParseInt(get(name), 10, 64)
	if err != nil || n <= 0 {
		return def
	}
	return n
}

func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// holdsWork reports whether an ended board still has batches or released
// units that are not terminal.
func holdsWork(b *Board) bool { return !b.drained() }

// Serve runs the endpoint process for opts.Root until ctx ends, the owner
// dies or the idle timeout passes; none of these ends the session
// (reference §3.1, §4.11). It decides fresh start versus resume.
func Serve(ctx context.Context, opts ServeOptions) error {
	get := opts.Getenv
	if get == nil {
		get = os.Getenv
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	root, err := statePaths(opts.Root)
	if err != nil {
		return err
	}
	dir := filepath.Join(root, stateDirName)
	if err := ensureDirs(dir); err != nil {
		return err
	}
	prev, perr := loadSession(root)
	if perr != nil && !errors.Is(perr, fs.ErrNotExist) {
		return fmt.Errorf("live: read session: %w", perr)
	}
	tmp := &store{root: root, dir: dir}
	board, err := tmp.loadBoard()
	if err != nil {
		return err
	}
	ended := board.Ended || (prev != nil && prev.Ended)
	resume := prev != nil && prev.AgentToken != nil &&
		((!ended && prev.PageToken != nil) || (ended && holdsWork(board)))
	sf := &SessionFile{Root: root, LogDir: filepath.Join(dir, logDirName), TrustProxy: []string{}}
	if resume {
		*sf = *prev
		sf.Root, sf.LogDir = root, filepath.Join(dir, logDirName)
		if opts.AppOrigin != "" && opts.AppOrigin != prev.AppOrigin {
			sf.AppOrigin = opts.AppOrigin
		}
		if board.Ended != sf.Ended {
			sf.Ended, board.Ended = true, true
			if err := tmp.saveBoard(board); err != nil {
				return err
			}
		}
	} else {
		if opts.AppOrigin == "" {
			return errors.New("live: --app-origin is required for a fresh start")
		}
		pt, at := newToken(), newToken()
		sf.PageToken, sf.AgentToken = &pt, &at
		sf.AppOrigin = opts.AppOrigin
		sf.StartedAt = time.Now().UTC().Format(time.RFC3339Nano)
		if err := os.RemoveAll(filepath.Join(dir, batchesDirName)); err != nil {
			return fmt.Errorf("live: clear batches: %w", err)
		}
		if err := os.Remove(filepath.Join(dir, boardFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("live: clear board: %w", err)
		}
		if err := os.Remove(filepath.Join(dir, opsFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("live: remove ops journal: %w", err)
		}
		if prev != nil {
			if _, err := os.Stat(filepath.Join(dir, logDirName, eventsFile)); err == nil {
				st := &store{root: root, dir: dir}
				if _, err := st.rotateLog(time.Now()); err != nil {
					return err
				}
				st.close()
			}
		}
		if err := ensureDirs(dir); err != nil {
			return err
		}
	}
	if opts.Host != "" {
		sf.Host = opts.Host
	}
	if sf.Host == "" {
		sf.Host = "127.0.0.1"
	}
	if len(opts.TrustProxy) > 0 {
		sf.TrustProxy = nil
		for _, a := range opts.TrustProxy {
			sf.TrustProxy = append(sf.TrustProxy, a.String())
		}
	}
	var trust []netip.Addr
	for _, s := range sf.TrustProxy {
		if a, err := netip.ParseAddr(s); err == nil {
			trust = append(trust, a)
		}
	}
	port := opts.Port
	if !opts.PortSet && resume {
		port = prev.Port
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(sf.Host, strconv.Itoa(port)))
	if err != nil && !opts.PortSet && port != 0 {
		ln, err = net.Listen("tcp", net.JoinHostPort(sf.Host, "0"))
	}
	if err != nil {
		return fmt.Errorf("live: listen: %w", err)
	}
	defer ln.Close()
	sf.Port = ln.Addr().(*net.TCPAddr).Port
	switch sf.Host {
	case "127.0.0.1", "0.0.0.0", "::":
		sf.URL = "http://localhost:" + strconv.Itoa(sf.Port)
	default:
		sf.URL = "http://" + net.JoinHostPort(sf.Host, strconv.Itoa(sf.Port))
	}
	pid := os.Getpid()
	sf.PID = &pid
	sf.OwnerPID = nil
	if opts.OwnerPID > 1 {
		o := opts.OwnerPID
		sf.OwnerPID = &o
	}
	e, err := Open(Options{
		Root: root, AppOrigin: sf.AppOrigin, PageToken: *sf.PageToken, AgentToken: *sf.AgentToken, TrustProxy: trust,
		WaitTimeout:         envDuration(get, "CE_LIVE_WAIT_TIMEOUT_MS", 0),
		PageLostGrace:       envDuration(get, "CE_LIVE_PAGE_LOST_GRACE_MS", 0),
		StreamFlush:         envDuration(get, "CE_LIVE_STREAM_FLUSH_MS", 0),
		DiskCap:             envInt(get, "CE_LIVE_DISK_CAP_BYTES", 0),
		HardCap:             envInt(get, "CE_LIVE_DISK_HARD_CAP_BYTES", 0),
		ArchiveLimit:        envInt(get, "CE_LIVE_ARCHIVE_LIMIT_BYTES", 0),
		RejectionsPerMinute: int(envInt(get, "CE_LIVE_REJECTION_LOG_PER_MINUTE", 0)),
		Mint: MintOptions{
			BaseURL: get("OPENAI_BASE_URL"), Model: get("OPENAI_REALTIME_MODEL"), Voice: get("OPENAI_REALTIME_VOICE"),
			Timeout: envDuration(get, "CE_LIVE_MINT_TIMEOUT_MS", 0),
			APIKey:  func() string { return get("OPENAI_API_KEY") },
		},
		Logger: log,
	})
	if err != nil {
		return err
	}
	st := e.st
	if err := st.saveSession(sf); err != nil {
		e.Close(context.Background())
		return err
	}
	if err := writeFileAtomic(st.path(pidFile), []byte(strconv.Itoa(pid)+"\n")); err != nil {
		e.Close(context.Background())
		return err
	}
	status := "started"
	if resume {
		status = "resumed"
	}
	line := StartLine{URL: sf.URL, Port: sf.Port, PageToken: *sf.PageToken, Status: status}
	log.Info("live: serving", "port", sf.Port, "status", status)

	srv := &http.Server{Handler: e.Handler(), ReadHeaderTimeout: 10 * time.Second}
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Serve(ln) }()
	if opts.Ready != nil {
		opts.Ready(line)
	}

	idle := envDuration(get, "CE_LIVE_IDLE_TIMEOUT_MS", 30*time.Minute)
	check := envDuration(get, "CE_LIVE_LIFECYCLE_CHECK_MS", time.Minute)
	tick := time.NewTicker(check)
	defer tick.Stop()
	var serveErr error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-srvErr:
			serveErr = err
			break loop
		case <-tick.C:
			if opts.OwnerPID > 1 && !pidAlive(opts.OwnerPID) {
				log.Info("live: owner gone; stopping (session kept)")
				break loop
			}
			last, busy := e.IdleSince()
			if !busy && time.Since(last) > idle {
				log.Info("live: idle; stopping (session kept)")
				break loop
			}
		}
	}
	e.cancel() // ends streams and parked waits first
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		e.Close(sctx)
		return fmt.Errorf("live: serve: %w", serveErr)
	}
	if err := e.Close(sctx); err != nil {
		return err
	}
	_ = os.Remove(st.path(pidFile))
	return nil
}

// StartOptions configure [Start]. Exe and ServeArgs say how to run the
// detached server: Exe ServeArgs... --root <root> [flags].
type StartOptions struct {
	Root       string
	AppOrigin  string
	Host       string
	Port       int
	PortSet    bool
	OwnerPID   int
	TrustProxy []netip.Addr
	Exe        string
	ServeArgs  []string
	// Env is the child's environment (nil: inherit).
	Env []string
}

// ErrStartBusy means another start holds state/start.lock.
var ErrStartBusy = errors.New("live: another start for this root is in progress")

// ErrUnverifiedOwner means the pidfile names a live process whose command
// line cannot be read, so it may be this root's server: stop and start
// refuse rather than signal or replace it (reference §3.1 step 5; exit 1).
var ErrUnverifiedOwner = errors.New("live: cannot verify that the pidfile's process is this root's endpoint")

// ownedPID returns the running server pid of root, or 0. A pid whose
// command line does not name "serve" and this exact root is foreign and
// never signalled; one whose command line is unreadable counts as not
// running here (see pidfileOwner).
func ownedPID(root string) int {
	pid, _ := pidfileOwner(root, "/proc")
	return pid
}

// pidfileOwner classifies the pidfile's process using the procfs at proc:
// owned (pid, nil), none or foreign (0, nil), or alive with an unreadable
// command line (0, error wrapping [ErrUnverifiedOwner]).
func pidfileOwner(root, proc string) (int, error) {
	data, err := os.ReadFile(filepath.Join(root, stateDirName, pidFile))
	if err != nil {
		return 0, nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || !pidAlive(pid) {
		return 0, nil
	}
	cmd, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "cmdline"))
	if err != nil {
		if !pidAlive(pid) { // it exited meanwhile
			return 0, nil
		}
		return 0, fmt.Errorf("%w (process %d)", ErrUnverifiedOwner, pid)
	}
	args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
	hasServe, hasRoot := false, false
	for i, a := range args {
		hasServe = hasServe || a == "serve"
		if a == "--root" && i+1 < len(args) {
			if abs, err := filepath.Abs(args[i+1]); err == nil && abs == root {
				hasRoot = true
			}
		}
		if v, ok := strings.CutPrefix(a, "--root="); ok {
			if abs, err := filepath.Abs(v); err == nil && abs == root {
				hasRoot = true
			}
		}
	}
	if hasServe && hasRoot {
		return pid, nil
	}
	return 0, nil
}

// Start starts or resumes the detached server for opts.Root and returns the
// start line (reference §3.1).
func Start(ctx context.Context, opts StartOptions) (StartLine, error) {
	root, err := statePaths(opts.Root)
	if err != nil {
		return StartLine{}, err
	}
	dir := filepath.Join(root, stateDirName)
	if err := ensureDirs(dir); err != nil {
		return StartLine{}, err
	}
	lk := flock.New(filepath.Join(dir, "start.lock"))
	ok, err := lk.TryLock()
	if err != nil {
		return StartLine{}, fmt.Errorf("live: start lock: %w", err)
	}
	if !ok {
		return StartLine{}, ErrStartBusy
	}
	defer lk.Unlock()
	prev, _ := loadSession(root)
	pid, err := pidfileOwner(root, "/proc")
	if err != nil {
		return StartLine{}, err
	}
	if pid != 0 && prev != nil && prev.PID != nil && *prev.PID == pid {
		b, _ := (&store{root: root, dir: dir}).loadBoard()
		if b != nil && !b.Ended && !prev.Ended {
			if opts.AppOrigin != "" && opts.AppOrigin != prev.AppOrigin {
				return StartLine{}, fmt.Errorf("live: already running with --app-origin %s; stop it first", prev.AppOrigin)
			}
			return StartLine{URL: prev.URL, Port: prev.Port, PageToken: deref(prev.PageToken), Status: "running"}, nil
		}
		if err := killOwned(pid); err != nil {
			return StartLine{}, err
		}
	}
	args := append(append([]string{}, opts.ServeArgs...), "--root", root)
	if opts.AppOrigin != "" {
		args = append(args, "--app-origin", opts.AppOrigin)
	}
	if opts.Host != "" {
		args = append(args, "--host", opts.Host)
	}
	if opts.PortSet {
		args = append(args, "--port", strconv.Itoa(opts.Port))
	}
	if opts.OwnerPID > 1 {
		args = append(args, "--owner-pid", strconv.Itoa(opts.OwnerPID))
	}
	for _, a := range opts.TrustProxy {
		args = append(args, "--trust-proxy", a.String())
	}
	logf, err := os.OpenFile(filepath.Join(dir, serverLogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return StartLine{}, fmt.Errorf("live: open server log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(opts.Exe, args...)
	cmd.Stdout, cmd.Stderr, cmd.Env = logf, logf, opts.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return StartLine{}, fmt.Errorf("live: spawn server: %w", err)
	}
	child := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps the child if it dies during start
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return StartLine{}, ctx.Err()
		case err := <-exited:
			return StartLine{}, fmt.Errorf("live: server exited during start (see state/server.log): %v", err)
		case <-deadline.C:
			return StartLine{}, errors.New("live: server did not come up within 5 s (see state/server.log)")
		case <-tick.C:
		}
		sf, err := loadSession(root)
		if err != nil || sf.PID == nil || *sf.PID != child || sf.PageToken == nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, pidFile)); err != nil {
			continue
		}
		status := "started"
		if prev != nil && prev.AgentToken != nil && sf.AgentToken != nil && *prev.AgentToken == *sf.AgentToken {
			status = "resumed"
		}
		// The goroutine above reaps the child whenever it exits.
		return StartLine{URL: sf.URL, Port: sf.Port, PageToken: *sf.PageToken, Status: status}, nil
	}
}

func killOwned(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("live: signal server: %w", err)
	}
	for i := 0; i < 200 && pidAlive(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if pidAlive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		for i := 0; i < 100 && pidAlive(pid); i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

// Wait exit codes (reference §3.2).
const (
	WaitBatch = 0
	WaitEnded = 1
	WaitError = 2
	WaitTaken = 3
)

// Wait long-polls GET /wait and writes one line to out: the wake envelope,
// {"status":"session-ended"} or {"status":"wait-taken"}. It returns the exit
// code of reference §3.2.
func Wait(ctx context.Context, root string, out, errOut io.Writer) int {
	abs, err := statePaths(root)
	if err != nil {
		fmt.Fprintln(errOut, err)
		return WaitError
	}
	sf, err := loadSession(abs)
	endedDrained := func() bool {
		b, err := (&store{root: abs, dir: filepath.Join(abs, stateDirName)}).loadBoard()
		if cur, cerr := loadSession(abs); cerr != nil || cur.AgentToken == nil {
			return true // stop retired the tokens
		}
		return err == nil && (b.Ended || sf.Ended) && b.drained()
	}
	if err != nil || sf.AgentToken == nil || ownedPID(abs) == 0 {
		if err == nil && endedDrained() {
			fmt.Fprintln(out, `{"status":"session-ended"}`)
			return WaitEnded
		}
		fmt.Fprintln(errOut, "Endpoint is not running; run `start --root` to resume the session")
		return WaitError
	}
	client := &http.Client{}
	u := "http://" + net.JoinHostPort(loopbackFor(sf.Host), strconv.Itoa(sf.Port)) + "/wait"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			fmt.Fprintln(errOut, err)
			return WaitError
		}
		req.Header.Set("Authorization", "Bearer "+*sf.AgentToken)
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return WaitError
			}
			// stop retires the tokens just after the process exits: give it a
			// moment before calling this an error.
			for i := 0; i < 60; i++ {
				if endedDrained() {
					fmt.Fprintln(out, `{"status":"session-ended"}`)
					return WaitEnded
				}
				time.Sleep(50 * time.Millisecond)
			}
			fmt.Fprintln(errOut, "wait: endpoint unreachable")
			return WaitError
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			out.Write(append(bytes.TrimSpace(body), '\n'))
			return WaitBatch
		case http.StatusGone:
			out.Write(append(bytes.TrimSpace(body), '\n'))
			return WaitEnded
		case http.StatusConflict:
			fmt.Fprintln(out, `{"status":"wait-taken"}`)
			return WaitTaken
		case http.StatusNoContent:
			continue
		default:
			fmt.Fprintf(errOut, "wait: unexpected HTTP %d\n", resp.StatusCode)
			return WaitError
		}
	}
}

func loopbackFor(host string) string {
	switch host {
	case "", "0.0.0.0":
		return "127.0.0.1"
	case "::":
		return "::1"
	}
	return host
}

// StatusReport is what the status CLI prints; it reads only the disk.
type StatusReport struct {
	Status       string        `json:"status"` // running | stopped
	Root         string        `json:"root"`
	URL          string        `json:"url,omitempty"`
	Port         int           `json:"port,omitzero"`
	AppOrigin    string        `json:"app_origin,omitempty"`
	SessionEnded bool          `json:"session_ended"`
	Board        StatusSummary `json:"board"`
}

// ReadStatus builds the status report of root from its files.
func ReadStatus(root string) (StatusReport, error) {
	abs, err := statePaths(root)
	if err != nil {
		return StatusReport{}, err
	}
	st := &store{root: abs, dir: filepath.Join(abs, stateDirName)}
	b, err := st.loadBoard()
	if err != nil {
		return StatusReport{}, err
	}
	batches := map[string]*batch{}
	if m, err := st.loadBatchesReadOnly(); err == nil {
		batches = m
	}
	rep := StatusReport{Status: "stopped", Root: abs, SessionEnded: b.Ended, Board: summarize(b, batches, dirSize(st.logDir()))}
	if sf, err := loadSession(abs); err == nil {
		rep.SessionEnded = rep.SessionEnded || sf.Ended
		if ownedPID(abs) != 0 {
			rep.Status, rep.URL, rep.Port, rep.AppOrigin = "running", sf.URL, sf.Port, sf.AppOrigin
		}
	}
	return rep, nil
}

func (s *store) loadBatchesReadOnly() (map[string]*batch, error) {
	ents, err := os.ReadDir(s.path(batchesDirName))
	if err != nil {
		return nil, err
	}
	out := map[string]*batch{}
	for _, e := range ents {
		var bf batchFileData
		if strings.HasSuffix(e.Name(), ".json") && readJSONFile(s.path(batchesDirName, e.Name()), &bf) == nil && bf.Envelope != nil {
			out[bf.Envelope.CheckpointID] = &batch{order: bf.Order, served: bf.Served, env: bf.Envelope}
		}
	}
	return out, nil
}

// StopReport is what the stop CLI prints.
type StopReport struct {
	Status string `json:"status"`
	Root   string `json:"root"`
	LogDir string `json:"log_dir"`
}

// Stop ends the owned server (SIGTERM, then SIGKILL after 2 s), retires
// both tokens, marks board and session ended, deletes batches and keeps the
// logs (reference §3). When the pidfile's process is alive but its
// ownership cannot be verified, Stop changes nothing and returns an error
// wrapping [ErrUnverifiedOwner] (the CLI exits 1).
func Stop(root string) (StopReport, error) { return stop(root, "/proc") }

func stop(root, proc string) (StopReport, error) {
	abs, err := statePaths(root)
	if err != nil {
		return StopReport{}, err
	}
	dir := filepath.Join(abs, stateDirName)
	pid, err := pidfileOwner(abs, proc)
	if err != nil {
		return StopReport{}, err
	}
	if pid != 0 {
		if err := killOwned(pid); err != nil {
			return StopReport{}, err
		}
	}
	st := &store{root: abs, dir: dir}
	if err := ensureDirs(dir); err != nil {
		return StopReport{}, err
	}
	if sf, err := loadSession(abs); err == nil {
		sf.PageToken, sf.AgentToken, sf.PID, sf.Ended = nil, nil, nil, true
		if err := st.saveSession(sf); err != nil {
			return StopReport{}, err
		}
	}
	b, err := st.loadBoard()
	if err != nil {
		return StopReport{}, err
	}
	b.Ended = true
	b.Pending = nil
	if err := st.saveBoard(b); err != nil {
		return StopReport{}, err
	}
	if err := st.clearOps(); err != nil { // board.json now includes them
		return StopReport{}, fmt.Errorf("live: clear ops journal: %w", err)
	}
	if err := st.clearBatches(); err != nil {
		return StopReport{}, err
	}
	_ = os.Remove(st.path(pidFile))
	return StopReport{Status: "stopped", Root: abs, LogDir: st.logDir()}, nil
}

// MarshalLine encodes v as one compact JSON line for CLI output.
func MarshalLine(v any) []byte {
	data, err := json.Marshal(v, jsonOut)
	if err != nil {
		return []byte(`{"error":"encode"}` + "\n")
	}
	return append(data, '\n')
}

// DefaultOwnerPID is the owner when --owner-pid is not given: the
// grandparent of this process (the agent behind the shell that ran start),
// else the parent (reference §3.1 step 2).
func DefaultOwnerPID() int {
	ppid := os.Getppid()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", ppid))
	if err != nil {
		return ppid
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ppid
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return ppid
	}
	if g, err := strconv.Atoi(f[1]); err == nil && g > 1 {
		return g
	}
	return ppid
}
