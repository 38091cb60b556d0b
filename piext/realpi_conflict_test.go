package piext_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/piext/install"
)

// TestRealPi_SameToolTwiceRefusesStart is the fact behind
// install.ToolConflictError: two installed Go extensions with one tool
// name make Pi 1.6.0 refuse to start, with "Tool \"NAME\" conflicts with
// PATH". The second installation is written past `pikit ext install`,
// which refuses it.
func TestRealPi_SameToolTwiceRefusesStart(t *testing.T) {
	t.Parallel()
	env := pitest.New(t, nil)
	exe := pitest.BuildCommand(t, "./piext/internal/wordcount")
	first, err := install.Read(env.InstallExtension(t, "wordcount", exe))
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Manifest.Tools) == 0 {
		t.Fatal("wordcount has no tool")
	}
	second := first.Manifest
	second.Name = "wordcount2"
	raw, err := json.Marshal(second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := install.Write(install.Options{Dir: filepath.Join(env.AgentDir, "extensions"), Command: first.Command, Manifest: raw}); err != nil {
		t.Fatal(err)
	}
	out, err := env.Command(testCtx(t), nil, append([]string{"-p", "hello"}, env.Args...)...).CombinedOutput()
	want := `Tool "` + first.Manifest.Tools[0].Name + `" conflicts with `
	if err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("pi -p with one tool in two extensions: %v\n%s\nwant a failed start saying %q", err, out, want)
	}
}
