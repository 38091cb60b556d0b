package release_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modroot"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/internal/release"
)

// TestMain runs the tests (pitest.Run), then removes the releases they
// shared (releases).
func TestMain(m *testing.M) {
	code := pitest.Run(m)
	if err := releases.remove(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// testCommit is stamped into test releases.
const testCommit = "0123456789abcdef0123456789abcdef01234567"

var linuxTargets = []release.Target{{GOOS: "linux", GOARCH: "amd64"}, {GOOS: "linux", GOARCH: "arm64"}}

// releases holds the releases the tests of this binary built, one per
// version, scope and target list: building one costs a go build per target
// and an npm pack per package, and several tests ask for the same one.
// The tests only read a release's files (they publish, unpack and stat
// them; what they change is in their own temp dirs and Pi agent dirs), so
// sharing one proves what a release of their own would. TestMain removes
// them after the tests.
var releases sharedReleases

// sharedReleases is the releases built so far, under one temp dir made on
// first use.
type sharedReleases struct {
	mu   sync.Mutex
	dir  string
	byID map[string]*sharedRelease
}

// sharedRelease is one release: built once (by the first test to ask),
// then read by all.
type sharedRelease struct {
	once sync.Once
	res  *release.Result
	err  error
}

// get returns the release for version, scope and targets, building it into
// a new dir under s.dir the first time it is asked for.
func (s *sharedReleases) get(version, scope string, targets []release.Target) (*release.Result, error) {
	id := fmt.Sprintf("%s %q %v", version, scope, targets)
	s.mu.Lock()
	if s.dir == "" {
		dir, err := os.MkdirTemp("", "pikit-release-test-")
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.dir, s.byID = dir, map[string]*sharedRelease{}
	}
	r := s.byID[id]
	if r == nil {
		r = &sharedRelease{}
		s.byID[id] = r
	}
	out := filepath.Join(s.dir, strconv.Itoa(len(s.byID)))
	s.mu.Unlock()
	r.once.Do(func() {
		root, err := modroot.Find(".")
		if err != nil {
			r.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		r.res, r.err = release.Run(ctx, release.Options{Version: version, Commit: testCommit, Module: root, Out: out, Scope: scope, Targets: targets})
	})
	return r.res, r.err
}

// remove deletes every shared release.
func (s *sharedReleases) remove() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" {
		return nil
	}
	return os.RemoveAll(s.dir)
}

// newRelease returns the release for targets (nil: linux/amd64) with
// version and scope ("" = the default), shared with the other tests that
// ask for the same (releases); the caller must not change its files. It
// needs go and npm.
func newRelease(t testing.TB, version, scope string, targets ...release.Target) *release.Result {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		pitest.MissingPeer(t, fmt.Sprintf("no npm: %v", err))
	}
	if targets == nil {
		targets = linuxTargets[:1]
	}
	res, err := releases.get(version, scope, targets)
	if err != nil {
		t.Fatalf("release: %v", err)
	}
	return res
}

// tarball returns the tarball of package name.
func tarball(t testing.TB, res *release.Result, name string) release.Tarball {
	t.Helper()
	for _, tb := range res.Tarballs {
		if tb.Package == name {
			return tb
		}
	}
	t.Fatalf("no tarball of %s", name)
	return release.Tarball{}
}

// tarFile is one regular file of a tarball.
type tarFile struct {
	mode int64
	data []byte
}

// readTarball reads a .tgz's regular files by path without npm's
// "package/" prefix.
func readTarball(t testing.TB, file string) map[string]tarFile {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string]tarFile{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(h.Name, "package/")] = tarFile{h.Mode, b}
	}
}

// packageJSON is the part of a package.json the tests read.
type packageJSON struct {
	Name     string            `json:"name"`
	Version  string            `json:"version"`
	Keywords []string          `json:"keywords"`
	OS       []string          `json:"os"`
	CPU      []string          `json:"cpu"`
	Bin      map[string]string `json:"bin"`
	Exports  map[string]string `json:"exports"`
	Pi       *struct {
		Extensions []string `json:"extensions"`
	} `json:"pi"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	Scripts              map[string]string `json:"scripts"`
	Piext                *struct {
		Sizes map[string]int64 `json:"sizes"`
	} `json:"piext"`
}

func parsePackage(t testing.TB, files map[string]tarFile) packageJSON {
	t.Helper()
	var p packageJSON
	if err := json.Unmarshal(files["package.json"].data, &p); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	return p
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
