package store

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
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
	if _, err := os.Stat(filepath.Join(root, "checkpoint.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("cancelled patch wrote the store")
	}
	data, _ := os.ReadFile(filepath.Join(root, fileLock))
	if string(data) != strconv.Itoa(holder.Process.Pid)+"\n" {
		t.Fatalf("live holder's lock was stolen: %q", data)
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

func TestLock_unavailableAndRecursive(t *testing.T) {
	s := newTestStore(t, "")
	root := s.Layout().Root
	os.MkdirAll(root, 0o700)
	lock := filepath.Join(root, fileLock)
	os.WriteFile(lock, []byte("not a pid\n"), 0o600)
	_, err := s.Read(context.Background())
	if want := `State Flow publication lock is unavailable at "` + lock + `"`; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	os.Remove(lock)
	err = s.withLock(context.Background(), func(ctx context.Context) error {
		return s.withLock(ctx, func(context.Context) error { return nil })
	})
	if want := `Recursive State Flow publication lock at "` + lock + `"`; err == nil || err.Error() != want {
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
	want := `State Flow publication lock changed during transaction at "` + filepath.Join(root, fileLock) + `"; current owner preserved`
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
