// Package testproc is pikit's one convention for tests that re-execute
// their own test binary as a child process (a crashing writer, a fake
// peer), as os/exec's tests do (STYLE.md §1, "Tests check the process
// itself"): the test package registers named roles, TestMain runs the role
// the environment names instead of the tests, and the run fails when a
// registered role was never started, so a dead role cannot linger.
//
// # Use
//
//	var procs = testproc.New(map[string]testproc.Role{
//		"writer": func(args []string) int { ...; return 0 },
//	}, nil)
//
//	func TestMain(m *testing.M) { os.Exit(procs.Run(m)) }
//
//	func TestCrash(t *testing.T) {
//		cmd := procs.Command(t, "writer", dir) // this binary, as "writer"
//		...
//	}
//
// # Parent and child
//
// In the parent, [Procs.Run] runs the tests with the goroutine-leak check
// of internal/leakcheck, then checks that every role was started. In a
// child ([EnvRole] set), it unsets [EnvRole] (so the child's own children
// are not roles), runs the role with os.Args[1:] and returns its exit code;
// the tests do not run.
//
// # A role over a role
//
// A role may spawn this binary again as another role (a broker whose Pi is
// a fake Pi): [EnvRole] then holds both names, outer first, separated by a
// space ("broker fakepi"). The child runs the first and leaves the rest in
// [EnvRole] for its own children.
package testproc

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pikit-dev/pikit/internal/leakcheck"
)

// EnvRole names, in a child's environment, the role it plays (and, after a
// space, the roles of its own children; see the package doc).
const EnvRole = "PIKIT_TESTPROC_ROLE"

// Role is the body of a child process: args are the child's arguments
// (os.Args[1:]), the result its exit code.
type Role func(args []string) int

// Options adjusts [New]; nil means defaults.
type Options struct {
	// Optional names registered roles that may go unused: a role a shared
	// TestMain helper registers for every package (a fake peer) although
	// only some packages start it. Nil means every role must be started.
	Optional []string
}

// Procs is a test binary's set of roles. Create it with [New] in a
// package-level var of the test package. It is safe for concurrent use.
type Procs struct {
	roles    map[string]Role
	optional []string
	used     sync.Map // role name → struct{}
}

// New returns the roles; it panics on an empty role name, a nil body or an
// optional role that is not registered (programmer errors).
func New(roles map[string]Role, opts *Options) *Procs {
	for name, r := range roles {
		if name == "" || r == nil {
			panic(fmt.Sprintf("testproc: bad role %q", name))
		}
	}
	p := &Procs{roles: roles}
	if opts != nil {
		for _, name := range opts.Optional {
			if roles[name] == nil {
				panic(fmt.Sprintf("testproc: optional role %q is not registered", name))
			}
		}
		p.optional = slices.Clone(opts.Optional)
	}
	return p
}

// Run is a TestMain body; pass its result to os.Exit. In a child it runs
// the role [EnvRole] names (exit code 2 and a message on stderr for an
// unknown role). In the parent it runs the tests with [leakcheck.Run] and,
// when they pass and ran unfiltered (no -test.run, -test.skip or -short,
// not a fuzzing worker),
// fails with the list of roles no test started.
func (p *Procs) Run(m *testing.M) int {
	if v, ok := os.LookupEnv(EnvRole); ok {
		name, inner, _ := strings.Cut(v, " ")
		if inner = strings.TrimSpace(inner); inner == "" {
			os.Unsetenv(EnvRole)
		} else {
			os.Setenv(EnvRole, inner)
		}
		r := p.roles[name]
		if r == nil {
			fmt.Fprintf(os.Stderr, "testproc: unknown role %q\n", name)
			return 2
		}
		return r(os.Args[1:])
	}
	code := leakcheck.Run(m)
	if code != 0 || filtered() {
		return code
	}
	if unused := p.unused(); len(unused) > 0 {
		fmt.Fprintf(os.Stderr, "testproc: registered roles no test started: %q\n", unused)
		return 1
	}
	return 0
}

// filtered reports whether this run selects some tests only (or is a
// fuzzing worker), so a role may rightly stay unused.
func filtered() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return true
		}
	}
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		return true
	}
	return testing.Short()
}

func (p *Procs) unused() []string {
	var out []string
	for name := range p.roles {
		if _, ok := p.used.Load(name); !ok && !slices.Contains(p.optional, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Command returns a command that runs this test binary as role with args:
// the caller may set more fields (Stdout, Dir, more Env) before Start. The
// environment is os.Environ() plus [Env]'s. It fails the test for a role
// that is not registered.
func (p *Procs) Command(t testing.TB, role string, args ...string) *exec.Cmd {
	t.Helper()
	return p.CommandContext(context.Background(), t, role, args...)
}

// CommandContext is [Procs.Command] with exec.CommandContext's ctx.
func (p *Procs) CommandContext(ctx context.Context, t testing.TB, role string, args ...string) *exec.Cmd {
	t.Helper()
	exe := p.Executable(t)
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), p.Env(t, role)...)
	return cmd
}

// Env returns the environment entries ("KEY=value") that make this test
// binary run role, for a caller that builds its own command (a spawner
// under test that takes an executable and env), and records role as used.
// It fails the test for a role that is not registered.
func (p *Procs) Env(t testing.TB, role string) []string {
	t.Helper()
	if p.roles[role] == nil {
		t.Fatalf("testproc: role %q is not registered", role)
	}
	p.used.Store(role, struct{}{})
	return RoleEnv(role)
}

// RoleEnv returns the environment entries ("KEY=value") that make a test
// binary run role, without checking that it is registered or recording it
// as used: for a shared helper that builds a fake peer's environment
// without a *testing.T (internal/fakepi's Config.Env), whose role the
// TestMain registers as optional. [Procs.Env] is the checked form.
func RoleEnv(role string) []string {
	// A -race child would sleep 1 s at exit by default.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	return []string{EnvRole + "=" + role, "GORACE=" + gorace}
}

// Executable returns the path of this test binary, failing the test when
// it cannot be found.
func (p *Procs) Executable(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("testproc: executable: %v", err)
	}
	return exe
}
