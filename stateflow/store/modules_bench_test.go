package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkPatchModule compares a durable module-root patch (unscoped
// {"x_acme_notes":…}: owner resolution, availability, Go-native validator,
// descriptor retained in meta v4) with the baseline in the same run: the
// same-sized plane patch to the same session scope.
func BenchmarkPatchModule(b *testing.B) {
	cat := &catalogs{}
	cat.Set(notesModule(1, false))
	l, err := NewLayout(filepath.Join(benchDir(b), "state-flow"), "/home/u/proj", testSession)
	if err != nil {
		b.Fatal(err)
	}
	s := Open(l, &Options{HistoryLimit: 7, Catalog: cat})
	ctx := context.Background()
	run := func(raw string) {
		if _, err := s.PatchState(ctx, []byte(raw), &PatchOptions{CreateSession: true}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 10 {
		run(fmt.Sprintf(`{"x_acme_notes":{"entries":["%d"]}}`, i))
		run(fmt.Sprintf(`{"session":{"working":{"entries":["%d"]}}}`, i))
	}
	i := 1 << 20
	b.Run("interleaved", func(b *testing.B) {
		interleaved(b, nil,
			func() { run(fmt.Sprintf(`{"session":{"working":{"entries":["%d"]}}}`, i)) },
			func() { run(fmt.Sprintf(`{"x_acme_notes":{"entries":["%d"]}}`, i)); i++ })
	})
}
