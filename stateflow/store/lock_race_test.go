package store

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
)

// raceGrace is the pending grace the contenders of TestLock_ReclaimRace
// use instead of upstream's 2 s, so that a round with an empty or
// malformed lock lasts tens of milliseconds; the protocol is the same.
const raceGrace = 40 * time.Millisecond

// staleLocks are the abandoned locks TestLock_ReclaimRace plants, one per
// round in turn: empty (a writer killed between open and write),
// malformed, and a dead holder's PID (%d: the PID of a reaped child).
var staleLocks = []string{"", "garbage", "12", "0\n", "-3\n", " 7\n", "%d\n"}

// TestLock_ReclaimRace: 8 contender processes race for the store lock
// over many rounds (STATEFLOW_LOCK_ROUNDS, default 100, in each mode).
// Before each round the test plants an abandoned lock (staleLocks,
// modified an hour ago), then releases every contender at once. Each
// round must have exactly one winner, the one contender that reclaimed
// the abandoned lock, and every contender must then hold the lock alone
// and release it cleanly: in "lock" mode a holder creates a marker file
// O_EXCL (a second holder at the same time finds it); in "patch" mode each
// contender commits one patch_state through the store, as `pikit
// stateflow patch` does, and every patch must be acknowledged (none
// reported as a failure) and present afterwards.
//
// It runs beside TestConcurrent_GlobalNoLostUpdate (t.Parallel): each has
// its own root and processes, and a round waits on its contenders, not on
// a clock, so sharing the machine changes only how long it takes.
func TestLock_ReclaimRace(t *testing.T) {
	t.Parallel()
	const procs = 8
	rounds := 100
	if s := os.Getenv("STATEFLOW_LOCK_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	deadPID := reapedPID(t)
	// Wine 8 reopens a file whose delete is pending (Windows refuses with
	// STATUS_DELETE_PENDING, and NTFS frees the name at once) and lacks
	// POSIX delete, so there each reclaimer that judged the same abandoned
	// file may "remove" it in turn: a winner count Wine cannot give. One
	// holder at a time is still checked, by the marker and the patches.
	wineCounts := platform.UnderWine()
	if wineCounts {
		t.Log("under Wine: at least one reclaimer per round, not exactly one (see above)")
	}
	for _, mode := range []string{"lock", "patch"} {
		t.Run(mode, func(t *testing.T) {
			n := rounds
			root := filepath.Join(t.TempDir(), "state-flow")
			if err := os.MkdirAll(root, 0o700); err != nil {
				t.Fatal(err)
			}
			cs := startContenders(t, root, mode, procs)
			start := time.Now()
			for round := range n {
				stale := staleLocks[round%len(staleLocks)]
				if strings.Contains(stale, "%d") {
					stale = fmt.Sprintf(stale, deadPID)
				}
				planted := plantLock(t, root, stale)
				for _, c := range cs {
					fmt.Fprintf(c.in, "%d\n", round)
				}
				winners := 0
				for i, c := range cs {
					line, err := c.next(time.Minute)
					if err != nil {
						t.Fatalf("round %d (lock %q): contender %d: %v", round, stale, i, err)
					}
					head, removed, _ := strings.Cut(line+" ", " ok ")
					if head != strconv.Itoa(round) || !strings.HasPrefix(line, head+" ok") {
						t.Fatalf("round %d (lock %q): contender %d: %s", round, stale, i, line)
					}
					for _, r := range strings.Fields(removed) {
						if r == planted {
							winners++
						} else {
							// A writer stalled between creating its file and
							// locking it for longer than the grace: its file
							// was judged abandoned too, and it started over.
							t.Logf("round %d: contender %d also removed %s, a stalled writer's file", round, i, r)
						}
					}
				}
				if winners != 1 && !(wineCounts && winners > 1) {
					t.Fatalf("round %d (lock %q): %d contenders reclaimed the abandoned lock, want exactly 1", round, stale, winners)
				}
				if _, err := os.Lstat(filepath.Join(root, fileLock)); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("round %d: lock left after every holder released it (%v)", round, err)
				}
			}
			t.Logf("%s mode: %d rounds × %d contenders in %s", mode, n, procs, time.Since(start).Round(time.Millisecond))
			for i, c := range cs {
				c.in.Close()
				if err := c.wait(); err != nil {
					t.Fatalf("contender %d: %v", i, err)
				}
			}
			if mode != "patch" {
				return
			}
			l, _ := NewLayout(root, "/home/u/proj", "")
			snap, err := Open(l, DefaultOptions()).Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			working, _ := snap.View.Streams[0].Current()["working"].(map[string]any)
			if len(working) != procs*n || snap.View.Streams[0].Revision != procs*n {
				t.Fatalf("global has %d keys at revision %d, want %d of each", len(working), snap.View.Streams[0].Revision, procs*n)
			}
		})
	}
}

// reapedPID returns the PID of a child that has exited and been reaped.
func reapedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// plantLock leaves content at the lock path as an abandoned lock, last
// modified an hour ago.
func plantLock(t *testing.T, root, content string) string {
	t.Helper()
	p := filepath.Join(root, fileLock)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	st, err := platform.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return removedLock{st.ID, st.MtimeNs}.String()
}

// contender is one child process of TestLock_ReclaimRace.
type contender struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	done  chan struct{}
}

func startContenders(t *testing.T, root, mode string, n int) []*contender {
	t.Helper()
	var cs []*contender
	t.Cleanup(func() {
		for _, c := range cs {
			c.cmd.Process.Kill()
			c.wait()
		}
	})
	for i := range n {
		cmd := childCommand("contender", "STATEFLOW_ROOT="+root, "STATEFLOW_ID="+strconv.Itoa(i),
			"STATEFLOW_MODE="+mode, "STATEFLOW_GRACE="+raceGrace.String())
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c := &contender{cmd: cmd, in: in, lines: make(chan string, 1), done: make(chan struct{})}
		go func() {
			defer close(c.done)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				c.lines <- sc.Text()
			}
		}()
		cs = append(cs, c)
	}
	for i, c := range cs {
		if line, err := c.next(time.Minute); err != nil || line != "ready" {
			t.Fatalf("contender %d: %q %v", i, line, err)
		}
	}
	return cs
}

// next is the contender's next output line, or an error when it ended or
// said nothing within d.
func (c *contender) next(d time.Duration) (string, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case line := <-c.lines:
		return line, nil
	case <-c.done:
		select {
		case line := <-c.lines:
			return line, nil
		default:
			return "", errors.New("exited")
		}
	case <-t.C:
		return "", fmt.Errorf("no answer within %s", d)
	}
}

// wait reaps the contender once its output is drained.
func (c *contender) wait() error {
	<-c.done
	return c.cmd.Wait()
}

// childContender is a contender of TestLock_ReclaimRace: it prints
// "ready", then for each line "<round>" on stdin takes the store lock once
// and prints "<round> ok <1 if it reclaimed an abandoned lock, else 0>" or
// "<round> err <message>".
func childContender() int {
	env := os.Getenv
	root, id, mode := env("STATEFLOW_ROOT"), env("STATEFLOW_ID"), env("STATEFLOW_MODE")
	grace, _ := time.ParseDuration(env("STATEFLOW_GRACE"))
	l, err := NewLayout(root, "/home/u/proj", "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var logged bytes.Buffer
	s := Open(l, &Options{HistoryLimit: 2, Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	s.lock.grace = grace
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		round := in.Text()
		var removed []string // the files this contender removed as abandoned
		var err error
		switch mode {
		case "lock":
			var rs []removedLock
			rs, err = holdAlone(&s.lock, root)
			for _, r := range rs {
				removed = append(removed, r.String())
			}
		case "patch":
			logged.Reset()
			body := fmt.Sprintf(`{"global":{"working":{"w%s-%s":%s}}}`, id, round, round)
			_, err = s.PatchState(context.Background(), []byte(body), nil)
			for _, m := range removedFile.FindAllStringSubmatch(logged.String(), -1) {
				removed = append(removed, m[1])
			}
		}
		if err != nil {
			fmt.Printf("%s err %s\n", round, strings.ReplaceAll(err.Error(), "\n", " | "))
			continue
		}
		fmt.Println(strings.TrimSpace(round + " ok " + strings.Join(removed, " ")))
	}
	return 0
}

// removedFile finds the files a store's acquisition removed as abandoned
// in its debug log.
var removedFile = regexp.MustCompile(`removed abandoned lock file" file=(\S+)`)

// holdAlone takes the lock, proves it is the only holder by creating a
// marker file O_EXCL (and removing it before release), and releases.
func holdAlone(w *lockWaiter, root string) ([]removedLock, error) {
	h, err := w.acquire(context.Background(), root)
	if err != nil {
		return nil, err
	}
	marker := filepath.Join(root, "holder")
	f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		w.release(h)
		return nil, fmt.Errorf("a second holder at the same time: %w", err)
	}
	// Stay a moment, so that a second holder would overlap this one.
	time.Sleep(2 * time.Millisecond)
	f.Close()
	rerr := os.Remove(marker)
	return h.reclaimed, errors.Join(rerr, w.release(h))
}
