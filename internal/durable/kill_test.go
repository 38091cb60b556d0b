package durable_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/durable"
)

// The writer child, in a loop: replaces stateFile (generation g: "gen=g\n"
// and a body of one letter, its length derived from g), appends a batch of
// 1–3 records {"n":k,"pad":"..."} (k = 1, 2, ... in file order) to
// journalFile, and publishes cohort c, two part files made atomic as a set
// by a manifest (the recipe the package doc gives). It prints "w g", "j k"
// and "c c" once each step returned: those are acknowledged. It resumes
// where the files stand, so one directory sees many crashes.
const (
	stateFile   = "state"
	journalFile = "journal.ndjson"
	cohortDir   = "cohort"
	manifest    = "manifest"
)

func partName(c int, x byte) string { return fmt.Sprintf("part-%d-%c", c, x) }

func partContent(c int, x byte) []byte {
	return append([]byte(fmt.Sprintf("%d-%c\n", c, x)), bytes.Repeat([]byte{x}, 500+c*31%20_000)...)
}

// openCohort returns the published cohort (0: none) and removes the parts
// of any other: an unpublished next one, or the previous one.
func openCohort(dir string) (int, error) {
	if err := durable.RemoveTemps(dir); err != nil {
		return 0, err
	}
	c := 0
	if b, err := os.ReadFile(filepath.Join(dir, manifest)); err == nil {
		if c, err = strconv.Atoi(string(b)); err != nil {
			return 0, fmt.Errorf("manifest torn: %q", b)
		}
	}
	names, err := filepath.Glob(filepath.Join(dir, "part-*"))
	if err != nil {
		return 0, err
	}
	for _, n := range names {
		if b := filepath.Base(n); b != partName(c, 'a') && b != partName(c, 'b') {
			if err := os.Remove(n); err != nil {
				return 0, err
			}
		}
	}
	return c, nil
}

// publishCohort writes cohort c's parts, makes them durable with one
// directory fsync, commits them by replacing the manifest, then drops
// cohort c-1.
func publishCohort(dir string, c int) error {
	for _, x := range []byte{'a', 'b'} {
		if err := durable.WriteFileOpts(filepath.Join(dir, partName(c, x)), partContent(c, x), 0o600, &durable.WriteOptions{NoSyncDir: true}); err != nil {
			return err
		}
	}
	if err := durable.SyncDir(dir); err != nil {
		return err
	}
	if err := durable.WriteFile(filepath.Join(dir, manifest), []byte(strconv.Itoa(c)), 0o600); err != nil {
		return err
	}
	for _, x := range []byte{'a', 'b'} {
		if err := os.Remove(filepath.Join(dir, partName(c-1, x))); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// checkCohort returns the published cohort after verifying its parts.
func checkCohort(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifest))
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	c, err := strconv.Atoi(string(b))
	if err != nil {
		return 0, fmt.Errorf("manifest torn: %q", b)
	}
	for _, x := range []byte{'a', 'b'} {
		got, err := os.ReadFile(filepath.Join(dir, partName(c, x)))
		if err != nil || !bytes.Equal(got, partContent(c, x)) {
			return 0, fmt.Errorf("cohort %d part %c missing or torn (%d bytes, %v)", c, x, len(got), err)
		}
	}
	return c, nil
}

func stateContent(g int) []byte {
	n := 1000 + g*7919%50_000
	return append([]byte(fmt.Sprintf("gen=%d\n", g)), bytes.Repeat([]byte{byte('a' + g%26)}, n)...)
}

func journalRecord(k int) []byte {
	pad := k * 7919 % 8000
	if k%10 == 0 {
		pad = 64 << 10 // a large batch, so a kill can land inside its write
	}
	b, _ := json.Marshal(map[string]any{"n": k, "pad": strings.Repeat("p", pad)})
	return b
}

func writerRole(args []string) int {
	dir := args[0]
	fail := func(err error) int { fmt.Fprintln(os.Stderr, err); return 1 }
	if err := durable.RemoveTemps(dir); err != nil {
		return fail(err)
	}
	gen := 0
	if b, err := os.ReadFile(filepath.Join(dir, stateFile)); err == nil {
		if gen, err = parseGen(b); err != nil {
			return fail(err)
		}
	}
	j, recs, err := durable.OpenJournal(filepath.Join(dir, journalFile), nil)
	if err != nil {
		return fail(err)
	}
	k := len(recs)
	cdir := filepath.Join(dir, cohortDir)
	if err := durable.MkdirAll(cdir, 0o700); err != nil {
		return fail(err)
	}
	c, err := openCohort(cdir)
	if err != nil {
		return fail(err)
	}
	os.Stdout.WriteString("ready\n")
	for i := 0; ; i++ {
		gen++
		if err := durable.WriteFile(filepath.Join(dir, stateFile), stateContent(gen), 0o600); err != nil {
			return fail(err)
		}
		fmt.Fprintf(os.Stdout, "w %d\n", gen)
		var batch [][]byte
		for range 1 + i%3 {
			k++
			batch = append(batch, journalRecord(k))
		}
		if err := j.Append(batch...); err != nil {
			return fail(err)
		}
		fmt.Fprintf(os.Stdout, "j %d\n", k)
		c++
		if err := publishCohort(cdir, c); err != nil {
			return fail(err)
		}
		fmt.Fprintf(os.Stdout, "c %d\n", c)
	}
}

func parseGen(b []byte) (int, error) {
	head, body, ok := bytes.Cut(b, []byte{'\n'})
	g, err := strconv.Atoi(strings.TrimPrefix(string(head), "gen="))
	if !ok || err != nil || !bytes.Equal(b, stateContent(g)) {
		return 0, fmt.Errorf("state file torn or mixed: %d bytes, head %.20q, body %d bytes", len(b), head, len(body))
	}
	return g, nil
}

// acks collects the child's output; progress gets a token whenever a
// line arrives (buffered 1, so the child's writes never block).
type acks struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	progress chan struct{}
}

func (a *acks) Write(p []byte) (int, error) {
	a.mu.Lock()
	a.buf.Write(p)
	a.mu.Unlock()
	select {
	case a.progress <- struct{}{}:
	default:
	}
	return len(p), nil
}

// lines returns how many complete lines the child printed.
func (a *acks) lines() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return bytes.Count(a.buf.Bytes(), []byte{'\n'})
}

// await waits until the child printed n lines.
func (a *acks) await(n int, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for a.lines() < n {
		select {
		case <-a.progress:
		case <-deadline:
			return false
		}
	}
	return true
}

// last returns the last acknowledged generation, record number and cohort.
func (a *acks) last() (w, j, c int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, line := range strings.Split(a.buf.String(), "\n") {
		kind, num, _ := strings.Cut(line, " ")
		n, err := strconv.Atoi(num)
		switch {
		case err != nil: // "ready", or a line cut by the kill
		case kind == "w":
			w = n
		case kind == "j":
			j = n
		case kind == "c":
			c = n
		}
	}
	return w, j, c
}

// TestKill: a writer killed with SIGKILL at random instants loses no
// acknowledged write, append or cohort, and leaves no torn or mixed file
// and no half-published cohort.
func TestKill(t *testing.T) {
	trials := 50 // about 0.1–0.3 s each
	if testing.Short() {
		trials = 8
	}
	dir := t.TempDir()
	start := time.Now()
	var done, torn, inflightW, inflightJ, inflightC int
	lastW, lastJ, lastC := 0, 0, 0
	for done < trials {
		// The kill instant: after "ready" and 0–4 acknowledgements, plus
		// 0–10 ms, so kills land in every step of both writes.
		a := killDuring(t, "writer", dir, 5, done)
		w, j, c := a.last()
		w, j, c = max(w, lastW), max(j, lastJ), max(c, lastC)

		b, err := os.ReadFile(filepath.Join(dir, stateFile))
		if err != nil && w > 0 {
			t.Fatalf("trial %d: state missing after ack of gen %d: %v", done, w, err)
		}
		if err == nil {
			g, err := parseGen(b)
			if err != nil {
				t.Fatalf("trial %d: %v", done, err)
			}
			if g < w || g > w+1 {
				t.Fatalf("trial %d: state holds gen %d, acknowledged %d", done, g, w)
			}
			inflightW += g - w
			w = g
		}

		jn, recs, err := durable.OpenJournal(filepath.Join(dir, journalFile), nil)
		if err != nil {
			t.Fatalf("trial %d: %v", done, err)
		}
		if jn.TornBytes() > 0 {
			torn++
		}
		jn.Close()
		for i, r := range recs {
			if want := journalRecord(i + 1); !bytes.Equal(r, want) {
				t.Fatalf("trial %d: record %d is %.40q…, want %.40q…", done, i+1, r, want)
			}
		}
		if len(recs) < j {
			t.Fatalf("trial %d: journal holds %d records, acknowledged %d", done, len(recs), j)
		}
		inflightJ += len(recs) - j
		gotC, err := checkCohort(filepath.Join(dir, cohortDir))
		if err != nil {
			t.Fatalf("trial %d: %v", done, err)
		}
		if gotC < c || gotC > c+1 {
			t.Fatalf("trial %d: cohort %d published, acknowledged %d", done, gotC, c)
		}
		inflightC += gotC - c
		if temps := countTemps(t, dir) + countTemps(t, filepath.Join(dir, cohortDir)); temps > 1 {
			t.Fatalf("trial %d: %d temporary files left by one kill", done, temps)
		}
		lastW, lastJ, lastC = w, len(recs), gotC
		done++
	}
	t.Logf("%d SIGKILL trials in %v: 0 lost acknowledged writes; final state gen %d, %d records, cohort %d; writes done but unacknowledged at the kill: %d state, %d records, %d cohorts; torn journal tails cut: %d",
		done, time.Since(start).Round(time.Millisecond), lastW, lastJ, lastC, inflightW, inflightJ, inflightC, torn)
	// A kill leaves at most one temporary file, which RemoveTemps clears.
	if err := durable.RemoveTemps(dir); err != nil {
		t.Fatal(err)
	}
	if got, want := dirNames(t, dir), []string{cohortDir, journalFile, stateFile}; !slices.Equal(got, want) {
		t.Errorf("dir holds %q, want %q", got, want)
	}
}

// countTemps counts the names in dir shaped like WriteFile's temporary
// files.
func countTemps(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	for _, name := range dirNames(t, dir) {
		if strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-") {
			n++
		}
	}
	return n
}

// killDuring starts the child role in dir and SIGKILLs it after "ready" and
// 0 to n-1 acknowledgements, plus 0–10 ms; it fails the test when the child
// makes no progress within a minute (hung, not slow) or ends by itself. It
// returns what the child acknowledged.
func killDuring(t *testing.T, role, dir string, n, trial int) *acks {
	t.Helper()
	a := &acks{progress: make(chan struct{}, 1)}
	var stderr bytes.Buffer
	var cmd *exec.Cmd
	for attempt := 1; ; attempt++ {
		cmd = procs.Command(t, role, dir)
		cmd.Stdout = a
		cmd.Stderr = &stderr
		err := cmd.Start()
		if err == nil {
			break
		}
		// Wine's process creation fails now and then under load
		// ("Internal error"): a child that never started wrote nothing,
		// so its start is tried again, a few times.
		if attempt == 3 {
			t.Fatalf("trial %d: start %s: %v", trial, role, err)
		}
		t.Logf("trial %d: start %s (attempt %d): %v; trying again", trial, role, attempt, err)
		time.Sleep(100 * time.Millisecond)
	}
	if !a.await(1+rand.IntN(n), time.Minute) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("trial %d: %s made no progress: %s", trial, role, stderr.String())
	}
	time.Sleep(time.Duration(rand.IntN(10_000)) * time.Microsecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || stderr.Len() > 0 {
		t.Fatalf("trial %d: %s ended by itself (%v): %s", trial, role, err, stderr.String())
	}
	return a
}
