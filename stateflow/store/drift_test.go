package store

import (
	"context"
	"testing"
)

// TestSharedCWD_driftAdopted: two sessions share the CWD scope; each adopts
// the other's transitions as a fresh origin, independent fields survive, and
// the adopting session's earlier offsets become unavailable.
func TestSharedCWD_driftAdopted(t *testing.T) {
	ctx := context.Background()
	a := newTestStore(t, sessionKey(1))
	lb, _ := NewLayout(a.Layout().Root, a.Layout().CWD, sessionKey(2))
	b := Open(lb, DefaultOptions())
	for _, step := range []struct {
		s     *Store
		patch string
	}{
		{a, `{"cwd":{"contract":{"a":1}}}`},
		{a, `{"cwd":{"contract":{"a":2}}}`},
		{b, `{"cwd":{"contract":{"b":1}},"session":{"working":{"mine":"b"}}}`},
		{a, `{"cwd":{"contract":{"c":1}}}`},
	} {
		if _, err := step.s.Patch(ctx, mustArgs(t, step.patch), &PatchOptions{CreateSession: true}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := read(t, a, "cwd"), `{"value":{"contract":{"a":2,"b":1,"c":1}}}`; got != want {
		t.Fatalf("a cwd = %s, want %s", got, want)
	}
	if got, want := read(t, b, "effective"), `{"value":{"contract":{"a":2,"b":1,"c":1},"working":{"mine":"b"}}}`; got != want {
		t.Fatalf("b effective = %s, want %s", got, want)
	}
	// a adopted b's boundary before its last patch: one offset back is the
	// origin, two is before it.
	if got, want := read(t, a, "cwd[1]"), `{"value":{"contract":{"a":2,"b":1}}}`; got != want {
		t.Fatalf("a cwd[1] = %s, want %s", got, want)
	}
	if got := read(t, a, "cwd[2]"); got != "error: Requested history predates the proven temporal origin" {
		t.Fatalf("a cwd[2] = %s", got)
	}
	snap, err := a.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.View.Vector(); got != "g0c4s0" {
		t.Fatalf("vector %s", got)
	}
}
