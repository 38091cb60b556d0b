package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// nestingLevels are the document depths measured (the patch_state
// argument's nesting, its three wrapper levels included): the seed of the
// linear-cost claim at 250 and 500, the depth limit itself at 1000, and
// 2000, 4000, 8000 beyond it.
var nestingLevels = []int{250, 500, 1000, 2000, 4000, 8000}

// deepArgs is a patch_state argument nesting depth levels in all: a chain
// {"a":{"a":…leaf…}} under cwd.working.d.
func deepArgs(depth int, leaf int) []byte {
	n := depth - 3
	return []byte(`{"cwd":{"working":{"d":` + strings.Repeat(`{"a":`, n) + fmt.Sprint(leaf) + strings.Repeat(`}`, n) + `}}}`)
}

// flatArgs is the baseline of deepArgs(depth, …): as many members, about
// as many bytes, three levels deep.
func flatArgs(depth int, leaf int) []byte {
	var sb strings.Builder
	sb.WriteString(`{"cwd":{"working":{"d":{`)
	for i := range depth - 3 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"%x":%d`, i, leaf)
	}
	sb.WriteString(`}}}}`)
	return []byte(sb.String())
}

// BenchmarkPatchState_Nesting measures patch_state on a value nested
// `levels` deep against its in-run baseline, a flat object with as many
// members (op/base: constant when the cost is linear in the document's
// size). Each iteration changes the leaf, so every call publishes. A
// document deeper than sf.MaxDepth is refused (metric refused=1); the
// refusal is what is measured then. small_after then measures a small
// patch to a store that holds the deep value, against the same patch to a
// store that holds the flat one.
func BenchmarkPatchState_Nesting(b *testing.B) {
	ctx := context.Background()
	newStore := func(b *testing.B) *Store {
		l, err := NewLayout(filepath.Join(benchDir(b), "state-flow"), "/home/u/proj", "")
		if err != nil {
			b.Fatal(err)
		}
		return Open(l, DefaultOptions())
	}
	patch := func(b *testing.B, s *Store, raw []byte) (refused bool) {
		_, err := s.PatchState(ctx, raw, nil)
		if errors.Is(err, sf.ErrTooDeep) {
			return true
		}
		if err != nil {
			b.Fatal(err)
		}
		return false
	}
	for _, levels := range nestingLevels {
		b.Run(fmt.Sprintf("levels=%d", levels), func(b *testing.B) {
			deep, flat := newStore(b), newStore(b)
			i := 0
			refused := false
			var ab, ao allocs
			interleaved(b, nil, ab.of(func() { patch(b, flat, flatArgs(levels, i)) }), ao.of(func() {
				refused = patch(b, deep, deepArgs(levels, i))
				i++
			}))
			ab.report(b, "base")
			ao.report(b, "op")
			b.ReportMetric(boolMetric(refused), "refused")
		})
		b.Run(fmt.Sprintf("levels=%d/small_after", levels), func(b *testing.B) {
			deep, flat := newStore(b), newStore(b)
			refused := patch(b, deep, deepArgs(levels, 0))
			patch(b, flat, flatArgs(levels, 0))
			i := 0
			small := func(s *Store) {
				patch(b, s, fmt.Appendf(nil, `{"cwd":{"contract":{"step":%d}}}`, i))
			}
			var ab, ao allocs
			interleaved(b, nil, ab.of(func() { small(flat) }), ao.of(func() { small(deep); i++ }))
			ab.report(b, "base")
			ao.report(b, "op")
			b.ReportMetric(boolMetric(refused), "refused")
		})
	}
}

// allocs sums the bytes allocated by the calls of one function.
type allocs struct {
	bytes uint64
	n     int
}

// of wraps f to count what it allocates (runtime.MemStats.TotalAlloc).
func (a *allocs) of(f func()) func() {
	return func() {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		f()
		runtime.ReadMemStats(&m1)
		a.bytes += m1.TotalAlloc - m0.TotalAlloc
		a.n++
	}
}

// report adds the metric "<name>-B/op".
func (a *allocs) report(b *testing.B, name string) {
	if a.n > 0 {
		b.ReportMetric(float64(a.bytes)/float64(a.n), name+"-B/op")
	}
}

func boolMetric(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
