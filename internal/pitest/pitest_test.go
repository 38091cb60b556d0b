package pitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

func TestMain(m *testing.M) { pitest.Main(m) }

// recorder stands in for a test to see whether Require skips or fails.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Fatalf(f string, a ...any) { r.fatal = fmt.Sprintf(f, a...); runtime.Goexit() }
func (r *recorder) Skipf(f string, a ...any)  { r.skip = fmt.Sprintf(f, a...); runtime.Goexit() }

func TestRequire_MissingPi(t *testing.T) {
	t.Setenv("PIKIT_TESTDEPS", t.TempDir())
	if _, err := pitest.Locate(); !errors.Is(err, pitest.ErrNotInstalled) {
		t.Fatalf("Locate = %v, want ErrNotInstalled", err)
	}
	for _, ci := range []string{"true", ""} {
		t.Setenv("CI", ci)
		r := &recorder{TB: t}
		done := make(chan struct{})
		go func() { // Fatalf and Skipf end this goroutine, as in a real test
			defer close(done)
			pitest.Require(r)
		}()
		<-done
		if ci == "true" && (r.fatal == "" || r.skip != "") {
			t.Errorf("CI=true: fatal %q, skip %q; want a failure", r.fatal, r.skip)
		}
		if ci == "" && (r.skip == "" || r.fatal != "") {
			t.Errorf("no CI: fatal %q, skip %q; want a skip", r.fatal, r.skip)
		}
	}
}

func TestNew_IsolatedEnvironment(t *testing.T) {
	t.Setenv("SOME_PROVIDER_API_KEY", "secret")
	env := pitest.New(t, &pitest.Options{Settings: map[string]any{"retry": map[string]any{"enabled": false}}})
	for _, name := range []string{"models.json", "settings.json"} {
		fi, err := os.Stat(filepath.Join(env.AgentDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	var models struct {
		Providers map[string]struct {
			BaseURL string `json:"baseUrl"`
			APIKey  string `json:"apiKey"`
		} `json:"providers"`
	}
	b, _ := os.ReadFile(filepath.Join(env.AgentDir, "models.json"))
	if err := json.Unmarshal(b, &models); err != nil {
		t.Fatal(err)
	}
	if p := models.Providers[pitest.Provider]; p.BaseURL != env.URL || p.APIKey == "" {
		t.Errorf("provider %+v, want baseUrl %s and a dummy key", p, env.URL)
	}
	for _, want := range []string{"PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0", "SOME_PROVIDER_API_KEY=",
		"PI_CODING_AGENT_DIR=" + env.AgentDir, "HOME=" + env.Home} {
		if !slices.Contains(env.Env, want) {
			t.Errorf("env lacks %q", want)
		}
	}
	if !strings.HasPrefix(env.Env[0], "PATH="+env.Install.NodeBin+string(os.PathListSeparator)) {
		t.Errorf("Node 22 is not first on PATH: %q", env.Env[0])
	}
	if o := env.Options("-e", "x.ts"); !slices.Contains(o.Args, "--no-session") || o.Args[len(o.Args)-1] != "x.ts" {
		t.Errorf("args %q", o.Args)
	}
}

// startedState starts exe as Pi in env's isolated environment, asks for
// its state and stops it again.
func startedState(t *testing.T, env *pitest.Env, exe string) *pirpc.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c, err := pirpc.Start(ctx, pirpc.Options{Executable: exe, Env: env.Env, Dir: env.Dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	st, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRealPi_Wrapper starts real Pi the way the taskbar runtime will: an
// executable plus env, `<exe> --mode rpc`, and nothing else.
func TestRealPi_Wrapper(t *testing.T) {
	env := pitest.New(t, &pitest.Options{Script: modelserver.Reply("wrapped")})
	st := startedState(t, env, env.Wrapper(t))
	if st.Model == nil || st.Model.ID != pitest.ModelID || st.SessionFile != "" {
		t.Errorf("state %+v", st)
	}
}

// TestRealPi_ExecutableAndEnvOnly: Pi picks the fake model from settings
// without any flag (the runtime passes no model flags).
func TestRealPi_ExecutableAndEnvOnly(t *testing.T) {
	env := pitest.New(t, &pitest.Options{Session: true})
	st := startedState(t, env, env.Executable)
	if st.Model == nil || st.Model.Provider != pitest.Provider || !strings.HasPrefix(st.SessionFile, env.SessionDir) {
		t.Errorf("state %+v, want the fake model and a session under %s", st, env.SessionDir)
	}
}

// slowExitExtension makes Pi's exit slow, as Node's compile-cache flush at
// exit is: when the process exits it blocks 500 ms, then writes
// $PITEST_LATE_DIR/late (making the directory first) and $PITEST_PROOF
// (outside the test's temp dirs).
const slowExitExtension = `import { mkdirSync, writeFileSync } from "node:fs";
export default function (pi) {
  process.on("exit", () => {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    mkdirSync(process.env.PITEST_LATE_DIR, { recursive: true });
    writeFileSync(process.env.PITEST_LATE_DIR + "/late", "written at exit");
    writeFileSync(process.env.PITEST_PROOF, "exited");
  });
}
`

// TestStartTmux_CleanupWaitsForPi: interactive Pi in tmux whose exit
// writes into a temp dir of its test half a second after the terminal
// closed. The test's cleanup waits until Pi has exited, so the temp dir is
// removed after that write (RemoveAll passes, the dir does not come back);
// ending the tmux server alone would remove it first and Pi would then
// recreate it.
func TestStartTmux_CleanupWaitsForPi(t *testing.T) {
	t.Parallel()
	proof := filepath.Join(t.TempDir(), "proof")
	var late string
	var env *pitest.Env
	ok := t.Run("pi", func(t *testing.T) {
		env = pitest.New(t, nil)
		late = filepath.Join(t.TempDir(), "late-dir")
		ext := pitest.WriteExtension(t, "", "slow-exit.ts", slowExitExtension)
		tm := env.StartTmux(t, &pitest.TmuxOptions{Env: []string{"PITEST_LATE_DIR=" + late, "PITEST_PROOF=" + proof}, Args: []string{"-e", ext}})
		if !tm.Poll(60*time.Second, func(s string) bool { return strings.Contains(s, pitest.Provider) }) {
			t.Fatalf("Pi never drew its footer:\n%s", tm.Screen())
		}
	})
	if !ok {
		t.Fatal("the Pi subtest failed")
	}
	env.WaitExited(t) // had the cleanup not waited, Pi would still be on its way to the late write
	if _, err := os.Stat(proof); err != nil {
		t.Fatalf("Pi's exit hook never ran: %v", err)
	}
	if _, err := os.Stat(late); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Pi wrote into its test's temp dir after the cleanup removed it (stat: %v)", err)
	}
}
