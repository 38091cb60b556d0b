package stateflow

import (
	"fmt"
	"strings"
	"testing"
)

// largeView is the view of the store benchmarks' large store: historyLimit
// 100, about 100 KB of CWD contract, full CWD and Session tails.
func largeView(tb testing.TB) *View {
	tb.Helper()
	const limit = 100
	o := Boundary{ID: "o"}
	v := &View{Lineage: []Boundary{o}}
	for i := range v.Streams {
		v.Streams[i] = NewStream(o)
	}
	var sb strings.Builder
	sb.WriteString(`{"contract":{`)
	for i := range 560 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `"decision_%03d":{"text":"%s","tags":["a","b"]}`, i, strings.Repeat("x", 200))
	}
	sb.WriteString(`}}`)
	first := map[string]map[string]any{"cwd": obj(tb, sb.String()), "session": obj(tb, `{"working":{"seed":1}}`)}
	if _, err := v.Advance("t0", first, limit); err != nil {
		tb.Fatal(err)
	}
	for i := range 110 {
		p := map[string]map[string]any{
			"session": obj(tb, fmt.Sprintf(`{"working":{"step":%d}}`, i)),
			"cwd":     obj(tb, fmt.Sprintf(`{"contract":{"decision_%03d":{"text":"changed %d"}}}`, i%560, i)),
		}
		if _, err := v.Advance(fmt.Sprintf("t%d", i+1), p, limit); err != nil {
			tb.Fatal(err)
		}
	}
	if err := v.Validate(BuiltinRoots(), limit); err != nil {
		tb.Fatal(err)
	}
	return v
}

// redecoded is what a store hands out after another process patched the
// Session scope of prev: a view whose unchanged streams are prev's very
// streams, whose Session tail keeps prev's record maps (shifted by the
// fold) plus the new record, and whose Session checkpoint is freshly
// decoded (a deep copy).
func redecoded(tb testing.TB, prev *View, id string, patch map[string]any) *View {
	return redecodedScope(tb, prev, id, "session", patch)
}

// redecodedScope is redecoded with scope patched.
func redecodedScope(tb testing.TB, prev *View, id, scope string, patch map[string]any) *View {
	tb.Helper()
	v := prev.ReadClone()
	if _, err := v.Advance(id, map[string]map[string]any{scope: patch}, 100); err != nil {
		tb.Fatal(err)
	}
	s := v.Streams[scopeIndex(scope)]
	s.Checkpoint.State = CloneObject(s.Checkpoint.State)
	n := len(s.Patches) - 1
	s.Patches[n].Patch = CloneObject(s.Patches[n].Patch)
	v.cache.Store(nil)
	return v
}

// BenchmarkValidateAfterCWDChange: ValidateReusing after another writer
// patched the CWD scope, whose checkpoint holds the 100 KB contract.
func BenchmarkValidateAfterCWDChange(b *testing.B) {
	roots := BuiltinRoots()
	prev := largeView(b)
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		v := redecodedScope(b, prev, fmt.Sprintf("b%d", i), "cwd", map[string]any{"contract": map[string]any{"decision_001": map[string]any{"text": fmt.Sprint(i)}}})
		b.StartTimer()
		if err := v.ValidateReusing(roots, 100, prev); err != nil {
			b.Fatal(err)
		}
		prev = v
	}
}

// BenchmarkHeadAfterChange: the package side of the store's
// BenchmarkRead100KB/after_change*/{context_head,read_state_effective}:
// validate a re-decoded view against the previous one (validate), then
// build its Active head (head) or read the effective state (read).
func BenchmarkHeadAfterChange(b *testing.B) {
	roots := BuiltinRoots()
	args, err := DecodeReadArgs([]byte(`{"path":"effective"}`))
	if err != nil {
		b.Fatal(err)
	}
	for _, part := range []string{"validate", "head", "read"} {
		b.Run(part, func(b *testing.B) {
			prev := largeView(b)
			if _, err := ActiveHead(HeadInput{Roots: roots, View: prev, Specification: "spec", ProjectionID: "p"}); err != nil {
				b.Fatal(err)
			}
			i := 0 // no ReportAllocs: it reads MemStats at every timer stop
			for b.Loop() {
				b.StopTimer()
				i++
				v := redecoded(b, prev, fmt.Sprintf("b%d", i), map[string]any{"working": map[string]any{"bench": float64(i)}})
				if part == "validate" {
					b.StartTimer()
				}
				if err := v.ValidateReusing(roots, 100, prev); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if part == "validate" {
					b.StopTimer()
				}
				if part == "read" {
					if _, err := (&Reader{Roots: roots, View: v, Limit: 100}).Read(args); err != nil {
						b.Fatal(err)
					}
				} else if _, err := ActiveHead(HeadInput{Roots: roots, View: v, Specification: "spec", ProjectionID: "p"}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				prev = v
			}
		})
	}
}
