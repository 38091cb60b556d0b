package platform_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/internal/testproc"
)

// The roles this test binary plays as a child process.
var procs = testproc.New(map[string]testproc.Role{
	// hang blocks until killed.
	"hang": func([]string) int { select {} },
	// spawn ignores SIGTERM (Unix), starts a hang child of its own, prints
	// that child's pid and hangs: only a kill of the whole group ends both.
	"spawn": func([]string) int {
		signal.Ignore(syscall.SIGTERM)
		exe, err := os.Executable()
		if err != nil {
			return 1
		}
		c := exec.Command(exe)
		c.Env = append(os.Environ(), testproc.RoleEnv("hang")...)
		if err := c.Start(); err != nil {
			return 1
		}
		fmt.Println(c.Process.Pid)
		select {}
	},
	// writefd writes "passed" to the file numbered args[0].
	"writefd": func(args []string) int {
		n, err := strconv.ParseUint(args[0], 10, 64)
		if err != nil {
			return 1
		}
		f := os.NewFile(uintptr(n), "passed")
		if _, err := f.WriteString("passed\n"); err != nil {
			return 1
		}
		return 0
	},
	// takestdout hands stdout off, writes "channel" to the channel and
	// "stray" to fd 1 (Unix) and to os.Stdout.
	"takestdout": func([]string) int {
		out, err := platform.TakeStdout()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		os.Stdout = os.Stderr
		fmt.Fprintln(out, "channel")
		if fd1 := os.NewFile(1, "fd1"); fd1 != nil && os.PathSeparator == '/' {
			fmt.Fprintln(fd1, "stray-fd1")
		}
		fmt.Println("stray-stdout")
		return 0
	},
	// upper copies stdin to stdout upper-cased, until stdin ends.
	"upper": func([]string) int {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			fmt.Println(strings.ToUpper(in.Text()))
		}
		return 0
	},
	// getwd prints platform.Getwd and os.Getwd, one per line.
	"getwd": func([]string) int {
		p, err := platform.Getwd()
		o, oerr := os.Getwd()
		if err != nil || oerr != nil {
			return 1
		}
		fmt.Printf("%s\n%s\n", p, o)
		return 0
	},
}, &testproc.Options{Optional: wineUnused()})

// wineUnused names the roles no test starts under Wine: getwd runs in a
// symlink, which Wine lacks (TestGetwd skips there).
func wineUnused() []string {
	if platform.Wine() == "" {
		return nil
	}
	return []string{"getwd"}
}

func TestMain(m *testing.M) { os.Exit(procs.Run(m)) }

// startHang starts a "hang" child and makes sure it is killed and reaped
// before the test's cleanup.
func startHang(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := procs.Command(t, "hang")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// readLine reads the first line of r, failing the test after 30 s.
func readLine(t *testing.T, s *bufio.Scanner) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		if s.Scan() {
			got <- strings.TrimSpace(s.Text())
		}
		close(got)
	}()
	select {
	case l := <-got:
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("no line from the child")
	}
	return ""
}

// waitGone waits up to 30 s until gone reports true for pid.
func waitGone(t *testing.T, pid int, gone func(int) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for !gone(pid) {
		select {
		case <-ctx.Done():
			t.Fatalf("process %d still there", pid)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
