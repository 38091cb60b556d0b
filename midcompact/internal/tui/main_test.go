package tui

import (
	"os"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/leakcheck"
	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/sessiontest"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// snapshotOf is the snapshot of f's branch to leaf ("" = last entry).
func snapshotOf(t testing.TB, f *pisession.File, leaf string) *midcompact.Snapshot {
	t.Helper()
	s, err := midcompact.NewSnapshot(sessiontest.Branch(t, f, leaf), 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// pairs is an assistant prefix then n user/assistant pairs.
func pairs(t *testing.T, n int) *midcompact.Snapshot {
	return snapshotOf(t, sessiontest.Read(t, sessiontest.PairLines(n)...), "")
}

// TestViewGroups_InventoryNames: the TUI names a group as the tool's
// inventory does (moved from midcompact's TestReviewState).
func TestViewGroups_InventoryNames(t *testing.T) {
	snap := pairs(t, 1)
	inv := midcompact.FormatInventory(snap, &midcompact.Transaction{}, nil, "")
	for _, g := range viewGroups(snap) {
		if !strings.Contains(inv, g.ref+" ") || g.ref == "g0000" {
			t.Errorf("TUI group %s not the inventory's", g.ref)
		}
	}
}
