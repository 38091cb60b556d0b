package platform_test

import (
	"bufio"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
)

// childPipe makes a ChildPipe whose ends the test closes.
func childPipe(t *testing.T, childReads bool) (parent, child *os.File) {
	t.Helper()
	parent, child, err := platform.ChildPipe(childReads)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Close(); child.Close() })
	return parent, child
}

// TestChildPipe_Child: a child process reads and writes its standard
// handles through the child ends and sees the end of its input when the
// parent closes its end.
func TestChildPipe_Child(t *testing.T) {
	in, childIn := childPipe(t, true)
	out, childOut := childPipe(t, false)
	cmd := procs.Command(t, "upper")
	cmd.Stdin, cmd.Stdout = childIn, childOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	childIn.Close()
	childOut.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	r := bufio.NewScanner(out)
	for _, w := range []string{"one", "two"} {
		if _, err := io.WriteString(in, w+"\n"); err != nil {
			t.Fatal(err)
		}
		if got := readLine(t, r); got != strings.ToUpper(w) {
			t.Fatalf("child wrote %q, want %q", got, strings.ToUpper(w))
		}
	}
	in.Close() // the child reads EOF and exits
	if err := <-done; err != nil {
		t.Fatalf("child: %v", err)
	}
	if r.Scan() {
		t.Fatalf("more output: %q", r.Text())
	}
}

// TestChildPipe_WriteDeadline: a write nobody reads ends at its deadline
// with os.ErrDeadlineExceeded, having written at most what the pipe holds.
func TestChildPipe_WriteDeadline(t *testing.T) {
	parent, _ := childPipe(t, true)
	if err := parent.SetWriteDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Fatalf("SetWriteDeadline: %v", err)
	}
	n, err := parent.Write(make([]byte, 4<<20))
	if !errors.Is(err, os.ErrDeadlineExceeded) || n >= 4<<20 {
		t.Fatalf("Write = %d, %v; want fewer bytes and os.ErrDeadlineExceeded", n, err)
	}
}

// TestChildPipe_CloseUnblocksRead: Close of the parent's end ends a Read
// pending on it while the child's end stays open.
func TestChildPipe_CloseUnblocksRead(t *testing.T) {
	parent, child := childPipe(t, false)
	got, done := make(chan struct{}), make(chan error, 1)
	go func() {
		buf := make([]byte, 16)
		if _, err := parent.Read(buf); err != nil {
			done <- err
			return
		}
		close(got)
		_, err := parent.Read(buf) // blocks: nothing more comes
		done <- err
	}()
	if _, err := child.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case err := <-done:
		t.Fatalf("first Read: %v", err)
	}
	// The second Read is pending now or starts after Close: either way it
	// must end with os.ErrClosed.
	parent.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("Read = %v, want os.ErrClosed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Read still blocked after Close")
	}
}

// TestWine: only a Windows binary can run under Wine.
func TestWine(t *testing.T) {
	v := platform.Wine()
	if runtime.GOOS != "windows" && v != "" {
		t.Fatalf("Wine() = %q on %s", v, runtime.GOOS)
	}
	t.Logf("Wine() = %q", v)
}
