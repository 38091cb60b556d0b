package broker_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/internal/tbtest"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// project is one project root and runtime base with short paths (Unix
// socket paths are limited to 108 bytes).
type project struct {
	root, base string
}

func newProject(t *testing.T) project {
	t.Helper()
	d, err := os.MkdirTemp("", "tb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	d, _ = filepath.EvalSymlinks(d)
	root := filepath.Join(d, "p")
	os.Mkdir(root, 0o700)
	return project{root: root, base: filepath.Join(d, "r")}
}

// client returns a client that spawns this test binary as the broker,
// with the fake Pi behind it. Cleanup stops every broker it spawned.
func (p project) client(t *testing.T, grace string, env ...string) *broker.Client {
	t.Helper()
	return p.clientWith(t, grace, nil, env...)
}

// clientWith is client with its options adjusted by adjust (nil: none).
func (p project) clientWith(t *testing.T, grace string, adjust func(*broker.ClientOptions), env ...string) *broker.Client {
	t.Helper()
	ostest.SkipUnderWine(t, ostest.WineNoAFUnix)
	o := &broker.ClientOptions{
		ProjectRoot: p.root, RuntimeBase: p.base,
		Command:    []string{os.Args[0], "--grace", grace},
		Executable: os.Args[0],
		Env:        append(append(fakepi.Config{}.Env(), env...), tbtest.EnvBroker+"=1"),
	}
	if adjust != nil {
		adjust(o)
	}
	c := broker.NewClient(o)
	t.Cleanup(func() {
		c.Close()
		p.stop(t)
		c.Wait()
	})
	return c
}

func (p project) endpoint(t *testing.T) (broker.Endpoint, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(broker.RuntimeDir(p.base, p.root), "endpoint.json"))
	if err != nil {
		return broker.Endpoint{}, false
	}
	var ep broker.Endpoint
	if err := json.Unmarshal(b, &ep); err != nil {
		t.Fatal(err)
	}
	return ep, true
}

// stop sends SIGTERM to the broker of p, if any, and waits for its
// endpoint to disappear.
func (p project) stop(t *testing.T) {
	t.Helper()
	ep, ok := p.endpoint(t)
	if !ok {
		return
	}
	if errors.Is(platform.Terminate(ep.PID), os.ErrProcessDone) {
		return // a stale endpoint of a killed broker
	}
	waitUntil(t, "broker stopped", func() bool { _, ok := p.endpoint(t); return !ok })
}

// waitUntil polls cond; the bound only stops a broken run from hanging.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func state(t *testing.T, c *broker.Client) rt.Snapshot {
	t.Helper()
	b, err := c.State(t.Context())
	if err != nil {
		t.Fatalf("State: %v", err)
	}
	var s rt.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func waitState(t *testing.T, c *broker.Client, what string, cond func(rt.Snapshot) bool) rt.Snapshot {
	t.Helper()
	var s rt.Snapshot
	waitUntil(t, what, func() bool { s = state(t, c); return cond(s) })
	return s
}

func ready(s rt.Snapshot) bool { return s.Session.Status == rt.SessionReady }

func TestBroker_HostRestartKeepsConversationAndTask(t *testing.T) {
	p := newProject(t)
	c1 := p.client(t, "1m")
	s := waitState(t, c1, "ready", ready)
	ep, ok := p.endpoint(t)
	if !ok || ep.Protocol != 1 || ep.Identity != broker.Identity(p.root) || len(ep.Token) != 48 {
		t.Fatalf("endpoint %+v", ep)
	}
	for _, f := range []string{"endpoint.json", "broker.sock", "broker.lock"} {
		fi, err := os.Lstat(filepath.Join(broker.RuntimeDir(p.base, p.root), f))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, fi.Mode(), err)
		}
	}
	for _, d := range []string{p.base, broker.RuntimeDir(p.base, p.root)} {
		if fi, err := os.Lstat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", d, fi.Mode(), err)
		}
	}
	res, b, err := c1.Submit(t.Context(), "p", "hold this task")
	if err != nil || res != rt.ResultAccepted {
		t.Fatalf("Submit = %s %v %s", res, err, b)
	}
	c1.Close() // the host process goes away (hot reload)

	c2 := p.client(t, "1m")
	s2 := waitState(t, c2, "held", func(s rt.Snapshot) bool { return s.Task != nil && s.Task.Output == "holding" })
	if *s2.Session.ID != *s.Session.ID || s2.Task.Status != rt.TaskRunning {
		t.Fatalf("after host restart: %+v", s2)
	}
	if ep2, _ := p.endpoint(t); ep2.PID != ep.PID {
		t.Fatalf("a second broker was started: %d then %d", ep.PID, ep2.PID)
	}
	res, _, err = c2.Cancel(t.Context(), s2.Task.ID)
	if err != nil || res != rt.ResultAccepted {
		t.Fatalf("Cancel = %s %v", res, err)
	}
	waitState(t, c2, "cancelled", func(s rt.Snapshot) bool { return s.Task.Status == rt.TaskCancelled })
	res, b, err = c2.Reset(t.Context())
	if err != nil || res != rt.ResultAccepted {
		t.Fatalf("Reset = %s %v %s", res, err, b)
	}
}

// TestBroker_ReconnectsAfterBrokerRestart: a pooled connection to a
// killed broker is found dead (by the native idle check, and by the
// portable probe Windows uses) and replaced by one to a fresh broker.
func TestBroker_ReconnectsAfterBrokerRestart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		adjust func(*broker.ClientOptions)
	}{{"native", nil}, {"probe", broker.UseProbeIdle}} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t)
			c := p.clientWith(t, "1m", tc.adjust)
			s := waitState(t, c, "ready", ready)
			ep, _ := p.endpoint(t)
			platform.Kill(ep.PID) // stale endpoint and socket stay behind
			// The next read reconnects to a freshly spawned broker with a new
			// conversation (a replacement truthfully starts a new session).
			s2 := waitState(t, c, "new broker ready", func(s2 rt.Snapshot) bool { return ready(s2) && *s2.Session.ID != *s.Session.ID })
			ep2, _ := p.endpoint(t)
			if ep2.PID == ep.PID || ep2.Token == ep.Token || *s2.Session.ID == *s.Session.ID {
				t.Fatalf("no fresh broker: %+v %+v", ep2, s2)
			}
		})
	}
}

func TestBroker_GraceExitReapsPi(t *testing.T) {
	p := newProject(t)
	c := p.client(t, "200ms")
	waitState(t, c, "ready", ready)
	ep, _ := p.endpoint(t)
	// The broker's one child is Pi (any broker thread may have forked it).
	var children []string
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", ep.PID))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		children = append(children, strings.Fields(string(b))...)
	}
	if len(children) != 1 {
		t.Fatalf("broker children %q", children)
	}
	pi, _ := strconv.Atoi(children[0])
	c.Close()
	waitUntil(t, "broker exit", func() bool { _, ok := p.endpoint(t); return !ok })
	c.Wait() // the spawned broker was reaped
	if alive, err := platform.Alive(ep.PID); alive || err != nil {
		t.Fatalf("broker still alive: %v", err)
	}
	// Pi was stopped and reaped by the broker before it exited (an
	// orphaned, unreaped Pi would linger as a zombie of init at best).
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pi)); err == nil && !strings.Contains(string(b), ") Z ") {
		t.Fatalf("Pi %d still running after the broker stopped: %s", pi, b)
	}
	if _, err := os.Lstat(ep.Socket); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
}

// TestBroker_IncompatibleIsNeverKilled puts a live broker that refuses
// the handshake at the endpoint: the client reports unavailable, spawns
// nothing, and leaves it running.
func TestBroker_IncompatibleIsNeverKilled(t *testing.T) {
	ostest.SkipUnderWine(t, ostest.WineNoAFUnix)
	p := newProject(t)
	os.Mkdir(p.base, 0o700)
	dir := broker.RuntimeDir(p.base, p.root)
	os.Mkdir(dir, 0o700)
	lock := flock.New(filepath.Join(dir, "broker.lock"), flock.SetPermissions(0o600))
	if ok, err := lock.TryLock(); !ok || err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	sock := filepath.Join(dir, "broker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(sock, 0o600)
	ep, _ := json.Marshal(broker.Endpoint{Protocol: 1, Identity: broker.Identity(p.root), Token: strings.Repeat("a", 48), Socket: sock, PID: os.Getpid()})
	os.WriteFile(filepath.Join(dir, "endpoint.json"), ep, 0o600)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			bufio.NewReader(nc).ReadBytes('\n')
			nc.Write([]byte(`{"type":"error","code":"incompatible"}` + "\n"))
			nc.Close()
		}
	}()
	c := broker.NewClient(&broker.ClientOptions{ProjectRoot: p.root, RuntimeBase: p.base,
		Command: []string{"/bin/false"}, SpawnWait: 200 * time.Millisecond})
	defer c.Close()
	if _, err := c.State(t.Context()); !errors.Is(err, broker.ErrIncompatible) {
		t.Fatalf("State err = %v, want ErrIncompatible", err)
	}
	if _, _, err := c.Submit(t.Context(), "p", "m"); err == nil {
		t.Fatal("Submit succeeded against an incompatible broker")
	}
	ln.Close()
	<-done
}

func TestBroker_RefusesUnsafeRuntimeDir(t *testing.T) {
	ostest.SkipUnderWine(t, ostest.WineNoAFUnix)
	p := newProject(t)
	os.Mkdir(p.base, 0o755)
	err := broker.Serve(t.Context(), &broker.ServerOptions{ProjectRoot: p.root, RuntimeBase: p.base})
	if !errors.Is(err, broker.ErrUnsafeDir) {
		t.Fatalf("Serve on a 0755 base = %v", err)
	}
	link := p.base + "-link"
	os.Chmod(p.base, 0o700)
	os.Symlink(p.base, link)
	err = broker.Serve(t.Context(), &broker.ServerOptions{ProjectRoot: p.root, RuntimeBase: link})
	if !errors.Is(err, broker.ErrUnsafeDir) {
		t.Fatalf("Serve on a symlinked base = %v", err)
	}
}

// TestBroker_Protocol: a second broker for the same project loses the
// election. The wire protocol itself is pinned by the golden transcripts
// of TestBroker_ProtocolTranscripts.
func TestBroker_Protocol(t *testing.T) {
	p := newProject(t)
	serveBroker(t, p, fakepi.Config{})
	if err := broker.Serve(t.Context(), &broker.ServerOptions{ProjectRoot: p.root, RuntimeBase: p.base}); !errors.Is(err, broker.ErrAlreadyRunning) {
		t.Fatalf("second Serve = %v", err)
	}
}

// TestBroker_ActiveWorkOutlivesClients: with a task running and no client
// connected, the grace period does not start; once the work settles it
// does, and the broker exits.
func TestBroker_ActiveWorkOutlivesClients(t *testing.T) {
	p := newProject(t)
	c := p.client(t, "100ms")
	waitState(t, c, "ready", ready)
	ep, _ := p.endpoint(t)
	res, b, err := c.Submit(t.Context(), "p", "hold this task")
	if err != nil || res != rt.ResultAccepted {
		t.Fatalf("Submit = %s %v", res, err)
	}
	var s rt.Snapshot
	json.Unmarshal(b, &s)
	c.Close()
	time.Sleep(time.Second) // ten grace periods without a client
	if alive, err := platform.Alive(ep.PID); !alive || err != nil {
		t.Fatalf("broker exited while work was active: %v", err)
	}
	// A new host stops the task; once Pi settles and the host leaves, the
	// broker exits.
	c2 := p.client(t, "100ms")
	if res, _, err := c2.Cancel(t.Context(), s.Task.ID); err != nil || res != rt.ResultAccepted {
		t.Fatalf("Cancel = %s %v", res, err)
	}
	waitState(t, c2, "cancelled and ready", func(s rt.Snapshot) bool {
		return s.Task != nil && s.Task.Status == rt.TaskCancelled && ready(s)
	})
	c2.Close()
	waitUntil(t, "broker exit", func() bool { _, ok := p.endpoint(t); return !ok })
}

func TestDispatch(t *testing.T) {
	for _, args := range [][]string{nil, {"serve"}, {"taskbar"}, {"taskbar", "proxy"}} {
		if ran, err := broker.Dispatch(t.Context(), args, nil); ran || err != nil {
			t.Errorf("Dispatch(%q) = %v, %v", args, ran, err)
		}
	}
	ran, err := broker.Dispatch(t.Context(), []string{"taskbar", "broker", "--no-such-flag"}, nil)
	if !ran || err == nil {
		t.Errorf("Dispatch(broker with a bad flag) = %v, %v", ran, err)
	}
}

// TestBroker_LogFile: a spawned broker logs its lifecycle to broker.log in
// its private runtime directory (mode 0600), and nothing sensitive: no
// prompt, task message, token or path.
func TestBroker_LogFile(t *testing.T) {
	p := newProject(t)
	c := p.client(t, "100ms")
	waitState(t, c, "ready", ready)
	ep, _ := p.endpoint(t)
	if res, _, err := c.Submit(t.Context(), "SECRET-PROMPT", "SECRET-MESSAGE plain"); err != nil || res != rt.ResultAccepted {
		t.Fatalf("Submit = %s %v", res, err)
	}
	waitState(t, c, "completed", func(s rt.Snapshot) bool { return s.Task != nil && s.Task.Status == rt.TaskCompleted })
	c.Close()
	waitUntil(t, "broker exit", func() bool { _, ok := p.endpoint(t); return !ok })
	c.Wait()

	path := broker.LogPath(p.base, p.root)
	if filepath.Dir(path) != broker.RuntimeDir(p.base, p.root) {
		t.Errorf("log %s is not in the runtime dir", path)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("broker.log: %v %v", fi, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, want := range []string{"taskbar broker: serving", "taskbar runtime: task settled", "taskbar broker: stopped"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	for _, secret := range []string{"SECRET", ep.Token, filepath.Dir(p.root)} {
		if strings.Contains(log, secret) {
			t.Errorf("log holds %q:\n%s", secret, log)
		}
	}
}

func TestMain_Help(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		if err := broker.Main(t.Context(), []string{arg}, nil, nil); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("Main(%s) = %v, want flag.ErrHelp", arg, err)
		}
	}
	var b strings.Builder
	broker.Usage(&b)
	for _, want := range []string{"usage: pikit taskbar broker --project-root DIR", "-task-timeout", "broker.log"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, b.String())
		}
	}
}
