package store

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// trialRoot is the Go-native module root the module kill trials and the
// module concurrency test write.
const trialRoot = "x_trial_notes"

// trialNotes is a Go-native module (seed 003) whose validator admits a
// complete value only when every member is a number.
type trialNotes struct{}

func (trialNotes) Policy() sf.ModulePolicy {
	return sf.ModulePolicy{ID: trialRoot, APIVersion: sf.ModuleAPIVersion, SchemaVersion: 1}
}
func (trialNotes) Validate(_ context.Context, v map[string]any) (bool, error) {
	for _, x := range v {
		if _, ok := x.(float64); !ok {
			return false, nil
		}
	}
	return true, nil
}
func (trialNotes) CaptureInput(context.Context, sf.ModuleSource) (*sf.ModuleInput, error) {
	return nil, nil
}
func (trialNotes) Context(context.Context, map[string]any, sf.ModuleFrame) ([]sf.ModuleContribution, error) {
	return nil, nil
}
func (trialNotes) Produce(context.Context, map[string]any, sf.ModuleFrame) (map[string]any, bool, error) {
	return nil, false, nil
}

// staticCatalog is a catalog that never changes (generation 1).
type staticCatalog struct{}

func (staticCatalog) Current() sf.Catalog {
	return sf.Catalog{Generation: 1, Modules: []sf.Module{trialNotes{}}}
}

// trialLimit is the patchers' historyLimit: small, so folding happens every
// few patches.
const trialLimit = 2

func trialOptions() *Options {
	o := DefaultOptions()
	o.HistoryLimit = trialLimit
	o.Catalog = staticCatalog{}
	return o
}

// trialModuleStart is the first patch of worker w that writes the module
// root; before it the worker writes planes only, so every scope is seen at
// meta v2 before its first descriptor.
func trialModuleStart(w int) int { return 1 + 2*w }

// trialModuleOp says what patch i of worker w does to the module root:
// write (key wW-i), and whether it also deletes (null) the key of the
// previous module patch. Module patches are every other patch from
// trialModuleStart; every third one after the first two deletes; the first
// key is never deleted, so a root once written stays non-empty.
func trialModuleOp(w, i int) (write bool, del int) {
	s := trialModuleStart(w)
	if i < s || (i-s)%2 != 0 {
		return false, -1
	}
	if m := (i - s) / 2; m >= 2 && m%3 == 2 {
		return true, i - 2
	}
	return true, -1
}

// trialPatch is patch i of worker w. Shape "trial": planes in every scope,
// module root in Global and Session (trialModuleOp). Shape "global": Global
// only, even patches to global.working, odd ones to the module root.
func trialPatch(shape string, w, i int) string {
	key := fmt.Sprintf("w%d-%d", w, i)
	if shape == "global" {
		if i%2 == 0 {
			return fmt.Sprintf(`{"global":{"working":{%q:%d}}}`, key, i)
		}
		return fmt.Sprintf(`{"global":{%q:{%q:%d}}}`, trialRoot, key, i)
	}
	mod := ""
	if write, del := trialModuleOp(w, i); write {
		m := fmt.Sprintf(`%q:{%q:%d`, trialRoot, key, i)
		if del >= 0 {
			m += fmt.Sprintf(`,"w%d-%d":null`, w, del)
		}
		mod = "," + m + "}"
	}
	return fmt.Sprintf(`{"global":{"working":{%q:%d}%s},"cwd":{"working":{%q:%d}},"session":{"contract":{%q:%d}%s}}`,
		key, i, mod, key, i, key, i, mod)
}

// trialExpect is worker w's own keys after its patches 0..a: in the planes
// (every scope) and in the module root (Global and Session).
func trialExpect(w, a int) (planes, module map[string]float64) {
	planes, module = map[string]float64{}, map[string]float64{}
	for i := 0; i <= a; i++ {
		key := fmt.Sprintf("w%d-%d", w, i)
		planes[key] = float64(i)
		if write, del := trialModuleOp(w, i); write {
			module[key] = float64(i)
			if del >= 0 {
				delete(module, fmt.Sprintf("w%d-%d", w, del))
			}
		}
	}
	return planes, module
}

// childModulePatcher is the "modpatcher" role: STATEFLOW_N patches of
// STATEFLOW_SHAPE (trialPatch) with the trialNotes module registered,
// printing "ack <i>" after each acknowledged patch.
func childModulePatcher() int {
	env := os.Getenv
	n, _ := strconv.Atoi(env("STATEFLOW_N"))
	w, _ := strconv.Atoi(env("STATEFLOW_ID"))
	l, err := NewLayout(env("STATEFLOW_ROOT"), "/home/u/proj", env("STATEFLOW_SESSION"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := Open(l, trialOptions())
	for i := range n {
		body := trialPatch(env("STATEFLOW_SHAPE"), w, i)
		if _, err := s.PatchState(context.Background(), []byte(body), &PatchOptions{CreateSession: true}); err != nil {
			fmt.Fprintln(os.Stderr, "patch:", err)
			return 1
		}
		fmt.Fprintf(os.Stdout, "ack %d\n", i)
	}
	return 0
}

// modPatcher is one "modpatcher" child; last is its highest acknowledged
// patch (-1: none), readable while it runs.
type modPatcher struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	cond *sync.Cond
	last int
	eof  bool
	done chan struct{}
}

func startModPatcher(t testing.TB, root, shape string, w int, session string, n int) *modPatcher {
	t.Helper()
	cmd := childCommand("modpatcher", "STATEFLOW_ROOT="+root, "STATEFLOW_ID="+strconv.Itoa(w),
		"STATEFLOW_SESSION="+session, "STATEFLOW_N="+strconv.Itoa(n), "STATEFLOW_SHAPE="+shape)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &modPatcher{cmd: cmd, last: -1, done: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var i int
			if _, err := fmt.Sscanf(sc.Text(), "ack %d", &i); err == nil {
				p.mu.Lock()
				p.last = i
				p.cond.Broadcast()
				p.mu.Unlock()
			}
		}
		p.mu.Lock()
		p.eof = true
		p.cond.Broadcast()
		p.mu.Unlock()
	}()
	return p
}

// waitAcked blocks until patch k is acknowledged or the child's output ends.
func (p *modPatcher) waitAcked(k int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.last < k && !p.eof {
		p.cond.Wait()
	}
}

// wait reaps the child and returns its highest acknowledged patch.
func (p *modPatcher) wait() (int, error) {
	<-p.done
	err := p.cmd.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last, err
}

// scopeMeta reads one scope's meta.json as JSON (nil: no file).
func scopeMeta(l Layout, scope string) (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join(l.Root, filepath.FromSlash(rel(l.ScopeDir(scope), fileMeta))))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s meta.json: %w", scope, err)
	}
	return m, nil
}

// ownKeys is the members of obj (a map[string]any or nil) whose key starts
// with prefix.
func ownKeys(obj any, prefix string) map[string]float64 {
	out := map[string]float64{}
	m, _ := obj.(map[string]any)
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			f, _ := v.(float64)
			out[k] = f
		}
	}
	return out
}

// checkModuleTrial checks the store after a kill: every scope valid, each
// worker's keys exactly those of its acknowledged patches plus, at most,
// its one in-flight patch applied in every scope or in none, and every
// scope's meta at v2 without a descriptor while its module root has no
// content, at v4 with exactly the module's descriptor once it has.
func checkModuleTrial(root string, last []int) error {
	globalWant := false
	var globalCurrent map[string]any
	for w, a := range last {
		l, _ := NewLayout(root, "/home/u/proj", sessionKey(w))
		snap, err := Open(l, trialOptions()).Read(context.Background())
		if err != nil {
			return fmt.Errorf("store invalid after kill: %v", err)
		}
		cur := map[string]map[string]any{}
		for _, scope := range []string{"global", "cwd", "session"} {
			if st := snap.View.Stream(scope); st != nil {
				cur[scope] = st.Current()
			}
		}
		globalCurrent = cur["global"]
		prefix := fmt.Sprintf("w%d-", w)
		got := map[string]map[string]float64{
			"global.working":       ownKeys(cur["global"]["working"], prefix),
			"cwd.working":          ownKeys(cur["cwd"]["working"], prefix),
			"session.contract":     ownKeys(cur["session"]["contract"], prefix),
			"global." + trialRoot:  ownKeys(cur["global"][trialRoot], prefix),
			"session." + trialRoot: ownKeys(cur["session"][trialRoot], prefix),
		}
		matched := -2
		for _, k := range []int{a, a + 1} {
			planes, module := trialExpect(w, k)
			ok := true
			for path, keys := range got {
				want := planes
				if strings.HasSuffix(path, trialRoot) {
					want = module
				}
				ok = ok && maps.Equal(keys, want)
			}
			if ok {
				matched = k
				break
			}
		}
		if matched == -2 {
			return fmt.Errorf("worker %d acknowledged through patch %d, store holds neither that nor its next patch whole: %v", w, a, got)
		}
		if _, module := trialExpect(w, a); len(module) > 0 {
			globalWant = true
		}
		for _, scope := range []string{"cwd", "session"} {
			if err := checkScopeMeta(l, scope, cur[scope], cur[scope][trialRoot] != nil); err != nil {
				return fmt.Errorf("worker %d: %w", w, err)
			}
		}
	}
	l, _ := NewLayout(root, "/home/u/proj", "")
	if globalWant && globalCurrent[trialRoot] == nil {
		return fmt.Errorf("acknowledged module writes but no global %s", trialRoot)
	}
	return checkScopeMeta(l, "global", globalCurrent, globalCurrent[trialRoot] != nil)
}

// checkScopeMeta asserts one scope's meta.json against its content: v2 and
// no "descriptors" while the module root has no content, v4 with exactly
// {"x_trial_notes":{"immutable":false,"schemaVersion":1}} once it has.
func checkScopeMeta(l Layout, scope string, current map[string]any, content bool) error {
	m, err := scopeMeta(l, scope)
	if err != nil {
		return err
	}
	if m == nil {
		if len(current) > 0 {
			return fmt.Errorf("%s has state but no meta.json", scope)
		}
		return nil
	}
	desc, hasDesc := m["descriptors"]
	switch {
	case content && (m["version"] != 4.0 || !hasDesc):
		return fmt.Errorf("%s holds %s content but meta is %v", scope, trialRoot, m)
	case content:
		b, _ := json.Marshal(desc)
		if string(b) != `{"x_trial_notes":{"immutable":false,"schemaVersion":1}}` {
			return fmt.Errorf("%s descriptors %s", scope, b)
		}
	case m["version"] != 2.0 || hasDesc:
		return fmt.Errorf("%s has no %s content but meta is %v", scope, trialRoot, m)
	}
	return nil
}

// TestCrash_moduleTrialCheckerFails shows that checkModuleTrial can fail:
// it accepts an intact store, and refuses a lost acknowledged patch and a
// meta.json whose descriptor was dropped while the content stayed (a cohort
// mixed across files).
func TestCrash_moduleTrialCheckerFails(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state-flow")
	l, _ := NewLayout(root, "/home/u/proj", sessionKey(0))
	s := Open(l, trialOptions())
	const a = 6
	for i := range a + 1 {
		if _, err := s.PatchState(context.Background(), []byte(trialPatch("trial", 0, i)), &PatchOptions{CreateSession: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkModuleTrial(root, []int{a}); err != nil {
		t.Fatalf("intact store refused: %v", err)
	}
	if err := checkModuleTrial(root, []int{a - 1}); err != nil {
		t.Fatalf("store holding the in-flight patch refused: %v", err)
	}
	if err := checkModuleTrial(root, []int{a + 1}); err == nil || !strings.Contains(err.Error(), "neither") {
		t.Fatalf("lost acknowledged patch accepted: %v", err)
	}
	path := filepath.Join(root, filepath.FromSlash(rel(l.ScopeDir("session"), fileMeta)))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "descriptors")
	m["version"] = 2
	b, _ = json.Marshal(m)
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := checkModuleTrial(root, []int{a}); err == nil {
		t.Fatal("content without its descriptor accepted")
	} else {
		t.Logf("mixed cohort refused: %v", err)
	}
}
