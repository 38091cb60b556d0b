package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/taskbar/contract"
)

// runPikit runs the root command in-process with args and stdin.
func runPikit(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	err = root.ExecuteContext(t.Context())
	return out.String(), errOut.String(), err
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

const cliContext = `{"contract_version":1,"location":{"origin":"http://localhost:4000","path":"/cards","query_names":["page"]},` +
	`"route":null,"snapshot":{"tag":"MAIN","name":"  Cards\r\n","children":[{"tag":"h1","text":"<Cards>","children":[]}]},"focus_points":[],"truncation":[]}`

func writeFile(t *testing.T, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "context.json")
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTaskbarContractNormalize(t *testing.T) {
	want := `{"contract_version":1,"focus_points":[],"location":{"origin":"http://localhost:4000","path":"/cards","query_names":["page"]},` +
		`"route":null,"snapshot":{"children":[{"children":[],"tag":"h1","text":"\u003cCards\u003e"}],"name":"Cards","tag":"main"},"truncation":[]}` + "\n"
	t.Run("file", func(t *testing.T) {
		out, errOut, err := runPikit(t, "", "taskbar", "contract", "normalize", writeFile(t, cliContext))
		if err != nil || out != want || errOut != "" {
			t.Errorf("got err=%v stdout=%q stderr=%q, want stdout %q", err, out, errOut, want)
		}
	})
	t.Run("stdin", func(t *testing.T) {
		out, _, err := runPikit(t, cliContext, "taskbar", "contract", "normalize", "-")
		if err != nil || out != want {
			t.Errorf("got err=%v stdout=%q", err, out)
		}
	})
	t.Run("rejected", func(t *testing.T) {
		bad := strings.Replace(cliContext, `"http://localhost:4000"`, `"http://localhost:99999"`, 1)
		out, errOut, err := runPikit(t, "", "taskbar", "contract", "normalize", writeFile(t, bad))
		if exitCode(err) != 1 || out != "" {
			t.Fatalf("got exit %d stdout %q, want exit 1 and no output", exitCode(err), out)
		}
		if wantErr := "invalid_task: /location/origin: invalid HTTP(S) origin: port is outside 1-65535\n"; errOut != wantErr {
			t.Errorf("stderr %q, want %q", errOut, wantErr)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		_, errOut, err := runPikit(t, "", "taskbar", "contract", "normalize", writeFile(t, `{"contract_version":`))
		if exitCode(err) != 1 || !strings.HasPrefix(errOut, "malformed_json: ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("got exit %d stderr %q", exitCode(err), errOut)
		}
	})
	t.Run("oversized", func(t *testing.T) {
		big := strings.Repeat(" ", contract.MaxRequestBytes) + cliContext
		_, errOut, err := runPikit(t, "", "taskbar", "contract", "normalize", writeFile(t, big))
		if exitCode(err) != 1 || !strings.HasPrefix(errOut, "oversized_payload: ") {
			t.Errorf("got exit %d stderr %q", exitCode(err), errOut)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		_, _, err := runPikit(t, "", "taskbar", "contract", "normalize", filepath.Join(t.TempDir(), "nope.json"))
		if err == nil {
			t.Error("no error for a missing file")
		}
	})
}

func TestTaskbarContractEnvelope(t *testing.T) {
	out, errOut, err := runPikit(t, "", "taskbar", "contract", "envelope", "--prompt", " Fix it.\r\nNow. ", writeFile(t, cliContext))
	if err != nil {
		t.Fatalf("err=%v stderr=%q", err, errOut)
	}
	want := "Fix it.\nNow.\n\n--- BEGIN UNTRUSTED BROWSER CONTEXT ---\n" +
		`{"contract_version":1,"focus_points":[],"location":{"origin":"http://localhost:4000","path":"/cards","query_names":["page"]},` +
		`"route":null,"snapshot":{"children":[{"children":[],"tag":"h1","text":"\u003cCards\u003e"}],"name":"Cards","tag":"main"},"truncation":[]}` +
		"\n--- END UNTRUSTED BROWSER CONTEXT ---"
	if out != want {
		t.Errorf("envelope:\n%q\nwant:\n%q", out, want)
	}

	_, errOut, err = runPikit(t, "", "taskbar", "contract", "envelope", "--prompt", " \n ", writeFile(t, cliContext))
	if exitCode(err) != 1 || !strings.HasPrefix(errOut, "invalid_task: /prompt: ") {
		t.Errorf("blank prompt: exit %d stderr %q", exitCode(err), errOut)
	}
	if _, _, err := runPikit(t, "", "taskbar", "contract", "envelope", writeFile(t, cliContext)); err == nil {
		t.Error("missing --prompt accepted")
	}
}

// TestTaskbarContractEnvelope_Goldens rebuilds both prompt goldens through
// the CLI.
func TestTaskbarContractEnvelope_Goldens(t *testing.T) {
	dir := pitest.RequireShared(t, "taskbar-contract", "fixtures/manifest.json")
	for _, g := range []struct{ golden, fixture, prompt string }{
		{"minimal-task.json", "minimal-whole-page.json", "Explain the cards page."},
		{"rich-whole-page.json", "rich-whole-page.json", "Improve the checkout button."},
	} {
		t.Run(g.golden, func(t *testing.T) {
			out, errOut, err := runPikit(t, "", "taskbar", "contract", "envelope", "--prompt", g.prompt,
				filepath.Join(dir, "fixtures", "browser-context", g.fixture))
			if err != nil {
				t.Fatalf("err=%v stderr=%q", err, errOut)
			}
			data, err := os.ReadFile(filepath.Join(dir, "fixtures", "prompts", g.golden))
			if err != nil {
				t.Fatal(err)
			}
			// The golden's expected text, decoded from its JSON string.
			var golden struct{ Expected string }
			if err := json.Unmarshal(data, &golden); err != nil {
				t.Fatal(err)
			}
			if out != golden.Expected {
				t.Errorf("envelope differs from %s:\n%q\n%q", g.golden, out, golden.Expected)
			}
		})
	}
}

func TestTaskbarContractVerify(t *testing.T) {
	dir := pitest.RequireShared(t, "taskbar-contract", "fixtures/manifest.json")
	out, _, err := runPikit(t, "", "taskbar", "contract", "verify", dir)
	if err != nil {
		t.Fatalf("verify failed: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var entries int
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "ok  ") {
			t.Errorf("not ok: %s", l)
		}
		if strings.Contains(l, "manifest/") {
			entries++
		}
	}
	if entries != 41 {
		t.Errorf("%d manifest entries reported, want 41", entries)
	}
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, " passed, 0 failed") {
		t.Errorf("summary %q", last)
	}

	// A broken copy fails with exit 1 and names the failed check.
	broken := t.TempDir()
	if err := os.CopyFS(broken, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join(broken, "fixtures", "prompts", "minimal-task.json")
	if err := os.Chmod(golden, 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(golden, bytes.Replace(data, []byte("Explain the cards page.\\n"), []byte("Explain the card page.\\n"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err = runPikit(t, "", "taskbar", "contract", "verify", broken)
	if exitCode(err) != 1 || !strings.Contains(out, "FAIL  golden/minimal-prompt-golden: envelope differs") {
		t.Errorf("broken contract: exit %d\n%s", exitCode(err), out)
	}
}

func TestTaskbarContractVerify_NotAContractDir(t *testing.T) {
	empty := t.TempDir()
	missing := filepath.Join(empty, "nope")
	for _, dir := range []string{empty, missing} {
		_, _, err := runPikit(t, "", "taskbar", "contract", "verify", dir)
		if err == nil || !strings.Contains(err.Error(), dir+" is not a taskbar contract directory") {
			t.Errorf("verify %s: %v, want an error naming the directory", dir, err)
		}
	}
}
