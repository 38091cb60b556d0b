package durable_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pikit-dev/pikit/internal/durable"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "board.json")
	for _, tc := range []struct {
		name string
		data string
		perm os.FileMode
	}{
		{"create", `{"a":1}`, 0o600},
		{"replace", `{"a":2}`, 0o600},
		{"perm exact", "#!/bin/sh\n", 0o700},
		{"empty", "", 0o644},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := durable.WriteFile(p, []byte(tc.data), tc.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p)
			if err != nil || string(got) != tc.data {
				t.Fatalf("content = %q, %v; want %q", got, err, tc.data)
			}
			fi, _ := os.Stat(p)
			if fi.Mode().Perm() != tc.perm {
				t.Errorf("perm = %v, want %v", fi.Mode().Perm(), tc.perm)
			}
			if names := dirNames(t, dir); !cmp.Equal(names, []string{"board.json"}) {
				t.Errorf("dir holds %v, want only board.json", names)
			}
		})
	}
}

func TestWriteFile_missingDir(t *testing.T) {
	err := durable.WriteFile(filepath.Join(t.TempDir(), "no", "x"), []byte("x"), 0o600)
	var de *durable.Error
	if !errors.As(err, &de) || de.Op != "create temp" || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want *Error{Op: create temp} wrapping ErrNotExist", err)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
