package release_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// These tests take the path a Pi user takes: the release's tarballs are
// published to a local registry (Verdaccio), and the real Pi 1.6.0, in an
// isolated agent dir whose npm points at it, installs them with
// `pi install npm:…` and runs them against the scripted model.

// TestRealPi_NPMInstallPath: `pi install` of the StateFlow and midcompact
// packages installs each with the linux-x64 binary package alone (mode
// 0755; the linux-arm64 one is skipped by npm); Pi starts and each
// extension answers a tool call; a companion Pi package that imports
// @pikit/stateflow/modules registers its root, which StateFlow persists
// (read back by `npx @pikit/cli stateflow read` after Pi exited); `npx`
// runs `pikit --version` and `pikit stateflow check`; `pi remove` removes
// every package and leaves nothing of them; `pi -e npm:@pikit/midcompact`
// works for one run without touching settings.
func TestRealPi_NPMInstallPath(t *testing.T) {
	t.Parallel()
	const version = "0.1.0-test.1"
	res := newRelease(t, version, "", linuxTargets...)
	reg := pitest.StartRegistry(t)
	publishRelease(t, reg, res)
	reg.Publish(t, writeCompanion(t, version))
	p := newPiNPM(t, reg, model)

	for _, name := range []string{"@pikit/stateflow", "@pikit/midcompact", "@pikit-test/acme-notes"} {
		_, took := p.pi(t, "install", "npm:"+name)
		t.Logf("pi install npm:%s: %v", name, took)
	}
	if got, want := p.packages(t), []string{"npm:@pikit/stateflow", "npm:@pikit/midcompact", "npm:@pikit-test/acme-notes"}; !slices.Equal(got, want) {
		t.Errorf("settings packages = %q, want %q", got, want)
	}
	st, err := os.Stat(filepath.Join(p.installed("@pikit/cli-linux-x64"), "bin", "pikit"))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("installed binary: %v %v", st, err)
	}
	if _, err := os.Stat(p.installed("@pikit/cli-linux-arm64")); !os.IsNotExist(err) {
		t.Errorf("the linux-arm64 package was installed on linux-x64: %v", err)
	}

	c := p.start(t)
	ctx := testCtx(t)
	if text, isErr := toolResult(t, prompt(t, ctx, c, "REMEMBER this"), "patch_state"); isErr || !strings.Contains(text, "State materialized atomically") {
		t.Errorf("patch_state: %q (error %v)", text, isErr)
	}
	if text, isErr := toolResult(t, prompt(t, ctx, c, "RECALL it"), "read_state"); isErr || text != `{"value":"from npm"}` {
		t.Errorf("read_state: %q (error %v)", text, isErr)
	}
	if text, isErr := toolResult(t, prompt(t, ctx, c, "INSPECT"), "midcompact"); isErr || strings.Contains(text, "piext") || text == "" {
		t.Errorf("midcompact: %q (error %v)", text, isErr)
	}
	if text, isErr := toolResult(t, prompt(t, ctx, c, "NOTES"), "patch_state"); isErr || !strings.Contains(text, "State materialized atomically") {
		t.Errorf("patch_state of the companion's root: %q (error %v)", text, isErr)
	}
	if text, isErr := toolResult(t, prompt(t, ctx, c, "READNOTES"), "read_state"); isErr || text != `{"value":{"entries":["accepted"]}}` {
		t.Errorf("read_state of the companion's root: %q (error %v)", text, isErr)
	}
	state, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Logf("close pi: %v", err)
	}

	// npx-style use of the CLI package, in an empty directory.
	npx := func(args ...string) string {
		return reg.NPM(t, t.TempDir(), p.env.Env, append([]string{"exec", "--yes", "--package=@pikit/cli@" + version, "--", "pikit"}, args...)...)
	}
	if got, want := npx("--version"), "pikit "+version+" (commit "+testCommit+", linux/amd64)\n"; got != want {
		t.Errorf("npx pikit --version = %q, want %q", got, want)
	}
	scope := []string{"--agent-dir", p.env.AgentDir, "--cwd", p.env.Dir, "--session", state.SessionID}
	if got := npx(append([]string{"stateflow", "read", "x_acme_notes"}, scope...)...); !strings.Contains(got, `{"entries":["accepted"]}`) {
		t.Errorf("npx pikit stateflow read x_acme_notes = %q", got)
	}
	if got := npx(append([]string{"stateflow", "check"}, scope...)...); !strings.Contains(got, "ok") {
		t.Errorf("npx pikit stateflow check = %q", got)
	}

	for _, name := range []string{"@pikit-test/acme-notes", "@pikit/midcompact", "@pikit/stateflow"} {
		p.pi(t, "remove", "npm:"+name)
	}
	if got := p.packages(t); len(got) != 0 {
		t.Errorf("settings packages after pi remove = %q", got)
	}
	npmRoot := filepath.Join(p.env.AgentDir, "npm")
	// npm keeps an emptied scope folder (node_modules/@pikit); nothing in it.
	filepath.WalkDir(npmRoot, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(filepath.ToSlash(path), "@pikit") {
			t.Errorf("left behind after pi remove: %s", strings.TrimPrefix(path, npmRoot))
		}
		return nil
	})
	for _, f := range []string{"package.json", filepath.Join("node_modules", ".package-lock.json")} {
		if b, err := os.ReadFile(filepath.Join(npmRoot, f)); err == nil && strings.Contains(string(b), "@pikit") {
			t.Errorf("npm root %s still names a package: %s", f, b)
		}
	}

	// pi -e for one run, in an agent dir of its own: loaded, answers, and
	// settings stay without it.
	one := newPiNPM(t, reg, model)
	one.env.Env = append(one.env.Env, "PI_OFFLINE=") // -e installs only when online
	c = one.start(t, "-e", "npm:@pikit/midcompact")
	if text, isErr := toolResult(t, prompt(t, ctx, c, "INSPECT"), "midcompact"); isErr || strings.Contains(text, "piext") || text == "" {
		t.Errorf("midcompact through pi -e: %q (error %v)", text, isErr)
	}
	if got := one.packages(t); len(got) != 0 {
		t.Errorf("pi -e added settings packages %q", got)
	}
}

// TestRealPi_NPMNoBinaryForPlatform: with no binary package for this
// platform (only linux-arm64 published), `pi install` still succeeds; Pi
// starts, each extension registers nothing (the model is offered neither
// StateFlow's nor midcompact's tool) and shows one notice naming the
// platform and how to build from source, once per Pi process (not again
// for a new session; on stderr in print mode); Pi keeps answering.
func TestRealPi_NPMNoBinaryForPlatform(t *testing.T) {
	t.Parallel()
	const version = "0.1.0-test.1"
	res := newRelease(t, version, "", linuxTargets...)
	reg := pitest.StartRegistry(t)
	for _, tb := range res.Tarballs {
		if tb.Package != "@pikit/cli-linux-x64" {
			reg.Publish(t, tb.File)
		}
	}
	p := newPiNPM(t, reg, model)
	p.pi(t, "install", "npm:@pikit/stateflow")
	p.pi(t, "install", "npm:@pikit/midcompact")
	if _, err := os.Stat(p.installed("@pikit/cli-linux-x64")); !os.IsNotExist(err) {
		t.Fatalf("linux-x64 package present: %v", err)
	}
	c := p.start(t)
	ctx := testCtx(t)
	evs := prompt(t, ctx, c, "RECALL it")
	reqs := p.env.Server.Requests()
	if len(reqs) != 1 || slices.Contains(reqs[0].Tools, "read_state") || slices.Contains(reqs[0].Tools, "patch_state") || slices.Contains(reqs[0].Tools, "midcompact") {
		t.Errorf("requests %d, tools offered %v", len(reqs), reqs[0].Tools)
	}
	if _, err := c.NewSession(ctx, pirpc.NewSessionCommand{}); err != nil {
		t.Fatal(err)
	}
	evs = append(evs, prompt(t, ctx, c, "hello again")...)
	var notices []string
	for _, r := range find[*pirpc.ExtensionUIRequest](evs) {
		if r.Method == "notify" {
			notices = append(notices, r.Message)
		}
	}
	slices.Sort(notices)
	if len(notices) != 2 {
		t.Fatalf("notices = %q, want one per extension", notices)
	}
	for i, name := range []string{"midcompact", "stateflow"} {
		for _, want := range []string{"piext " + name + ": no binary for linux-x64", "@pikit/cli-linux-x64 is not installed",
			"go install github.com/pikit-dev/pikit/cmd/pikit@v" + version + ", then pikit ext install " + name} {
			if !strings.Contains(notices[i], want) {
				t.Errorf("notice %q lacks %q", notices[i], want)
			}
		}
	}
	if errs := find[*pirpc.ExtensionError](evs); len(errs) != 0 {
		t.Errorf("extension errors: %+v", errs)
	}
	if _, err := c.GetState(ctx); err != nil {
		t.Errorf("Pi after the notices: %v", err)
	}
	// Print mode has no UI: the notice goes to stderr, once.
	out, _ := p.pi(t, append(slices.Clone(p.env.Args), "-p", "hello")...)
	if strings.Count(out, "piext stateflow: no binary for linux-x64") != 1 || !strings.Contains(out, "plain answer") {
		t.Errorf("pi -p output:\n%s", out)
	}
}

// TestRealPi_NPMBrokenBinary: a missing, truncated or non-executable
// binary, or a binary package of another version, in an installed package
// gives a clear error naming the file (or both versions); Pi keeps
// answering; once the file is whole again, the next Pi start runs the
// extension.
func TestRealPi_NPMBrokenBinary(t *testing.T) {
	t.Parallel()
	const version = "0.1.0-test.1"
	res := newRelease(t, version, "", linuxTargets[0])
	reg := pitest.StartRegistry(t)
	publishRelease(t, reg, res)
	p := newPiNPM(t, reg, model)
	p.pi(t, "install", "npm:@pikit/stateflow")
	pkg := p.installed("@pikit/cli-linux-x64")
	bin := filepath.Join(pkg, "bin", "pikit")
	good, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	restore := func() {
		writeFile(t, filepath.Join(pkg, "package.json"), string(meta))
		if err := os.WriteFile(bin, good, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(bin, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const file = "@pikit/cli-linux-x64/bin/pikit"
	for _, c := range []struct {
		name   string
		damage func() error
		want   string
	}{
		{"missing", func() error { return os.Remove(bin) }, "the binary " + file + " is missing; reinstall: pi remove npm:@pikit/stateflow, then pi install npm:@pikit/stateflow"},
		{"truncated", func() error { return os.Truncate(bin, 4096) }, "the binary " + file + " is damaged: 4096 bytes, "},
		{"not executable", func() error { return os.Chmod(bin, 0o644) }, "the binary " + file + " is not executable (mode 644)"},
		{"other version", func() error {
			return os.WriteFile(filepath.Join(pkg, "package.json"), []byte(strings.Replace(string(meta), `"version": "`+version+`"`, `"version": "0.0.9"`, 1)), 0o644)
		}, "@pikit/cli-linux-x64 is version 0.0.9, but @pikit/stateflow " + version + " needs " + version},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.damage(); err != nil {
				t.Fatal(err)
			}
			defer restore()
			cl := p.start(t)
			ctx := testCtx(t)
			evs := prompt(t, ctx, cl, "hello")
			var errs []string
			for _, e := range find[*pirpc.ExtensionError](evs) {
				errs = append(errs, e.Error)
			}
			if len(errs) == 0 || !strings.Contains(errs[0], "piext stateflow: "+c.want) {
				t.Errorf("extension errors = %q, want one with %q", errs, c.want)
			}
			if msgs := find[*pirpc.MessageEnd](evs); len(msgs) == 0 {
				t.Errorf("Pi did not answer the prompt")
			}
			if _, err := cl.GetState(ctx); err != nil {
				t.Errorf("Pi after the error: %v", err)
			}
		})
	}
	cl := p.start(t)
	ctx := testCtx(t)
	prompt(t, ctx, cl, "REMEMBER this")
	if text, isErr := toolResult(t, prompt(t, ctx, cl, "RECALL it"), "read_state"); isErr || text != `{"value":"from npm"}` {
		t.Errorf("read_state after the binary was restored: %q (error %v)", text, isErr)
	}
}

// TestRealPi_NPMVersionsSideBySide: midcompact at one version and
// StateFlow at another install side by side (npm nests the second binary
// package under its Pi package); both answer, each through the binary of
// its own version.
func TestRealPi_NPMVersionsSideBySide(t *testing.T) {
	t.Parallel()
	const a, b = "0.1.0-test.1", "0.1.0-test.2"
	ra := newRelease(t, a, "", linuxTargets[0])
	rb := newRelease(t, b, "", linuxTargets[0])
	reg := pitest.StartRegistry(t)
	publishRelease(t, reg, ra)
	publishRelease(t, reg, rb)
	p := newPiNPM(t, reg, model)
	p.pi(t, "install", "npm:@pikit/midcompact@"+a)
	p.pi(t, "install", "npm:@pikit/stateflow@"+b)
	c := p.start(t)
	ctx := testCtx(t)
	prompt(t, ctx, c, "REMEMBER this")
	if text, isErr := toolResult(t, prompt(t, ctx, c, "RECALL it"), "read_state"); isErr || text != `{"value":"from npm"}` {
		t.Errorf("StateFlow %s: %q (error %v)", b, text, isErr)
	}
	if text, isErr := toolResult(t, prompt(t, ctx, c, "INSPECT"), "midcompact"); isErr || strings.Contains(text, "piext") {
		t.Errorf("midcompact %s: %q (error %v)", a, text, isErr)
	}
	var versions []string
	for _, pid := range children(t, c.Pid()) {
		exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		if err != nil || filepath.Base(exe) != "pikit" {
			continue
		}
		versions = append(versions, runVersion(t, exe))
	}
	slices.Sort(versions)
	want := []string{"pikit " + a + " (commit " + testCommit + ", linux/amd64)", "pikit " + b + " (commit " + testCommit + ", linux/amd64)"}
	if !slices.Equal(versions, want) {
		t.Errorf("sidecar versions = %q, want %q", versions, want)
	}
}
