package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gofrs/flock"

	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// DefaultGrace is how long an idle broker waits before it exits.
const DefaultGrace = 300 * time.Second

// ErrAlreadyRunning is returned by [Serve] when another broker holds the
// election lock of the same project and user.
var ErrAlreadyRunning = errors.New("broker: another broker owns this project")

// ServerOptions configure [Serve].
type ServerOptions struct {
	// ProjectRoot is the canonical project root (required).
	ProjectRoot string
	// RuntimeBase is the per-user base directory; "" means
	// DefaultRuntimeBase(os.Getenv) as resolved by the caller.
	RuntimeBase string
	// Runtime configures the Pi owner; its Dir is set to ProjectRoot.
	Runtime runtime.Options
	// Grace is the idle time before exit; zero means DefaultGrace.
	Grace time.Duration
	// Logger gets lifecycle records only; nil discards.
	Logger *slog.Logger
}

// Serve runs a broker until ctx ends or it has been idle (no client
// connected and no runtime work) for the grace period. It returns nil after
// a graceful stop, ErrAlreadyRunning when another broker won the election,
// or the setup error.
func Serve(ctx context.Context, opts *ServerOptions) (err error) {
	if opts == nil || opts.ProjectRoot == "" {
		return errors.New("broker: serve: no project root")
	}
	o := *opts
	defer func() {
		err = redactPaths(err, RuntimeDir(o.RuntimeBase, o.ProjectRoot), o.RuntimeBase, o.ProjectRoot)
	}()
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.RuntimeBase == "" {
		o.RuntimeBase = DefaultRuntimeBase(nil)
	}
	if err := ensurePrivateDir(o.RuntimeBase); err != nil {
		return err
	}
	dir := RuntimeDir(o.RuntimeBase, o.ProjectRoot)
	if err := ensurePrivateDir(dir); err != nil {
		return err
	}
	lock, err := elect(dir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	ln, ep, err := listen(dir, o.ProjectRoot)
	if err != nil {
		return err
	}

	s := newServer(&o, dir, ep, log)
	log.Info("taskbar broker: serving", "pid", ep.PID)
	serveCtx, cancel := context.WithCancel(ctx)
	s.wg.Add(2)
	go s.accept(serveCtx, ln)
	go func() {
		defer s.wg.Done()
		s.rec.follow(serveCtx, s.rt)
	}()
	s.monitor(serveCtx, o.Grace)
	if ctx.Err() != nil {
		log.Info("taskbar broker: shutting down on request (signal or host)")
	}
	cancel()
	return s.shutdown(ln, filepath.Join(dir, endpointName))
}

// newServer makes the broker of endpoint ep: its Pi owner runs in the
// project root, and its task record (task.json in the runtime dir) seeds
// the retained task unless o.Runtime has one.
func newServer(o *ServerOptions, dir string, ep Endpoint, log *slog.Logger) *server {
	ro := o.Runtime
	ro.Dir = o.ProjectRoot
	if ro.Logger == nil {
		ro.Logger = log
	}
	taskPath := filepath.Join(dir, taskName)
	if ro.Retained == nil {
		ro.Retained = loadTask(taskPath, log)
	}
	return &server{
		ep: ep, log: log, rt: runtime.New(&ro),
		conns: map[net.Conn]struct{}{}, clients: make(chan struct{}, 1),
		rec: &taskRecorder{path: taskPath, log: log},
	}
}

// elect takes the election lock of the runtime dir: ErrAlreadyRunning
// when another broker holds it. The caller unlocks it when it stops.
func elect(dir string) (*flock.Flock, error) {
	lock := flock.New(filepath.Join(dir, lockName), flock.SetPermissions(0o600))
	ok, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("broker: lock: %w", err)
	}
	if !ok {
		return nil, ErrAlreadyRunning
	}
	return lock, nil
}

// listen binds the broker's socket in the runtime dir (0600, a stale one
// replaced) and publishes the endpoint file clients read: a new token, the
// socket, this process's pid.
func listen(dir, projectRoot string) (net.Listener, Endpoint, error) {
	sock := filepath.Join(dir, socketName)
	if len(sock) > maxSocketPath() {
		// bind would fail with a bare EINVAL; say what to change.
		return nil, Endpoint{}, fmt.Errorf("broker: socket path is %d bytes, over the %d-byte limit of Unix sockets: use a shorter XDG_RUNTIME_DIR or TMPDIR", len(sock), maxSocketPath())
	}
	if err := removeStaleSocket(sock); err != nil {
		return nil, Endpoint{}, err
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, Endpoint{}, fmt.Errorf("broker: listen: %w", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(sock, 0o600); err != nil {
		ln.Close()
		return nil, Endpoint{}, fmt.Errorf("broker: chmod socket: %w", err)
	}
	ep := Endpoint{Protocol: ProtocolVersion, Identity: Identity(projectRoot),
		Token: newToken(24), Socket: sock, PID: os.Getpid()}
	if err := durable.WriteFile(filepath.Join(dir, endpointName), marshalLine(ep), 0o600); err != nil {
		ln.Close()
		os.Remove(sock)
		return nil, Endpoint{}, fmt.Errorf("broker: write endpoint: %w", err)
	}
	return ln, ep, nil
}

// shutdown stops gracefully: no new clients, the live ones closed, Pi
// reaped (within 30 s), then the endpoint file (while it is still this
// broker's) and the socket removed. It returns the runtime's close error.
func (s *server) shutdown(ln net.Listener, epPath string) error {
	ln.Close()
	s.mu.Lock()
	s.closing = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	stopCtx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	rerr := s.rt.Close(stopCtx)
	s.wg.Wait()
	if cur, err := os.ReadFile(epPath); err == nil && string(cur) == string(marshalLine(s.ep)) {
		os.Remove(epPath)
	}
	os.Remove(s.ep.Socket)
	s.log.Info("taskbar broker: stopped")
	return rerr
}

// maxSocketPath is the longest Unix socket path bind accepts: sun_path is
// 104 bytes on the BSDs and macOS, 108 on Linux; Go needs no NUL when the
// path fills it.
func maxSocketPath() int {
	if goruntime.GOOS == "linux" || goruntime.GOOS == "android" {
		return 108
	}
	return 104
}

// removeStaleSocket removes a leftover socket; anything that is not a
// socket is refused, never deleted.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("broker: stat socket: %w", err)
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("broker: %s exists and is not a socket", socketName)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("broker: remove stale socket: %w", err)
	}
	return nil
}

type server struct {
	ep  Endpoint
	log *slog.Logger
	rt  *runtime.Runtime
	rec *taskRecorder // task.json, own mutex
	wg  sync.WaitGroup

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	nClient int // handshaken connections
	closing bool
	clients chan struct{} // client count changed (cap 1)
}

// monitor returns when ctx ends or the broker was idle for grace.
func (s *server) monitor(ctx context.Context, grace time.Duration) {
	var timer *time.Timer
	var timerC <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		changed, _ := s.rt.Changed()
		s.mu.Lock()
		idle := s.nClient == 0 && !s.rt.Active()
		s.mu.Unlock()
		switch {
		case idle && timer == nil:
			timer = time.NewTimer(grace)
			timerC = timer.C
		case !idle && timer != nil:
			timer.Stop()
			timer, timerC = nil, nil
		}
		select {
		case <-ctx.Done():
			return
		case <-timerC:
			s.log.Info("taskbar broker: idle grace expired")
			return
		case <-s.clients:
		case <-changed:
		}
	}
}

func (s *server) notifyClients() {
	select {
	case s.clients <- struct{}{}:
	default:
	}
}

func (s *server) accept(ctx context.Context, ln net.Listener) {
	defer s.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. EMFILE; try again
			continue
		}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(ctx, c)
	}
}

// handshakeTimeout bounds the first line of a connection.
const handshakeTimeout = 5 * time.Second

func (s *server) serveConn(ctx context.Context, c net.Conn) {
	defer s.wg.Done()
	counted := false
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		if counted {
			s.nClient--
		}
		s.mu.Unlock()
		s.notifyClients()
	}()
	r, w := jsonl.NewReader(c, MaxRecordBytes), jsonl.NewWriter(c)
	c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	line, err := readRecord(r)
	if err != nil {
		return
	}
	var hs Handshake
	want := Handshake{Type: "handshake", Protocol: ProtocolVersion, Identity: s.ep.Identity, Token: s.ep.Token}
	if decodeStrict(line, &hs) != nil || hs != want {
		w.Encode(HandshakeError{Type: "error", Code: "incompatible"})
		s.log.Warn("taskbar broker: incompatible client refused")
		return
	}
	if err := w.Encode(want); err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	s.mu.Lock()
	s.nClient++
	counted = true
	s.mu.Unlock()
	s.notifyClients()

	for {
		line, err := readRecord(r)
		if err != nil {
			return
		}
		var probe struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}
		if decodeProbe(line, &probe) == nil && probe.Type == TypeWatch && isHex(probe.ID, 24) {
			s.watch(ctx, c, r, w, probe.ID)
			return
		}
		if err := w.Encode(s.handle(ctx, line)); err != nil {
			return
		}
	}
}

// watch streams every new snapshot frame on c until the client goes away
// or the broker stops.
func (s *server) watch(ctx context.Context, c net.Conn, r *jsonl.Reader, w *jsonl.Writer, id string) {
	gone := make(chan struct{})
	go func() { // owner: watch; ends when c is closed by serveConn's defer or the client
		defer close(gone)
		_, _ = r.Next() // nothing more is expected: a record or EOF ends the watch
	}()
	defer func() {
		c.Close()
		<-gone
	}()
	var last uint64
	for {
		f, changed := s.rt.Watch()
		if f.Seq > last {
			last = f.Seq
			c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if err := w.Encode(Response{ID: &id, OK: true, Snapshot: f.JSON, Seq: f.Seq}); err != nil {
				return
			}
		}
		select {
		case <-changed:
		case <-gone:
			return
		case <-ctx.Done():
			return
		}
	}
}

// handle answers one request line.
func (s *server) handle(ctx context.Context, line []byte) Response {
	var req Request
	if err := decodeStrict(line, &req); err != nil || !isHex(req.ID, 24) || len(req.Key) > runtime.MaxIdempotencyKey {
		return Response{Result: runtime.ResultInvalid, Message: msgMalformed}
	}
	id := req.ID
	resp := func(res runtime.Result, f runtime.Frame) Response {
		return Response{ID: &id, OK: res == runtime.ResultAccepted || res == runtime.ResultCancelled,
			Result: res, Snapshot: json.RawMessage(f.JSON), Seq: f.Seq}
	}
	invalid := Response{ID: &id, Result: runtime.ResultInvalid, Message: msgMalformed}
	switch req.Type {
	case TypeState:
		if req.Task != nil || req.TaskID != "" {
			return invalid
		}
		f := s.rt.Frame()
		return Response{ID: &id, OK: true, Snapshot: f.JSON, Seq: f.Seq}
	case TypeSubmit:
		t := req.Task
		if t == nil || req.TaskID != "" || t.Prompt == "" || len(t.Prompt) > 4000 || t.Message == "" ||
			len(t.Message) > MaxRecordBytes || !utf8.ValidString(t.Prompt) || !utf8.ValidString(t.Message) {
			return invalid
		}
		res, f, _ := s.rt.Once(req.Key, TypeSubmit, func() (runtime.Result, runtime.Frame, error) {
			res, f := s.rt.SubmitFrame(t.Prompt, t.Message)
			if res == runtime.ResultAccepted {
				s.rec.record(f.JSON) // durable before the acknowledgement
			}
			return res, f, nil
		})
		return resp(res, f)
	case TypeCancel:
		if req.Task != nil || req.TaskID == "" || len(req.TaskID) > 128 {
			return invalid
		}
		res, f, _ := s.rt.Once(req.Key, TypeCancel, func() (runtime.Result, runtime.Frame, error) {
			res, f := s.rt.CancelFrame(req.TaskID)
			return res, f, nil
		})
		return resp(res, f)
	case TypeReset:
		if req.Task != nil || req.TaskID != "" {
			return invalid
		}
		res, f, err := s.rt.Once(req.Key, TypeReset, func() (runtime.Result, runtime.Frame, error) { return s.rt.ResetFrame(ctx) })
		if err != nil {
			return resp(runtime.ResultUnavailable, s.rt.Frame())
		}
		return resp(res, f)
	}
	return Response{ID: &id, Result: runtime.ResultInvalid, Message: msgUnknown}
}
