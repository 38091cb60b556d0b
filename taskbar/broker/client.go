package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// Client errors. Every error a [Client] method returns means no verified
// broker answered: the handler maps it to 503 unavailable.
var (
	// ErrIncompatible: a live broker answered but refused or failed the
	// handshake (another version or identity). It is never killed.
	ErrIncompatible = errors.New("broker: incompatible broker")
	// ErrUnavailable: no broker could be reached or started.
	ErrUnavailable = errors.New("broker: unavailable")
	// ErrClientClosed: the client was closed.
	ErrClientClosed = errors.New("broker: client closed")
)

// ClientOptions configure a [Client].
type ClientOptions struct {
	// ProjectRoot is the canonical project root (required): it selects the
	// broker.
	ProjectRoot string
	// RuntimeBase is the per-user base directory; "" means
	// DefaultRuntimeBase(Getenv). A spawned broker is told this base, so
	// client and broker always agree.
	RuntimeBase string
	// Getenv looks up XDG_RUNTIME_DIR for the default base (os.Getenv in
	// a host); nil means no environment: the base is under os.TempDir().
	Getenv func(string) string
	// Command is the broker launcher: the program and leading arguments;
	// the client appends --project-root, --runtime-base, --executable and
	// --task-timeout. Nil means os.Executable() with "taskbar", "broker".
	Command []string
	// Env is appended to the inherited environment of a spawned broker
	// (and so of Pi); nil inherits it unchanged.
	Env []string
	// Executable and TaskTimeout are passed to a broker this client
	// spawns; a running broker keeps the settings it was started with.
	Executable  string
	TaskTimeout time.Duration
	// SpawnWait bounds waiting for a spawned broker; zero means 5 s.
	SpawnWait time.Duration
	// NoWatch turns off the watch-fed snapshot cache: every State is a
	// broker round trip (diagnostics and benchmarks).
	NoWatch bool
	// MaxIdle bounds pooled idle connections; zero means 64 (one per
	// concurrent request keeps reconnects off the hot path).
	MaxIdle int
	// Logger gets lifecycle records only; nil discards.
	Logger *slog.Logger

	// probeIdle checks a pooled connection with the portable probe instead
	// of the OS's native check; tests set it on Linux (export_test.go).
	probeIdle bool
}

// Client talks to the project broker. It implements the taskbar handler's
// Owner. It is safe for concurrent use: requests run on pooled
// connections, one request at a time per connection. The zero value is not
// usable; call [NewClient]. Close releases the connections; the broker
// keeps running for its grace period.
type Client struct {
	o        ClientOptions
	log      *slog.Logger
	dir      string
	identity string
	rep      *reporter

	mu     sync.Mutex
	idle   []*conn
	closed bool
	spawn  sync.Mutex     // one spawn attempt at a time
	wg     sync.WaitGroup // spawned brokers' reapers

	// The snapshot cache fed by the watch stream: GET /state is answered
	// from it while the stream is live, so polling tabs cost no broker
	// round trip. Frames only replace older frames of the same broker
	// (token), so a tab never sees state go backwards, and a mutation's own
	// response is applied at once (read-your-writes).
	cmu       sync.Mutex
	cToken    string
	cSeq      uint64
	cSnap     []byte
	cLive     bool
	watchOnce sync.Once
	watchStop context.CancelFunc
	watchWG   sync.WaitGroup
}

// NewClient returns a client; it connects lazily on the first request.
func NewClient(opts *ClientOptions) *Client {
	if opts == nil || opts.ProjectRoot == "" {
		panic("broker: NewClient needs a ProjectRoot")
	}
	o := *opts
	if o.RuntimeBase == "" {
		o.RuntimeBase = DefaultRuntimeBase(o.Getenv)
	}
	if o.SpawnWait <= 0 {
		o.SpawnWait = 5 * time.Second
	}
	if o.MaxIdle <= 0 {
		o.MaxIdle = 64
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{o: o, log: log, dir: RuntimeDir(o.RuntimeBase, o.ProjectRoot), identity: Identity(o.ProjectRoot),
		rep: &reporter{log: log}}
}

// Close stops the watch stream and closes idle connections; requests in
// flight finish. It does not stop the broker. Close is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	idle := c.idle
	c.idle, c.closed = nil, true
	stop := c.watchStop
	c.mu.Unlock()
	for _, cn := range idle {
		cn.nc.Close()
	}
	c.watchOnce.Do(func() {}) // no watcher starts after Close
	if stop != nil {
		stop()
	}
	c.watchWG.Wait()
	return nil
}

// cached returns the live cached snapshot, if any.
func (c *Client) cached() ([]byte, bool) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	return c.cSnap, c.cLive
}

// offer applies a frame from broker token: it replaces the cache when it
// is newer, or when reset is set (a new watch stream, possibly a new
// broker).
func (c *Client) offer(token string, seq uint64, snap []byte, reset bool) {
	if seq == 0 || len(snap) == 0 {
		return
	}
	c.rep.snapshot(snap)
	c.cmu.Lock()
	defer c.cmu.Unlock()
	if reset {
		c.cToken, c.cSeq, c.cSnap, c.cLive = token, seq, snap, true
		return
	}
	if token == c.cToken && seq > c.cSeq {
		c.cSeq, c.cSnap = seq, snap
	}
}

func (c *Client) setLive(live bool) {
	c.cmu.Lock()
	c.cLive = live
	c.cmu.Unlock()
}

// startWatch starts the watch goroutine once.
func (c *Client) startWatch() {
	c.watchOnce.Do(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		c.watchStop = cancel
		c.watchWG.Add(1)
		go c.watch(ctx) // owner: Close cancels and waits
	})
}

// watch keeps one watch stream open, reconnecting with a bounded backoff.
func (c *Client) watch(ctx context.Context) {
	defer c.watchWG.Done()
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		if c.watchStream(ctx) {
			backoff = 50 * time.Millisecond
		}
		c.setLive(false)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// watchStream runs one watch stream until it fails; it reports whether
// the stream delivered a frame.
func (c *Client) watchStream(ctx context.Context) bool {
	cn, err := c.get(ctx)
	if err != nil {
		return false
	}
	defer cn.nc.Close()
	stop := context.AfterFunc(ctx, func() { cn.nc.Close() })
	defer stop()
	id := newToken(12)
	if err := cn.w.Encode(Request{Type: TypeWatch, ID: id}); err != nil {
		return false
	}
	first := true
	for {
		line, err := readRecord(cn.r)
		if err != nil {
			return !first
		}
		var r Response
		if decodeStrict(line, &r) != nil || r.ID == nil || *r.ID != id || !r.OK {
			return !first
		}
		c.offer(cn.token, r.Seq, r.Snapshot, first)
		first = false
	}
}

// Wait blocks until every broker this client spawned has exited (tests).
func (c *Client) Wait() { c.wg.Wait() }

// State returns the broker's current snapshot: from the watch stream's
// cache while it is live, else by a request.
func (c *Client) State(ctx context.Context) ([]byte, error) {
	if !c.o.NoWatch {
		c.startWatch()
	}
	if snap, ok := c.cached(); ok {
		return snap, nil
	}
	resp, err := c.do(ctx, Request{Type: TypeState}, true)
	if err != nil {
		return nil, err
	}
	return resp.Snapshot, nil
}

// Submit asks the broker to admit a task. The Idempotency-Key in ctx
// ([runtime.IdempotencyKey]), if any, goes with it: the broker acts once
// per key, so a keyed mutation is also resent after an ambiguous failure.
func (c *Client) Submit(ctx context.Context, prompt, message string) (runtime.Result, []byte, error) {
	key := runtime.IdempotencyKey(ctx)
	return c.result(c.do(ctx, Request{Type: TypeSubmit, Task: &TaskPayload{Prompt: prompt, Message: message}, Key: key}, key != ""))
}

// Cancel asks the broker to stop the retained task taskID (keyed as
// Submit).
func (c *Client) Cancel(ctx context.Context, taskID string) (runtime.Result, []byte, error) {
	key := runtime.IdempotencyKey(ctx)
	return c.result(c.do(ctx, Request{Type: TypeCancel, TaskID: taskID, Key: key}, key != ""))
}

// Reset asks the broker for a fresh session; it blocks until the switch
// is decided (keyed as Submit).
func (c *Client) Reset(ctx context.Context) (runtime.Result, []byte, error) {
	key := runtime.IdempotencyKey(ctx)
	return c.result(c.do(ctx, Request{Type: TypeReset, Key: key}, key != ""))
}

func (c *Client) result(resp *Response, err error) (runtime.Result, []byte, error) {
	if err != nil {
		return "", nil, err
	}
	if resp.Result == runtime.ResultInvalid {
		return resp.Result, nil, nil
	}
	if resp.Result == "" || len(resp.Snapshot) == 0 {
		return "", nil, fmt.Errorf("%w: response without result", ErrUnavailable)
	}
	return resp.Result, resp.Snapshot, nil
}

// do sends one request. A request that surely did not reach the broker
// (dial failure, or a pooled connection found closed before writing) is
// sent again on a fresh connection; an ambiguous failure is returned,
// never retried, except for the idempotent state read (idempotent).
func (c *Client) do(ctx context.Context, req Request, idempotent bool) (resp *Response, err error) {
	defer func() {
		c.rep.err(err)
		err = redactPaths(err, c.dir, c.o.RuntimeBase, c.o.ProjectRoot)
	}()
	req.ID = newToken(12)
	line := bytes.TrimSuffix(marshalLine(req), []byte("\n")) // one record, written once per attempt
	for attempt := 0; ; attempt++ {
		cn, err := c.get(ctx)
		if err != nil {
			return nil, err
		}
		resp, sent, err := cn.roundTrip(ctx, line)
		if err == nil {
			if resp.ID == nil || *resp.ID != req.ID {
				cn.nc.Close()
				return nil, fmt.Errorf("%w: response id mismatch", ErrUnavailable)
			}
			c.offer(cn.token, resp.Seq, resp.Snapshot, false)
			c.put(cn)
			return resp, nil
		}
		cn.nc.Close()
		if attempt > 0 || (sent && !idempotent) || ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		c.log.Info("taskbar broker client: reconnecting")
	}
}

func (c *Client) put(cn *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || len(c.idle) >= c.o.MaxIdle {
		cn.nc.Close()
		return
	}
	c.idle = append(c.idle, cn)
}

// get returns a live pooled connection or a new verified one, spawning
// the broker when none answers.
func (c *Client) get(ctx context.Context) (*conn, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClientClosed
		}
		n := len(c.idle)
		if n == 0 {
			c.mu.Unlock()
			break
		}
		cn := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		if cn.alive(c.o.probeIdle) {
			return cn, nil
		}
		cn.nc.Close()
	}
	cn, err := c.connect(ctx)
	if err == nil || (errors.Is(err, ErrIncompatible) && c.brokerLive()) {
		return cn, err
	}
	// Nothing verified answers: start a broker (one spawner at a time) and
	// wait for it.
	c.spawn.Lock()
	defer c.spawn.Unlock()
	if cn, err := c.connect(ctx); err == nil || (errors.Is(err, ErrIncompatible) && c.brokerLive()) {
		return cn, err
	}
	if err := c.startBroker(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	deadline := time.Now().Add(c.o.SpawnWait)
	for {
		// While the new broker starts, endpoint.json may still name the old
		// token: an incompatible answer is retried until the deadline.
		cn, err := c.connect(ctx)
		if err == nil {
			return cn, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// brokerLive reports whether some process holds the election lock: a
// live broker, compatible or not, is never replaced.
func (c *Client) brokerLive() bool {
	l := flock.New(filepath.Join(c.dir, lockName), flock.SetPermissions(0o600))
	ok, err := l.TryLock()
	if err != nil {
		return false
	}
	if ok {
		l.Unlock()
		return false
	}
	return true
}

// startBroker spawns the launcher detached: its own session and process
// group, stdin and stdout on /dev/null, stderr appended to broker.log in
// the runtime directory ([LogPath]). A goroutine reaps it when it exits.
func (c *Client) startBroker() error {
	logf, err := openLog(c.o.RuntimeBase, c.dir)
	if err != nil {
		return err
	}
	defer logf.Close() // the broker holds its own descriptor
	args := c.o.Command
	if len(args) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find executable: %w", err)
		}
		args = []string{exe, "taskbar", "broker"}
	}
	argv := append(append([]string{}, args[1:]...),
		"--project-root", c.o.ProjectRoot, "--runtime-base", c.o.RuntimeBase)
	if c.o.Executable != "" {
		argv = append(argv, "--executable", c.o.Executable)
	}
	if c.o.TaskTimeout > 0 {
		argv = append(argv, "--task-timeout", strconv.Itoa(int(c.o.TaskTimeout/time.Second)))
	}
	cmd := exec.Command(args[0], argv...)
	cmd.Dir = c.o.ProjectRoot
	if c.o.Env != nil {
		cmd.Env = append(os.Environ(), c.o.Env...)
	}
	cmd.Stderr = logf
	platform.Detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("spawn broker: %w", err)
	}
	c.log.Info("taskbar broker client: spawned broker", "pid", cmd.Process.Pid)
	c.wg.Add(1)
	go func() { // owner: Client.Wait; ends when the broker exits
		defer c.wg.Done()
		_ = cmd.Wait()
	}()
	return nil
}

// connect reads and verifies endpoint.json and the socket, then performs
// the token handshake.
func (c *Client) connect(ctx context.Context) (*conn, error) {
	ep, err := c.readEndpoint()
	if err != nil {
		return nil, err
	}
	if err := checkPrivateFile(ep.Socket, fs.ModeSocket); err != nil {
		return nil, fmt.Errorf("verify socket: %w", err)
	}
	d := net.Dialer{Timeout: 2 * time.Second}
	nc, err := d.DialContext(ctx, "unix", ep.Socket)
	if err != nil {
		return nil, fmt.Errorf("dial broker: %w", err)
	}
	cn := &conn{nc: nc, r: jsonl.NewReader(nc, MaxRecordBytes), w: jsonl.NewWriter(nc), token: ep.Token}
	hs := Handshake{Type: "handshake", Protocol: ProtocolVersion, Identity: c.identity, Token: ep.Token}
	nc.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := cn.w.Encode(hs); err != nil {
		nc.Close()
		return nil, fmt.Errorf("handshake: %w", err)
	}
	line, err := readRecord(cn.r)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("handshake: %w", err)
	}
	nc.SetDeadline(time.Time{})
	var echo Handshake
	if decodeStrict(line, &echo) != nil || echo != hs {
		nc.Close()
		return nil, ErrIncompatible
	}
	return cn, nil
}

// readEndpoint reads endpoint.json: a private regular file (not a
// symlink, re-checked after open), at most 1 MB, with exactly the known
// keys, this protocol, this identity, the expected socket, a 48-hex token
// and a positive pid.
func (c *Client) readEndpoint() (*Endpoint, error) {
	path := filepath.Join(c.dir, endpointName)
	st, err := platform.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	if err := checkPrivateFile(path, 0); err != nil {
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	f, err := platform.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	defer f.Close()
	fi, err := platform.StatFile(f)
	if err != nil {
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	if fi.ID != st.ID {
		return nil, fmt.Errorf("endpoint: %w", ErrUnsafeDir)
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20+1))
	if err != nil || len(b) > 1<<20 {
		return nil, fmt.Errorf("endpoint: unreadable or too large")
	}
	var ep Endpoint
	if err := decodeStrict(bytes.TrimSpace(b), &ep); err != nil {
		return nil, fmt.Errorf("%w: endpoint: %w", ErrIncompatible, err)
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(b, &keys)
	if len(keys) != 5 || ep.Protocol != ProtocolVersion || ep.Identity != c.identity ||
		ep.Socket != filepath.Join(c.dir, socketName) || !isHex(ep.Token, 48) || ep.PID <= 0 {
		return nil, ErrIncompatible
	}
	return &ep, nil
}

// conn is one verified connection.
type conn struct {
	nc    net.Conn
	r     *jsonl.Reader
	w     *jsonl.Writer
	token string // the broker instance's endpoint token
}

// alive reports whether a pooled connection is still open and idle,
// without blocking: a non-blocking MSG_PEEK must find no data
// (platform.ConnIdle; with probe, or on Windows, the portable
// platform.ProbeIdle: a read bounded by a millisecond). EOF means the
// broker went away; unexpected data means the stream is out of step.
// Either way the connection is discarded.
func (cn *conn) alive(probe bool) bool {
	if cn.r.Buffered() > 0 {
		return false
	}
	if probe {
		return platform.ProbeIdle(cn.nc, 0)
	}
	return platform.ConnIdle(cn.nc)
}

// roundTrip writes one request and reads its response. sent reports
// whether the request may have reached the broker.
func (cn *conn) roundTrip(ctx context.Context, line []byte) (resp *Response, sent bool, err error) {
	stop := context.AfterFunc(ctx, func() { cn.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := cn.w.WriteRecord(line); err != nil {
		return nil, false, err
	}
	reply, err := readRecord(cn.r)
	if err != nil {
		return nil, true, err
	}
	var r Response
	if err := decodeStrict(reply, &r); err != nil {
		return nil, true, err
	}
	return &r, true, nil
}
