package release_test

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modroot"
)

// maxTarball is the goal for one per-platform tarball, compressed.
const maxTarball = 15 << 20

// TestRelease_TarballSize: each per-platform tarball built here (the Linux
// ones; the release builds all five) is at most 15 MB compressed. The log
// says what dominates: the stripped binary's sections, and the largest
// packages by code and data (from the same build with symbols), grouped
// as this module, the Go runtime and standard library, and third-party
// modules.
func TestRelease_TarballSize(t *testing.T) {
	t.Parallel()
	res := newRelease(t, "0.1.0-test.1", "", linuxTargets...)
	for _, tg := range linuxTargets {
		tb := tarball(t, res, "@pikit/cli-"+tg.Platform())
		st, err := os.Stat(res.Binaries[tg])
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: tarball %.2f MB compressed, binary %.2f MB (goal: tarball <= %d MB)", tb.Package, mb(tb.Size), mb(st.Size()), maxTarball>>20)
		if tb.Size > maxTarball {
			t.Errorf("%s: tarball %d bytes > %d", tb.Package, tb.Size, maxTarball)
		}
	}
	stripped := res.Binaries[linuxTargets[0]]
	f, err := elf.Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var secs []string
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOBITS && s.Flags&elf.SHF_ALLOC != 0 && s.Size > 100<<10 {
			secs = append(secs, fmt.Sprintf("%s %.2f MB", s.Name, mb(int64(s.Size))))
		}
	}
	t.Logf("linux/amd64 binary sections: %s", strings.Join(secs, ", "))

	// The same build with symbols: sizes by package.
	root, err := modroot.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "pikit")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-o", exe, "./cmd/pikit")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=", "GOAMD64=v1", "GOEXPERIMENT=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	full, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	syms, err := full.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	byPkg := map[string]int64{}
	groups := map[string]int64{}
	var total int64
	for _, s := range syms {
		if int(s.Section) <= 0 || int(s.Section) >= len(full.Sections) || full.Sections[s.Section].Type == elf.SHT_NOBITS {
			continue
		}
		pkg := symbolPackage(s.Name)
		byPkg[pkg] += int64(s.Size)
		groups[packageGroup(pkg)] += int64(s.Size)
		total += int64(s.Size)
	}
	pkgs := make([]string, 0, len(byPkg))
	for p := range byPkg {
		pkgs = append(pkgs, p)
	}
	sort.Slice(pkgs, func(i, j int) bool { return byPkg[pkgs[i]] > byPkg[pkgs[j]] })
	var top []string
	for _, p := range pkgs[:min(12, len(pkgs))] {
		top = append(top, fmt.Sprintf("%s %.2f MB", p, mb(byPkg[p])))
	}
	t.Logf("symbols %.2f MB: this module %.2f MB, Go runtime and standard library %.2f MB, third-party modules %.2f MB, compiler metadata %.2f MB",
		mb(total), mb(groups["module"]), mb(groups["std"]), mb(groups["third-party"]), mb(groups["metadata"]))
	t.Logf("largest packages: %s", strings.Join(top, ", "))
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// symbolPackage is the import path a Go symbol belongs to:
// "github.com/a/b.F" → "github.com/a/b", "go:func.*" → "go:", "type:…" → "type:".
func symbolPackage(name string) string {
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i] // generic instantiations carry other paths
	}
	for _, meta := range []string{"go:", "type:"} {
		if strings.HasPrefix(name, meta) {
			return meta
		}
	}
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}

// packageGroup sorts an import path into module, std, third-party or
// metadata.
func packageGroup(pkg string) string {
	switch {
	case pkg == "go:" || pkg == "type:":
		return "metadata"
	case strings.HasPrefix(pkg, "github.com/pikit-dev/pikit"):
		return "module"
	case strings.Contains(strings.SplitN(pkg, "/", 2)[0], ".") && !strings.HasPrefix(pkg, "vendor/"):
		return "third-party"
	}
	return "std"
}
