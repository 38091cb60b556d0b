package browsertest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// proc is a peer process a test started (Firefox, WebKitWebDriver, Xvfb):
// it keeps a bounded tail of the process's output for error messages and
// reports the first output line containing a marker.
type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{} // closed once Wait returned
	err    error         // Wait's result, set before exited closes

	out *tailWriter
}

// startProc starts cmd with its stdout and stderr captured. When marker is
// not empty, the first line containing it is sent on the returned channel.
func startProc(name string, cmd *exec.Cmd, marker string) (*proc, <-chan string, error) {
	lines := make(chan string, 1)
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{}), out: &tailWriter{marker: marker, found: lines}}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("browsertest: start %s: %w", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, lines, nil
}

// stop waits up to grace for the process to exit on its own (after a
// polite request such as browser.close), then kills it and waits. It
// returns an error when the process had to be killed.
func (p *proc) stop(grace time.Duration) error {
	select {
	case <-p.exited:
		return nil
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return fmt.Errorf("browsertest: %s did not exit within %v; killed (output: %s)", p.name, grace, p.out.tail())
}

// failed describes why a start did not succeed: the exit status when the
// process ended, and the tail of its output.
func (p *proc) failed(what string) error {
	select {
	case <-p.exited:
		return fmt.Errorf("browsertest: %s exited before %s: %v (output: %s)", p.name, what, p.err, p.out.tail())
	default:
		return fmt.Errorf("browsertest: %s: no %s (output: %s)", p.name, what, p.out.tail())
	}
}

// tailWriter keeps the last tailSize bytes written and finds the first line
// containing marker.
type tailWriter struct {
	mu     sync.Mutex
	marker string
	found  chan<- string
	line   bytes.Buffer // the line being written, until marker is found
	buf    []byte
}

const tailSize = 4 << 10

func (w *tailWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	if len(w.buf) > tailSize {
		w.buf = w.buf[len(w.buf)-tailSize:]
	}
	if w.marker == "" {
		return len(b), nil
	}
	for _, c := range b {
		if c != '\n' {
			if w.line.Len() < tailSize {
				w.line.WriteByte(c)
			}
			continue
		}
		if l := w.line.String(); strings.Contains(l, w.marker) {
			w.found <- l
			w.marker = ""
			break
		}
		w.line.Reset()
	}
	return len(b), nil
}

func (w *tailWriter) tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(string(w.buf))
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// descendants returns the process ids of every living descendant of the
// processes pids (a browser's helpers: MiniBrowser's web and network
// processes, Firefox's content processes), read from Linux's
// /proc/PID/task/TID/children; none where there is no /proc.
func descendants(pids ...int) []int {
	var out []int
	seen := map[int]bool{}
	for len(pids) > 0 {
		pid := pids[0]
		pids = pids[1:]
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		for _, f := range tasks {
			data, _ := os.ReadFile(f)
			for _, field := range strings.Fields(string(data)) {
				if c, err := strconv.Atoi(field); err == nil && !seen[c] {
					seen[c] = true
					out = append(out, c)
					pids = append(pids, c)
				}
			}
		}
	}
	return out
}

// running reports whether pid is a process that has not exited (a zombie
// has exited: only its parent's reaping is left).
func running(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses, which may itself
	// hold spaces or parentheses.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// waitExited waits up to grace for every process of pids to exit, then
// kills those left and reports them.
func waitExited(pids []int, grace time.Duration) error {
	deadline := time.Now().Add(grace)
	for {
		var left []int
		for _, pid := range pids {
			if running(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
			return fmt.Errorf("browsertest: helper processes %v still ran %v after their browser stopped; killed", left, grace)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
