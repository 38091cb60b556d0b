package store

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// patcher is one child process applying patches.
type patcher struct {
	cmd   *exec.Cmd
	id    string
	acks  []int
	first chan struct{} // closed at the first ack or the end of output
	done  chan struct{}
}

func startPatcher(t testing.TB, root, id, session string, n int, all bool) *patcher {
	t.Helper()
	env := []string{"STATEFLOW_ROOT=" + root, "STATEFLOW_ID=" + id, "STATEFLOW_SESSION=" + session, "STATEFLOW_N=" + strconv.Itoa(n)}
	if all {
		env = append(env, "STATEFLOW_ALL=1")
	}
	cmd := childCommand("patcher", env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &patcher{cmd: cmd, id: id, first: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		var once sync.Once
		defer once.Do(func() { close(p.first) })
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var i int
			if _, err := fmt.Sscanf(sc.Text(), "ack %d", &i); err == nil {
				p.acks = append(p.acks, i)
				once.Do(func() { close(p.first) })
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
// afterwards (kill instant: up to 200 ms after patcher 0's first ack;
// every eighth trial at once). STATEFLOW_KILL_TRIALS sets the trial count
// (default 50, bounded to about 20 s but never fewer than 5; the full run
// uses 1000 and no bound).
func TestCrash_KillTrials(t *testing.T) {
	trials, bound := 50, 20*time.Second
	if s := os.Getenv("STATEFLOW_KILL_TRIALS"); s != "" {
		trials, _ = strconv.Atoi(s)
		bound = 24 * time.Hour
	}
	start := time.Now()
	ran, killedMid, acked := 0, 0, 0
	for trial := 0; trial < trials && (time.Since(start) < bound || ran < 5); trial++ {
		root := filepath.Join(t.TempDir(), "state-flow")
		var ps []*patcher
		for w := range 3 {
			ps = append(ps, startPatcher(t, root, strconv.Itoa(w), sessionKey(w), 1000, true))
		}
		// The random instant counts from patcher 0's first ack, so that a
		// loaded machine's slow start does not leave most trials with
		// nothing acknowledged; every eighth trial kills at once.
		if trial%8 != 0 {
			<-ps[0].first
			time.Sleep(time.Duration(rand.IntN(200)) * time.Millisecond)
		}
		for _, p := range ps {
			p.cmd.Process.Kill()
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

// TestCrash_KillTrialsModules is TestCrash_KillTrials with a Go-native
// module (seed 003): three patchers (historyLimit 2, so folding is
// constant) write planes in every scope and, from a per-worker patch on,
// the x_trial_notes root in Global and their Session, its first write
// minting the descriptor (meta v4) in the same cohort, later writes adding
// keys and deleting older ones with null. Each trial SIGKILLs all of them
// at a random instant (after a random number of worker 0's acknowledgements
// plus a random delay; every eighth trial at once), then checks (checkModuleTrial) every scope valid,
// every acknowledged patch present in planes and module root, the
// in-flight patch whole or absent, and meta never holding a descriptor
// without its content or content without its descriptor, v2 before the
// first descriptor and v4 from then on. STATEFLOW_KILL_TRIALS as for
// TestCrash_KillTrials.
func TestCrash_KillTrialsModules(t *testing.T) {
	trials, bound := 50, 20*time.Second
	if s := os.Getenv("STATEFLOW_KILL_TRIALS"); s != "" {
		trials, _ = strconv.Atoi(s)
		bound = 24 * time.Hour
	}
	start := time.Now()
	ran, killedMid, acked, described := 0, 0, 0, 0
	for trial := 0; trial < trials && (time.Since(start) < bound || ran < 5); trial++ {
		root := filepath.Join(t.TempDir(), "state-flow")
		var ps []*modPatcher
		for w := range 3 {
			ps = append(ps, startModPatcher(t, root, "trial", w, sessionKey(w), 1000))
		}
		// Every eighth trial kills at once (before any descriptor can
		// exist); the others after worker 0's k-th acknowledgement, k
		// uniform in 0..15, plus up to 60 ms (about one loaded patch).
		if trial%8 != 0 {
			ps[0].waitAcked(rand.IntN(16))
			time.Sleep(time.Duration(rand.IntN(60000)) * time.Microsecond)
		}
		for _, p := range ps {
			p.cmd.Process.Kill()
		}
		last := make([]int, len(ps))
		for w, p := range ps {
			a, err := p.wait()
			if err == nil {
				t.Fatalf("trial %d: patcher %d finished before the kill", trial, w)
			}
			last[w] = a
			acked += a + 1
		}
		if _, err := os.Stat(filepath.Join(root, fileJournal)); err == nil {
			killedMid++
		}
		if err := checkModuleTrial(root, last); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if _, err := os.Stat(filepath.Join(root, fileJournal)); err == nil {
			t.Fatalf("trial %d: cohort journal left after recovery", trial)
		}
		if m, _ := scopeMeta(Layout{Root: root}, "global"); m != nil && m["descriptors"] != nil {
			described++
		}
		ran++
	}
	t.Logf("module kill trials: %d run in %s, %d acknowledged patches checked, %d trials left a cohort journal to recover, %d ended with a global descriptor", ran, time.Since(start).Round(time.Millisecond), acked, killedMid, described)
	if ran < 5 {
		t.Fatalf("only %d trials ran", ran)
	}
	if ran >= 10 && (described == 0 || described == ran) {
		t.Fatalf("kill points never fell on one side of the first descriptor (%d of %d trials)", described, ran)
	}
}

// TestConcurrent_GlobalNoLostUpdate runs 8 processes × 100 patches to
// Global; every key must be present. Subtest "modules": half of each
// process's patches write the Go-native x_trial_notes root instead of
// global.working. It runs beside TestLock_ReclaimRace (t.Parallel): both
// count patches and rounds, not time.
func TestConcurrent_GlobalNoLostUpdate(t *testing.T) {
	t.Parallel()
	const procs, n = 8, 100
	t.Run("planes", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "state-flow")
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
	})
	t.Run("modules", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "state-flow")
		var ps []*modPatcher
		for w := range procs {
			ps = append(ps, startModPatcher(t, root, "global", w, "", n))
		}
		var wg sync.WaitGroup
		errs := make([]error, procs)
		for w, p := range ps {
			wg.Go(func() {
				last, err := p.wait()
				if err == nil && last != n-1 {
					err = fmt.Errorf("acknowledged through %d, want %d", last, n-1)
				}
				errs[w] = err
			})
		}
		wg.Wait()
		for w, err := range errs {
			if err != nil {
				t.Fatalf("patcher %d: %v", w, err)
			}
		}
		l, _ := NewLayout(root, "/home/u/proj", "")
		snap, err := Open(l, trialOptions()).Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		cur := snap.View.Streams[0].Current()
		for w := range procs {
			planes, module := map[string]float64{}, map[string]float64{}
			for i := range n {
				if i%2 == 0 {
					planes[fmt.Sprintf("w%d-%d", w, i)] = float64(i)
				} else {
					module[fmt.Sprintf("w%d-%d", w, i)] = float64(i)
				}
			}
			prefix := fmt.Sprintf("w%d-", w)
			if got := ownKeys(cur["working"], prefix); !maps.Equal(got, planes) {
				t.Fatalf("worker %d: global.working keys %v, want %v", w, got, planes)
			}
			if got := ownKeys(cur[trialRoot], prefix); !maps.Equal(got, module) {
				t.Fatalf("worker %d: global.%s keys %v, want %v", w, trialRoot, got, module)
			}
		}
		if rev := snap.View.Streams[0].Revision; rev != procs*n {
			t.Fatalf("global revision %d, want %d", rev, procs*n)
		}
		if err := checkScopeMeta(l, "global", cur, true); err != nil {
			t.Fatal(err)
		}
	})
}
