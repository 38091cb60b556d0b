package main

import (
	"net"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/taskbar"
)

// TestTaskbarProxy_NewcomerErrors: the mistakes a newcomer makes get a
// plain error that says what to do, before any Pi lookup or listening.
func TestTaskbarProxy_NewcomerErrors(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PATH", empty) // a Pi lookup would say "Pi not found" on stdout
	t.Setenv(taskbar.EnvExecutable, filepath.Join(empty, "pi"))
	missing := filepath.Join(empty, "nope")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	// The OS's own words for the bind error come first; Windows words them
	// its own way (WSAEADDRINUSE), so there only our hint is checked.
	addrInUse := "address already in use"
	if runtime.GOOS == "windows" {
		addrInUse = "listen tcp " + busy.Addr().String()
	}
	for _, tc := range []struct {
		name string
		env  string
		args []string
		want []string
	}{
		{"upstream without scheme", "", []string{"taskbar", "proxy", "--upstream", "localhost:3000"},
			[]string{`--upstream "localhost:3000" is not the base URL`, "--upstream http://127.0.0.1:3000"}},
		{"upstream not http", "", []string{"taskbar", "proxy", "--upstream", "ftp://127.0.0.1:21"},
			[]string{`--upstream "ftp://127.0.0.1:21" is not the base URL`}},
		{"extra argument", "", []string{"taskbar", "proxy", "--upstream", "http://127.0.0.1:3000", "http://127.0.0.1:3001"},
			[]string{`pikit taskbar proxy takes no arguments, but got "http://127.0.0.1:3001"`, "--upstream URL"}},
		{"demo extra argument", "", []string{"demo", "now"},
			[]string{`pikit demo takes no arguments, but got "now"`}},
		{"project root env", missing, []string{"taskbar", "proxy", "--upstream", "http://127.0.0.1:3000"},
			[]string{"PI_BROWSER_TASKBAR_PROJECT_ROOT is " + strconv.Quote(missing), "must be an existing directory"}},
		{"busy port", "", []string{"taskbar", "proxy", "--upstream", "http://127.0.0.1:3000", "--listen", busy.Addr().String()},
			[]string{addrInUse, "another program listens on " + busy.Addr().String(), "--listen"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(taskbar.EnvProjectRoot, tc.env)
			} else {
				t.Setenv(taskbar.EnvProjectRoot, empty)
			}
			stdout, _, err := runPikit(t, "", tc.args...)
			if err == nil {
				t.Fatalf("no error; stdout %q", stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tc.name != "busy port" && strings.Contains(stdout, "Pi") {
				t.Errorf("Pi was looked up before the error: %q", stdout)
			}
		})
	}
}
