package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
)

func TestLifecycle_modeResponseFork(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t, testSession)
	if err := s.SetMode(ctx, sf.ModeActive, true); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Mode != sf.ModeActive || snap.Step != 0 {
		t.Fatalf("mode %q step %d", snap.Mode, snap.Step)
	}
	if changed, err := s.AcceptResponse(ctx, ""); err != nil || changed {
		t.Fatalf("empty response over absent: changed %v err %v", changed, err)
	}
	if changed, err := s.AcceptResponse(ctx, "We chose Postgres."); err != nil || !changed {
		t.Fatalf("response: changed %v err %v", changed, err)
	}
	if _, err := s.Patch(ctx, mustArgs(t, `{"session":{"contract":{"db":"postgres"}}}`), nil); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "response"); got != `{"value":"We chose Postgres."}` {
		t.Fatalf("response read %s", got)
	}
	if got := read(t, s, "session.patches[1]"); got != `{"patch":{"response":"We chose Postgres."}}` {
		t.Fatalf("response record %s", got)
	}
	rt, _ := os.ReadFile(filepath.Join(s.Layout().Root, CWDKey(s.Layout().CWD), testSession, fileRuntime))
	if want := `"step":2`; !contains2(string(rt), want) || contains2(string(rt), `"bootstrap":true`) {
		t.Fatalf("runtime after run: %s", rt)
	}
	// Fork: the child sees the parent's current memory, fresh origin, step 0.
	childKey := "2026-01-02T03-04-05-678Z_0b6f1a2c-3d4e-4f50-8a6b-000000000099"
	cl, _ := NewLayout(s.Layout().Root, s.Layout().CWD, childKey)
	child := Open(cl, DefaultOptions())
	if err := child.Fork(ctx, testSession, sf.ModePassive); err != nil {
		t.Fatal(err)
	}
	if got := read(t, child, "contract.db"); got != `{"value":"postgres"}` {
		t.Fatalf("child memory %s", got)
	}
	if got := read(t, child, "effective[1]"); got != "error: Requested history predates the proven temporal origin" {
		t.Fatalf("child pre-origin read %s", got)
	}
	csnap, err := child.Read(ctx)
	if err != nil || csnap.Step != 0 || csnap.Mode != sf.ModePassive {
		t.Fatalf("child snapshot step %d mode %q err %v", csnap.Step, csnap.Mode, err)
	}
	if err := child.Fork(ctx, testSession, sf.ModePassive); !errors.Is(err, ErrChildOccupied) {
		t.Fatalf("occupied child: %v", err)
	}
	// Resume: a new Store on the same session attaches its current memory.
	again := Open(s.Layout(), DefaultOptions())
	if got := read(t, again, "contract.db"); got != `{"value":"postgres"}` {
		t.Fatalf("resume %s", got)
	}
}

func contains2(s, sub string) bool {
	return len(s) >= len(sub) && (s == sub || len(replaceOnce(s, sub, "")) != len(s))
}

func TestDiagnostics_invalidPatchLogged(t *testing.T) {
	dir := t.TempDir()
	l, _ := NewLayout(filepath.Join(dir, "state-flow"), "/home/u/proj", "")
	s := Open(l, &Options{HistoryLimit: 7, Diagnostics: NewDiagnostics(dir)})
	if _, err := s.PatchState(context.Background(), []byte(`{"cwd":{"response":{}}}`), nil); err == nil {
		t.Fatal("invalid patch accepted")
	}
	b, err := os.ReadFile(DiagnosticsPath(dir))
	if err != nil || !contains2(string(b), `"category":"invalid-patch","message":"Unknown State Flow patch key \"response\"`) {
		t.Fatalf("diagnostics: %s %v", b, err)
	}
}

func TestStore_headsAndStatus(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t, testSession)
	if _, err := s.Patch(ctx, mustArgs(t, `{"cwd":{"contract":{"db":"pg"}},"session":{"lazy":{"plan":[1]}}}`), &PatchOptions{CreateSession: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AcceptResponse(ctx, "done"); err != nil {
		t.Fatal(err)
	}
	head, err := s.ActiveHead(ctx, "next task", "p9")
	if err != nil {
		t.Fatal(err)
	}
	want := sf.PrefixActiveHead + `{"specification":"next task","state":{"contract":{"db":"pg"},"response":"done"},"lazy_navigation":{"available":true,"path":"effective.lazy","keys":{"plan":"array"}},"recent_transitions":{"cwd":[{"contract":{"db":"pg"}}],"session":[{"response":"done"}]}}`
	if head[0] != want || head[1] != "State Flow projection: p9" {
		t.Fatalf("head\n got  %s\n want %s", head[0], want)
	}
	passive, err := s.PassiveHead(ctx)
	if err != nil || passive != sf.PrefixPassiveHead+`{"state":{"contract":{"db":"pg"}},"lazy_navigation":{"available":true,"path":"effective.lazy","keys":{"plan":"array"}}}` {
		t.Fatalf("passive head %s %v", passive, err)
	}
	if st := s.Status(ctx, sf.ModeActive, nil); !contains2(st, "Revision: g0c1s2\n") || !contains2(st, "Step: 2\n") {
		t.Fatalf("status:\n%s", st)
	}
	os.WriteFile(filepath.Join(s.Layout().Root, "checkpoint.json"), []byte("{"), 0o600)
	os.WriteFile(filepath.Join(s.Layout().Root, "patches.jsonl"), nil, 0o600)
	if st := s.Status(ctx, sf.ModeActive, nil); !contains2(st, "State Flow active (blocked)\n") {
		t.Fatalf("blocked status:\n%s", st)
	}
}
