package store

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// patcher is one child process applying patches.
type patcher struct {
	cmd  *exec.Cmd
	id   string
	acks []int
	done chan struct{}
}

func startPatcher(t testing.TB, root, id, session string, n int, all bool) *patcher {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "STATEFLOW_TEST_CHILD=patcher", "STATEFLOW_ROOT="+root, "STATEFLOW_ID="+id,
		"STATEFLOW_SESSION="+session, "STATEFLOW_N="+strconv.Itoa(n))
	if all {
		cmd.Env = append(cmd.Env, "STATEFLOW_ALL=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &patcher{cmd: cmd, id: id, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var i int
			if _, err := fmt.Sscanf(sc.Text(), "ack %d", &i); err == nil {
				p.acks = append(p.acks, i)
			}
		}
	}()
	return p
}

// wait reaps the child and returns its acknowledged patch numbers.
func (p *patcher) wait() ([]int, error) {
	<-p.done
	err := p.cmd.Wait()
	return p.acks, err
}

func sessionKey(i int) string {
	return fmt.Sprintf("2026-01-02T03-04-05-678Z_0b6f1a2c-3d4e-4f50-8a6b-%012d", i)
}

// TestCrash_KillTrials SIGKILLs concurrent patchers at random instants and
// checks that every store is valid and every acknowledged patch present
// afterwards. STATEFLOW_KILL_TRIALS sets the trial count (default 50,
// bounded to about 20 s; the full run uses 1000 and no bound).
func TestCrash_KillTrials(t *testing.T) {
	trials, bound := 50, 20*time.Second
	if s := os.Getenv("STATEFLOW_KILL_TRIALS"); s != "" {
		trials, _ = strconv.Atoi(s)
		bound = 24 * time.Hour
	}
	start := time.Now()
	ran, killedMid, acked := 0, 0, 0
	for trial := 0; trial < trials && time.Since(start) < bound; trial++ {
		root := filepath.Join(t.TempDir(), "state-flow")
		var ps []*patcher
		for w := range 3 {
			ps = append(ps, startPatcher(t, root, strconv.Itoa(w), sessionKey(w), 1000, true))
		}
		time.Sleep(time.Duration(150+rand.IntN(450)) * time.Millisecond)
		for _, p := range ps {
			p.cmd.Process.Signal(syscall.SIGKILL)
		}
		// Reap every child first: a zombie still answers kill(pid, 0).
		all := make([][]int, len(ps))
		for w, p := range ps {
			acks, err := p.wait()
			if err == nil {
				t.Fatalf("trial %d: patcher %d finished before the kill", trial, w)
			}
			all[w] = acks
		}
		if _, err := os.Stat(filepath.Join(root, fileJournal)); err == nil {
			killedMid++
		}
		for w, acks := range all {
			acked += len(acks)
			for _, i := range acks {
				want := fmt.Sprintf("w%d-%d", w, i)
				for _, path := range []string{"global.working." + want, "cwd.working." + want, "session.contract." + want} {
					if got := readFrom(t, root, sessionKey(w), path); got != fmt.Sprintf(`{"value":%d}`, i) {
						t.Fatalf("trial %d: acknowledged %s lost: %s", trial, path, got)
					}
				}
			}
		}
		for w := range ps {
			l, _ := NewLayout(root, "/home/u/proj", sessionKey(w))
			if _, err := Open(l, DefaultOptions()).Read(context.Background()); err != nil {
				t.Fatalf("trial %d: store invalid after kill: %v", trial, err)
			}
		}
		if _, err := os.Stat(filepath.Join(root, fileJournal)); err == nil {
			t.Fatalf("trial %d: cohort journal left after recovery", trial)
		}
		ran++
	}
	t.Logf("kill trials: %d run in %s, %d acknowledged patches checked, %d trials left a cohort journal to recover", ran, time.Since(start).Round(time.Millisecond), acked, killedMid)
	if ran < 5 {
		t.Fatalf("only %d trials ran", ran)
	}
}

func readFrom(t testing.TB, root, session, path string) string {
	t.Helper()
	l, _ := NewLayout(root, "/home/u/proj", session)
	out, err := Open(l, DefaultOptions()).ReadState(context.Background(), ReadPathArgs(path))
	if err != nil {
		return "error: " + err.Error()
	}
	return out
}

// TestConcurrent_GlobalNoLostUpdate runs 8 processes × 100 patches to
// Global; every key must be present.
func TestConcurrent_GlobalNoLostUpdate(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state-flow")
	const procs, n = 8, 100
	var ps []*patcher
	for w := range procs {
		ps = append(ps, startPatcher(t, root, strconv.Itoa(w), "", n, false))
	}
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for w, p := range ps {
		wg.Go(func() { _, errs[w] = p.wait() })
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("patcher %d: %v", w, err)
		}
	}
	got := readFrom(t, root, "", "global.working")
	l, _ := NewLayout(root, "/home/u/proj", "")
	snap, err := Open(l, DefaultOptions()).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	working, _ := snap.View.Streams[0].Current()["working"].(map[string]any)
	if len(working) != procs*n {
		t.Fatalf("global.working has %d keys, want %d (%.200s)", len(working), procs*n, got)
	}
	if rev := snap.View.Streams[0].Revision; rev != procs*n {
		t.Fatalf("global revision %d, want %d", rev, procs*n)
	}
}
