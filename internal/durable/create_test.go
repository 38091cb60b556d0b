package durable_test

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/pikit-dev/pikit/internal/ostest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/durable"
)

// TestCreate: the content written in pieces is at path, with perm exactly,
// once Commit returns nil, and not before; nothing else is left in the
// directory; Abort after Commit does nothing.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "archive.zip")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := durable.Create(p, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	for _, piece := range []string{"one ", "two ", "three"} {
		if _, err := w.Write([]byte(piece)); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Fatalf("before Commit path holds %q, want the old content", got)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after Commit: %v", err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "one two three" {
		t.Fatalf("path holds %q (%v)", got, err)
	}
	if want := ostest.Perm(0o640, false); func() bool { fi, _ := os.Stat(p); return fi.Mode().Perm() != want }() {
		t.Errorf("perm of %s, want %v", p, want)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"archive.zip"}) {
		t.Errorf("dir holds %q", names)
	}
	if _, err := w.Write([]byte("late")); err == nil {
		t.Error("Write after Commit succeeded")
	}
	if err := w.Commit(); err == nil {
		t.Error("a second Commit succeeded")
	}
}

// TestCreate_Abort: an aborted write leaves path as it was and no
// temporary file.
func TestCreate_Abort(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "archive.json")
	w, err := durable.Create(p, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("partial")); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("second Abort: %v", err)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("dir holds %q after Abort", names)
	}
	if _, err := durable.Create(filepath.Join(dir, "missing", "x"), 0o600); !errors.As(err, new(*durable.Error)) {
		t.Errorf("Create in a missing dir: %v, want a *durable.Error", err)
	}
}

// streamFile is what the streamer child replaces, generation g at a time.
const streamFile = "archive.bin"

// streamContent is generation g's content: "gen=g\n" and a body of one
// letter, 64–320 KiB, so a kill lands inside its stream of 4 KiB writes.
func streamContent(g int) []byte {
	n := 64<<10 + g*7919%(256<<10)
	return append([]byte(fmt.Sprintf("gen=%d\n", g)), bytes.Repeat([]byte{byte('a' + g%26)}, n)...)
}

func parseStream(b []byte) (int, error) {
	head, _, _ := bytes.Cut(b, []byte{'\n'})
	g, err := strconv.Atoi(strings.TrimPrefix(string(head), "gen="))
	if err != nil || !bytes.Equal(b, streamContent(g)) {
		return 0, fmt.Errorf("streamed file torn or mixed: %d bytes, head %.20q", len(b), head)
	}
	return g, nil
}

// streamerRole, in a loop, replaces streamFile with the next generation
// through durable.Create in 4 KiB writes and prints "s g" once Commit
// returned (acknowledged). It resumes from the file's generation.
func streamerRole(args []string) int {
	dir := args[0]
	fail := func(err error) int { fmt.Fprintln(os.Stderr, err); return 1 }
	if err := durable.RemoveTemps(dir); err != nil {
		return fail(err)
	}
	gen := 0
	if b, err := os.ReadFile(filepath.Join(dir, streamFile)); err == nil {
		if gen, err = parseStream(b); err != nil {
			return fail(err)
		}
	}
	os.Stdout.WriteString("ready\n")
	for {
		gen++
		w, err := durable.Create(filepath.Join(dir, streamFile), 0o600)
		if err != nil {
			return fail(err)
		}
		data := streamContent(gen)
		for len(data) > 0 {
			k := min(len(data), 4<<10)
			if _, err := w.Write(data[:k]); err != nil {
				return fail(err)
			}
			data = data[k:]
		}
		if err := w.Commit(); err != nil {
			return fail(err)
		}
		fmt.Fprintf(os.Stdout, "s %d\n", gen)
	}
}

// TestKill_Create: a streaming writer killed with SIGKILL at random
// instants loses no acknowledged file, never leaves a torn or mixed one,
// and leaves at most one temporary file, which RemoveTemps clears.
func TestKill_Create(t *testing.T) {
	trials := 30
	if testing.Short() {
		trials = 6
	}
	dir := t.TempDir()
	last, inflight := 0, 0
	for trial := range trials {
		a := killDuring(t, "streamer", dir, 4, trial)
		acked := max(last, a.lastStream())
		b, err := os.ReadFile(filepath.Join(dir, streamFile))
		if err != nil {
			if acked > 0 {
				t.Fatalf("trial %d: file missing after ack of gen %d: %v", trial, acked, err)
			}
			continue
		}
		g, err := parseStream(b)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if g < acked || g > acked+1 {
			t.Fatalf("trial %d: file holds gen %d, acknowledged %d", trial, g, acked)
		}
		inflight += g - acked
		if temps := countTemps(t, dir); temps > 1 {
			t.Fatalf("trial %d: %d temporary files left by one kill", trial, temps)
		}
		last = g
	}
	t.Logf("%d SIGKILL trials: 0 lost acknowledged files; final gen %d; committed but unacknowledged at the kill: %d", trials, last, inflight)
	if err := durable.RemoveTemps(dir); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{streamFile}) {
		t.Errorf("dir holds %q, want only %q", got, streamFile)
	}
}

// lastStream returns the last generation the streamer acknowledged.
func (a *acks) lastStream() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	g := 0
	for _, line := range strings.Split(a.buf.String(), "\n") {
		if num, ok := strings.CutPrefix(line, "s "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				g = n
			}
		}
	}
	return g
}
