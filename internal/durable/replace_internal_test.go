package durable

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
)

var errFakeBusy = errors.New("fake: target held open")

// busyRenamer fails the first n renames with errFakeBusy (as Windows fails
// a rename over a file another process holds open), then renames; it
// records the backoff.
func busyRenamer(n int, slept *[]time.Duration) renamer {
	tries := 0
	return renamer{
		rename: func(o, p string) error {
			if tries++; tries <= n {
				return errFakeBusy
			}
			return os.Rename(o, p)
		},
		busy:  func(err error) bool { return errors.Is(err, errFakeBusy) },
		sleep: func(d time.Duration) { *slept = append(*slept, d) },
	}
}

func TestWriteFile_RetriesBusyRename(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.json")
	var slept []time.Duration
	if err := writeFile(p, []byte("new"), 0o600, nil, fileOps{open: openFile, rename: busyRenamer(3, &slept)}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "new" {
		t.Fatalf("content %q, %v", b, err)
	}
	if want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond}; !slices.Equal(slept, want) {
		t.Errorf("backoff %v, want %v", slept, want)
	}
}

func TestWriteFile_BusyRenameGivesUp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	var slept []time.Duration
	err := writeFile(p, []byte("new"), 0o600, nil, fileOps{open: openFile, rename: busyRenamer(1000, &slept)})
	var de *Error
	if !errors.As(err, &de) || de.Op != "rename" || !errors.Is(err, errFakeBusy) {
		t.Fatalf("err = %v, want a rename *Error wrapping the busy cause", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "state.json") || strings.Contains(msg, dir) || !strings.Contains(msg, "tries") {
		t.Errorf("message %q: want the base name and the tries, no absolute path", msg)
	}
	var total time.Duration
	for _, d := range slept {
		total += d
	}
	if total < renameBudget || total > renameBudget+renameMaxDelay || len(slept) > 20 {
		t.Errorf("waited %v over %d retries, want about %v", total, len(slept), renameBudget)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("target %q, want the old content", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("leftovers in the dir: %v", entries)
	}
}

func TestWriteFile_OtherRenameErrorsAreNotRetried(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.json")
	tries := 0
	boom := errors.New("boom")
	r := renamer{rename: func(string, string) error { tries++; return boom }, busy: func(error) bool { return false }}
	if err := writeFile(p, []byte("x"), 0o600, nil, fileOps{open: openFile, rename: r}); !errors.Is(err, boom) || tries != 1 {
		t.Fatalf("err %v after %d tries, want boom after 1", err, tries)
	}
}

// TestWriteFile_OverAnOpenFile renames over a file another handle holds
// open, as a reader beside the writer does: on Unix the first rename
// succeeds; on Windows it is busy until the holder closes (closed here on
// the first busy answer), and the retry succeeds.
func TestWriteFile_OverAnOpenFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	r := renamer{rename: func(o, n string) error {
		err := os.Rename(o, n)
		if platform.IsRenameBusy(err) {
			held.Close()
		}
		return err
	}}
	if err := writeFile(p, []byte("new"), 0o600, nil, fileOps{open: openFile, rename: r}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "new" {
		t.Fatalf("content %q, %v", b, err)
	}
}
