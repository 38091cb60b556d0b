package testproc

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var procs = New(map[string]Role{
	"echo": func(args []string) int {
		if _, ok := os.LookupEnv(EnvRole); ok {
			return 3 // the role's own children must not inherit it
		}
		os.Stdout.WriteString(strings.Join(args, " "))
		return 7
	},
	"outer": func(args []string) int {
		// The child of a role over a role sees the inner role only.
		os.Stdout.WriteString(os.Getenv(EnvRole))
		return 0
	},
}, nil)

func TestMain(m *testing.M) { os.Exit(procs.Run(m)) }

// TestCommand: the child runs the role with its arguments and exits with
// the role's result, without EnvRole in its environment.
func TestCommand(t *testing.T) {
	out, err := procs.Command(t, "echo", "a", "b c").Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("err = %v, want exit status 7", err)
	}
	if got, want := string(out), "a b c"; got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
}

// TestRun_nested: a child started as "outer inner" runs outer, with
// EnvRole holding only the inner role for its own children.
func TestRun_nested(t *testing.T) {
	cmd := procs.Command(t, "outer")
	cmd.Env = append(cmd.Env, EnvRole+"=outer echo")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "echo"; got != want {
		t.Errorf("EnvRole in outer = %q, want %q", got, want)
	}
}

// TestRun_unknownRole: a child asked for a role nobody registered exits 2.
func TestRun_unknownRole(t *testing.T) {
	cmd := exec.Command(procs.Executable(t))
	cmd.Env = append(os.Environ(), EnvRole+"=nope")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), `unknown role "nope"`) {
		t.Fatalf("err = %v, output %q; want exit 2 naming the role", err, out)
	}
}

// TestUnused: roles not started are reported, sorted; started and optional
// ones not.
func TestUnused(t *testing.T) {
	nop := func([]string) int { return 0 }
	p := New(map[string]Role{"b": nop, "a": nop, "c": nop, "d": nop}, &Options{Optional: []string{"d"}})
	p.Env(t, "c")
	if got, want := p.unused(), []string{"a", "b"}; !cmp.Equal(got, want) {
		t.Errorf("unused = %q, want %q", got, want)
	}
}

// TestNew_badRole: an empty name or nil body is a programmer error.
func TestNew_badRole(t *testing.T) {
	for name, roles := range map[string]map[string]Role{
		"empty name": {"": func([]string) int { return 0 }},
		"nil body":   {"x": nil},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("New did not panic")
				}
			}()
			New(roles, nil)
		})
	}
	t.Run("unregistered optional role", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("New did not panic")
			}
		}()
		New(map[string]Role{"a": func([]string) int { return 0 }}, &Options{Optional: []string{"b"}})
	})
}

// TestRSS: this process has a resident set of a plausible size.
func TestRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		// RSS reads /proc/<pid>/status. Elsewhere it would need the OS's
		// process memory query (Windows: GetProcessMemoryInfo); only the
		// Linux benchmarks use it so far.
		t.Skipf("RSS reads Linux's /proc; none on %s", runtime.GOOS)
	}
	if got := RSS(t, os.Getpid()); got < 1 || got > 4096 {
		t.Errorf("RSS = %v MiB, want between 1 and 4096", got)
	}
}
