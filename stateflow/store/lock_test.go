package store

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
)

// startHolder runs a child that holds the store lock for hold.
func startHolder(t *testing.T, root string, hold time.Duration) *exec.Cmd {
	t.Helper()
	cmd := childCommand("holder", "STATEFLOW_ROOT="+root, "STATEFLOW_HOLD="+hold.String())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "held\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("holder: %q %v", line, err)
	}
	return cmd
}

func TestLock_waitsForLiveHolderAndCancels(t *testing.T) {
	s := newTestStore(t, "")
	root := s.Layout().Root
	holder := startHolder(t, root, time.Minute)
	defer func() { holder.Process.Kill(); holder.Wait() }()
	var waitedOn int
	s.lock.onWait = func(pid int) { waitedOn = pid }
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := s.Patch(ctx, mustArgs(t, `{"global":{"working":{"a":1}}}`), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's", err)
	}
	if waitedOn != holder.Process.Pid {
		t.Fatalf("reported holder %d, want %d", waitedOn, holder.Process.Pid)
	}
	if want := "held by PID " + strconv.Itoa(holder.Process.Pid) + ", which is running; retry once it has finished"; !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, does not say %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(root, "checkpoint.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("cancelled patch wrote the store")
	}
	data, _ := os.ReadFile(filepath.Join(root, fileLock))
	if string(data) != strconv.Itoa(holder.Process.Pid)+"\n" {
		t.Fatalf("live holder's lock was stolen: %q", data)
	}
}

// TestLock_liveHolderNeverReclaimed: a live pikit holder locks its open
// lock file, so even a lock that looks abandoned (its content replaced by
// a dead PID or garbage, an hour old) is not reclaimed while it lives.
func TestLock_liveHolderNeverReclaimed(t *testing.T) {
	for _, content := range []string{strconv.Itoa(reapedPID(t)) + "\n", "garbage"} {
		t.Run(strconv.Quote(content), func(t *testing.T) {
			s := newTestStore(t, "")
			s.lock.grace = 20 * time.Millisecond
			root := s.Layout().Root
			holder := startHolder(t, root, time.Minute)
			defer func() { holder.Process.Kill(); holder.Wait() }()
			lock := filepath.Join(root, fileLock)
			before, err := os.Lstat(lock)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(lock, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(content)
			f.Close()
			old := time.Now().Add(-time.Hour)
			os.Chtimes(lock, old, old)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if _, err := s.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want the context's", err)
			}
			after, err := os.Lstat(lock)
			if err != nil || !os.SameFile(before, after) {
				t.Fatalf("the live holder's lock was reclaimed (%v)", err)
			}
		})
	}
}

func TestLock_holderReleasesThenPatchProceeds(t *testing.T) {
	s := newTestStore(t, "")
	holder := startHolder(t, s.Layout().Root, 200*time.Millisecond)
	defer holder.Wait()
	if _, err := s.Patch(context.Background(), mustArgs(t, `{"global":{"working":{"a":1}}}`), nil); err != nil {
		t.Fatal(err)
	}
}

func TestLock_deadHolderRecovered(t *testing.T) {
	s := newTestStore(t, "")
	root := s.Layout().Root
	holder := startHolder(t, root, time.Minute)
	holder.Process.Kill()
	holder.Wait()
	os.WriteFile(filepath.Join(root, ".checkpoint.json.tmp-0123456789abcdef"), []byte("torn"), 0o600)
	if _, err := s.Patch(context.Background(), mustArgs(t, `{"global":{"working":{"a":1}}}`), nil); err != nil {
		t.Fatalf("dead holder not recovered: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, ".checkpoint.json.tmp-0123456789abcdef")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("stale temp file kept after recovery")
	}
}

// TestLock_abandonedReclaimedAfterGrace: an empty lock (a writer killed
// between open and write) and a malformed one are both waited for during
// the pending grace, untouched, and reclaimed after it; a dead holder's
// lock at once.
func TestLock_abandonedReclaimedAfterGrace(t *testing.T) {
	const grace = 150 * time.Millisecond
	for _, content := range []string{"", "garbage", "12", "not a pid\n", "0\n", "-4\n", "+4\n", "007\n", "4\n\n", "99999999999999999999999\n"} {
		t.Run(strconv.Quote(content), func(t *testing.T) {
			s := newTestStore(t, "")
			root := s.Layout().Root
			os.MkdirAll(root, 0o700)
			lock := filepath.Join(root, fileLock)
			os.WriteFile(lock, []byte(content), 0o600)
			// Within the grace (an hour here, so that no slow file system,
			// such as Wine's, outlasts it): the waiter only waits, and
			// leaves the file.
			s.lock.grace = time.Hour
			ctx, cancel := context.WithTimeout(context.Background(), grace/3)
			_, err := s.Read(ctx)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("within the grace: err = %v, want the context's", err)
			}
			if got, err := os.ReadFile(lock); err != nil || string(got) != content {
				t.Fatalf("within the grace the lock became %q (%v)", got, err)
			}
			// Past the grace: reclaimed, and the read goes on.
			s.lock.grace = grace
			start := time.Now()
			if _, err := s.Read(context.Background()); err != nil {
				t.Fatalf("past the grace: %v", err)
			}
			if d := time.Since(start); d < grace {
				t.Fatalf("reclaimed after %v, before the grace of %v", d, grace)
			}
			if _, err := os.Lstat(lock); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("lock left after the read: %v", err)
			}
		})
	}
	t.Run("dead PID", func(t *testing.T) {
		s := newTestStore(t, "")
		s.lock.grace = time.Hour // a dead holder needs no grace
		root := s.Layout().Root
		os.MkdirAll(root, 0o700)
		os.WriteFile(filepath.Join(root, fileLock), []byte(strconv.Itoa(reapedPID(t))+"\n"), 0o600)
		if _, err := s.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLock_unavailableSaysWhatAndWhatToDo: what cannot be a lock file is
// refused with upstream's text, then what is there and what to do.
func TestLock_unavailableSaysWhatAndWhatToDo(t *testing.T) {
	const todo = "; remove it once no State Flow writer (Pi with State Flow, pikit stateflow) is running"
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, lock string)
		what  string
	}{
		{"directory", func(t *testing.T, lock string) { os.Mkdir(lock, 0o700) }, "it is a directory, not a lock file"},
		{"symlink", func(t *testing.T, lock string) {
			os.WriteFile(lock+".target", []byte("1\n"), 0o600)
			symlinkOrSkip(t, lock+".target", lock)
		}, "it is a symbolic link, not a lock file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t, "")
			root := s.Layout().Root
			os.MkdirAll(root, 0o700)
			lock := filepath.Join(root, fileLock)
			tc.plant(t, lock)
			_, err := s.Read(context.Background())
			want := "State Flow publication lock is unavailable at " + jsQuote(lock) + ": " + tc.what + todo
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant  %s", err, want)
			}
			if _, err := os.Lstat(lock); err != nil {
				t.Fatalf("the refused lock was removed: %v", err)
			}
		})
	}
}

func TestLock_recursive(t *testing.T) {
	s := newTestStore(t, "")
	lock := filepath.Join(s.Layout().Root, fileLock)
	err := s.withLock(context.Background(), func(ctx context.Context) error {
		return s.withLock(ctx, func(context.Context) error { return nil })
	})
	if want := "Recursive State Flow publication lock at " + jsQuote(lock); err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

// TestLock_busyNamesHolder: a caller that asked not to wait is refused
// with upstream's busy text, the holder's PID and what to do.
func TestLock_busyNamesHolder(t *testing.T) {
	s := newTestStore(t, "")
	root := s.Layout().Root
	holder := startHolder(t, root, time.Minute)
	defer func() { holder.Process.Kill(); holder.Wait() }()
	w := &lockWaiter{pid: os.Getpid(), noWait: true}
	_, err := w.acquire(context.Background(), root)
	want := "State Flow publication lock is busy at " + jsQuote(filepath.Join(root, fileLock)) + ": held by PID " + strconv.Itoa(holder.Process.Pid) +
		", which is running; retry once it has finished, or stop that process" +
		" (if PID " + strconv.Itoa(holder.Process.Pid) + " is not Pi with State Flow or pikit stateflow, its PID was reused: remove the lock file)"
	if !errors.Is(err, ErrLockBusy) || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func TestLock_releaseRefusesForeignOwner(t *testing.T) {
	s := newTestStore(t, "")
	root := s.Layout().Root
	err := s.withLock(context.Background(), func(context.Context) error {
		os.Remove(filepath.Join(root, fileLock))
		return os.WriteFile(filepath.Join(root, fileLock), []byte("1\n"), 0o600)
	})
	want := "State Flow publication lock changed during transaction at " + jsQuote(filepath.Join(root, fileLock)) + "; current owner preserved"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func TestRecovery_rollsForwardOrDiscards(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tamper  bool
		wantVal string
	}{{"roll forward", false, `{"value":2}`}, {"foreign change discards", true, `{"value":7}`}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t, "")
			ctx := context.Background()
			if _, err := s.Patch(ctx, mustArgs(t, `{"global":{"working":{"a":1}}}`), nil); err != nil {
				t.Fatal(err)
			}
			root := s.Layout().Root
			before := treeFiles(t, root)
			if _, err := s.Patch(ctx, mustArgs(t, `{"global":{"working":{"a":2}}}`), nil); err != nil {
				t.Fatal(err)
			}
			after := treeFiles(t, root)
			// Forge the instant after the journal commit, with only the
			// checkpoint written yet: restore the other pre-images.
			var writes []write
			basis := capture{}
			for _, f := range []string{"checkpoint.json", "patches.jsonl", "meta.json"} {
				writes = append(writes, write{Rel: f, Data: []byte(after[f])})
				_, had := before[f]
				basis[f] = file{Data: []byte(before[f]), Exists: had}
			}
			doc := journalDoc{Version: 1}
			for _, w := range writes {
				doc.Files = append(doc.Files, journalEntry{Path: w.Rel, Pre: basis[w.Rel].identity(), Post: identityOf(w.Data, true), Data: b64(w.Data)})
			}
			jb, _ := canonicalLine(doc)
			os.WriteFile(filepath.Join(root, fileJournal), jb, 0o600)
			os.WriteFile(filepath.Join(root, "patches.jsonl"), []byte(before["patches.jsonl"]), 0o600)
			os.WriteFile(filepath.Join(root, "meta.json"), []byte(before["meta.json"]), 0o600)
			if tc.tamper {
				os.WriteFile(filepath.Join(root, "checkpoint.json"), []byte(`{"working":{"a":7}}`+"\n"), 0o600)
				os.WriteFile(filepath.Join(root, "patches.jsonl"), nil, 0o600)
				os.WriteFile(filepath.Join(root, "meta.json"), []byte(replaceOnce(before["meta.json"], `"patches":[{`, `"patches":[],"x":[{`)), 0o600)
			}
			got := readFrom(t, filepath.Dir(root)+"/state-flow", "", "global.working.a")
			if tc.tamper {
				if _, err := os.Stat(filepath.Join(root, fileJournal)); !errors.Is(err, os.ErrNotExist) {
					t.Fatal("journal kept")
				}
				if b, _ := os.ReadFile(filepath.Join(root, "checkpoint.json")); string(b) != `{"working":{"a":7}}`+"\n" {
					t.Fatalf("foreign bytes clobbered: %s", b)
				}
				return
			}
			if got != tc.wantVal {
				t.Fatalf("read = %s, want %s", got, tc.wantVal)
			}
			if now := treeFiles(t, root); now["meta.json"] != after["meta.json"] || now["patches.jsonl"] != after["patches.jsonl"] {
				t.Fatal("roll forward did not restore the post-images")
			}
		})
	}
}

// TestLock_reclaimedFilesNamed: an acquisition names each file it removed
// as abandoned by identity and modification time, so the abandoned lock
// (modified an hour ago) and a stalled writer's new empty file (created,
// not locked, judged abandoned after the grace) are told apart even
// when the new file reuses the old one's identity.
func TestLock_reclaimedFilesNamed(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, fileLock)
	planted := plantLock(t, root, "garbage")
	w := &lockWaiter{pid: os.Getpid(), grace: 20 * time.Millisecond}
	h, err := w.acquire(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.reclaimed) != 1 || h.reclaimed[0].String() != planted {
		t.Fatalf("reclaimed %v, want exactly the planted %s", h.reclaimed, planted)
	}
	if err := w.release(h); err != nil {
		t.Fatal(err)
	}
	// A writer that created its file and went no further (stalled, or
	// killed before locking it): a new, empty file. Closed here, as a
	// stalled writer's open file keeps Windows from deleting it.
	f, err := platform.CreateExcl(p, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	h, err = w.acquire(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	defer w.release(h)
	want := removedLock{st.ID, st.MtimeNs}.String()
	if len(h.reclaimed) != 1 || h.reclaimed[0].String() != want || want == planted {
		t.Fatalf("reclaimed %v, want the stalled writer's %s (not the planted %s)", h.reclaimed, want, planted)
	}
}
