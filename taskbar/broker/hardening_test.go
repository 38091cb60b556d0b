package broker_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/taskbar/broker"
)

// Setup errors name no absolute path (they are logged by the command),
// keep their chain for errors.Is, and a runtime base too long for a Unix
// socket path (a classic with long TMPDIRs) says so instead of a bare
// "bind: invalid argument".
func TestServe_ErrorsWithoutPaths(t *testing.T) {
	p := newProject(t)
	d := filepath.Dir(p.root)
	t.Run("missing parent", func(t *testing.T) {
		base := filepath.Join(d, "missing", "r")
		err := broker.Serve(t.Context(), &broker.ServerOptions{ProjectRoot: p.root, RuntimeBase: base})
		if err == nil || strings.Contains(err.Error(), d) {
			t.Fatalf("Serve = %v, want an error without %s", err, d)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Serve = %v, want it to match fs.ErrNotExist", err)
		}
	})
	t.Run("socket path too long", func(t *testing.T) {
		base := filepath.Join(d, strings.Repeat("b", 90))
		err := broker.Serve(t.Context(), &broker.ServerOptions{ProjectRoot: p.root, RuntimeBase: base})
		if err == nil || !strings.Contains(err.Error(), "limit of Unix sockets") || strings.Contains(err.Error(), d) {
			t.Fatalf("Serve = %v, want the socket path limit named, without %s", err, d)
		}
	})
}

// Client errors are returned to the host, which may log them: no absolute
// path either.
func TestClient_ErrorsWithoutPaths(t *testing.T) {
	p := newProject(t)
	d := filepath.Dir(p.root)
	c := broker.NewClient(&broker.ClientOptions{
		ProjectRoot: p.root, RuntimeBase: filepath.Join(d, "missing", "r"),
		Command: []string{"/bin/false"}, NoWatch: true, SpawnWait: 50 * time.Millisecond,
	})
	defer func() { c.Close(); c.Wait() }()
	_, err := c.State(t.Context())
	if !errors.Is(err, broker.ErrUnavailable) || strings.Contains(err.Error(), d) {
		t.Fatalf("State = %v, want ErrUnavailable without %s", err, d)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("State = %v, want the cause kept (fs.ErrNotExist)", err)
	}
}

// Whatever sits at the socket path and is not a socket (a file, a symlink
// planted to make us unlink something else) is refused and left alone; a
// stale socket of a dead broker is replaced (TestBroker_ReconnectsAfterBrokerRestart).
func TestServe_RefusesNonSocketAtSocketPath(t *testing.T) {
	for _, kind := range []string{"file", "symlink", "dir"} {
		t.Run(kind, func(t *testing.T) {
			p := newProject(t)
			dir := broker.RuntimeDir(p.base, p.root)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			os.Chmod(p.base, 0o700)
			sock := filepath.Join(dir, "broker.sock")
			victim := filepath.Join(filepath.Dir(p.root), "victim")
			os.WriteFile(victim, []byte("keep"), 0o600)
			switch kind {
			case "file":
				os.WriteFile(sock, []byte("keep"), 0o600)
			case "symlink":
				ostest.Symlink(t, victim, sock)
			case "dir":
				os.Mkdir(sock, 0o700)
			}
			err := broker.Serve(t.Context(), &broker.ServerOptions{ProjectRoot: p.root, RuntimeBase: p.base})
			if err == nil || !strings.Contains(err.Error(), "not a socket") {
				t.Fatalf("Serve = %v, want a refusal", err)
			}
			if _, err := os.Lstat(sock); err != nil {
				t.Errorf("the %s at the socket path was removed", kind)
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep" {
				t.Error("the symlink target changed")
			}
		})
	}
}
