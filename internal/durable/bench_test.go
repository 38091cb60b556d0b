package durable_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pikit-dev/pikit/internal/durable"
)

// BenchmarkWriteFile compares WriteFile (temp, write, fsync, close,
// rename, fsync dir) with the bare baseline os.WriteFile plus one fsync of
// the file, in one run, for a 4 KiB file; the ratio is the cost of the
// atomic, durable replacement.
func BenchmarkWriteFile(b *testing.B) {
	data := make([]byte, 4<<10)
	b.Run("durable", func(b *testing.B) {
		p := filepath.Join(b.TempDir(), "f")
		b.ReportAllocs()
		for b.Loop() {
			if err := durable.WriteFile(p, data, 0o600); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline", func(b *testing.B) {
		p := filepath.Join(b.TempDir(), "f")
		b.ReportAllocs()
		for b.Loop() {
			if err := os.WriteFile(p, data, 0o600); err != nil {
				b.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
}

// BenchmarkJournal_Append measures one fsynced append of a 200-byte record.
func BenchmarkJournal_Append(b *testing.B) {
	j, _, err := durable.OpenJournal(filepath.Join(b.TempDir(), "j"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	rec := []byte(`{"seq":1,"type":"note","payload":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := j.Append(rec); err != nil {
			b.Fatal(err)
		}
	}
}
