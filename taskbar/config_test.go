package taskbar_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/taskbar"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestConfig_Resolve(t *testing.T) {
	root := t.TempDir()
	canon, _ := filepath.EvalSymlinks(root)
	// The env fallbacks name the root through a symlink, which Resolve
	// resolves; under Wine, which has none (ostest.WineNoSymlinks), they
	// name the root itself.
	link := root
	if ostest.Wine() == "" {
		link = filepath.Join(t.TempDir(), "link")
		ostest.Symlink(t, root, link)
	}
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o600)
	f, tr := false, true
	tests := []struct {
		name    string
		cfg     taskbar.Config
		env     map[string]string
		want    taskbar.Settings
		wantErr string // the setting named by the error
	}{
		{"defaults", taskbar.Config{ProjectRoot: root}, nil,
			taskbar.Settings{Enabled: true, Executable: "pi", ProjectRoot: canon, TaskTimeout: 1800 * time.Second}, ""},
		{"env fallbacks", taskbar.Config{}, map[string]string{
			taskbar.EnvAllowedHosts: "Dev.Example.com.,10.0.0.1, 2001:0DB8::0:1 ", taskbar.EnvExecutable: "/opt/pi",
			taskbar.EnvProjectRoot: link, taskbar.EnvTaskTimeout: "+60"},
			taskbar.Settings{Enabled: true, AllowedHosts: []string{"dev.example.com", "10.0.0.1", "2001:db8::1"},
				Executable: "/opt/pi", ProjectRoot: canon, TaskTimeout: 60 * time.Second}, ""},
		{"struct wins over env", taskbar.Config{AllowedHosts: []string{}, Executable: "mypi", ProjectRoot: root, TaskTimeout: 90 * time.Second, Enabled: &tr},
			map[string]string{taskbar.EnvAllowedHosts: "a.b", taskbar.EnvExecutable: "x", taskbar.EnvTaskTimeout: "100", taskbar.EnvEnabled: "0"},
			taskbar.Settings{Enabled: true, Executable: "mypi", ProjectRoot: canon, TaskTimeout: 90 * time.Second}, ""},
		{"empty host env is none", taskbar.Config{ProjectRoot: root}, map[string]string{taskbar.EnvAllowedHosts: ""},
			taskbar.Settings{Enabled: true, Executable: "pi", ProjectRoot: canon, TaskTimeout: 1800 * time.Second}, ""},
		{"disabled skips validation", taskbar.Config{Enabled: &f, ProjectRoot: "/does/not/exist"}, map[string]string{taskbar.EnvTaskTimeout: "1"},
			taskbar.Settings{}, ""},
		{"disabled by env", taskbar.Config{}, map[string]string{taskbar.EnvEnabled: "false", taskbar.EnvTaskTimeout: "x"}, taskbar.Settings{}, ""},
		{"bad enabled", taskbar.Config{}, map[string]string{taskbar.EnvEnabled: "yes"}, taskbar.Settings{}, "enabled"},
		{"host with port", taskbar.Config{ProjectRoot: root}, map[string]string{taskbar.EnvAllowedHosts: "a.b:80"}, taskbar.Settings{}, "allowed_hosts"},
		{"host with scheme", taskbar.Config{ProjectRoot: root, AllowedHosts: []string{"http://a.b"}}, nil, taskbar.Settings{}, "allowed_hosts"},
		{"wildcard", taskbar.Config{ProjectRoot: root, AllowedHosts: []string{"*.a.b"}}, nil, taskbar.Settings{}, "allowed_hosts"},
		{"cidr", taskbar.Config{ProjectRoot: root, AllowedHosts: []string{"10.0.0.0/8"}}, nil, taskbar.Settings{}, "allowed_hosts"},
		{"scoped ip", taskbar.Config{ProjectRoot: root, AllowedHosts: []string{"fe80::1%eth0"}}, nil, taskbar.Settings{}, "allowed_hosts"},
		{"bracketed ip", taskbar.Config{ProjectRoot: root, AllowedHosts: []string{"[::1]"}}, nil, taskbar.Settings{}, "allowed_hosts"},
		{"empty entry", taskbar.Config{ProjectRoot: root}, map[string]string{taskbar.EnvAllowedHosts: "a.b,,c.d"}, taskbar.Settings{}, "allowed_hosts"},
		{"path", taskbar.Config{ProjectRoot: root, AllowedHosts: []string{"a.b/x"}}, nil, taskbar.Settings{}, "allowed_hosts"},
		{"empty executable env", taskbar.Config{ProjectRoot: root}, map[string]string{taskbar.EnvExecutable: " "}, taskbar.Settings{}, "executable"},
		{"missing root", taskbar.Config{ProjectRoot: filepath.Join(root, "missing")}, nil, taskbar.Settings{}, "project_root"},
		{"root is a file", taskbar.Config{ProjectRoot: file}, nil, taskbar.Settings{}, "project_root"},
		{"empty root env", taskbar.Config{}, map[string]string{taskbar.EnvProjectRoot: ""}, taskbar.Settings{}, "project_root"},
		{"timeout low", taskbar.Config{ProjectRoot: root}, map[string]string{taskbar.EnvTaskTimeout: "59"}, taskbar.Settings{}, "task_timeout"},
		{"timeout high", taskbar.Config{ProjectRoot: root}, map[string]string{taskbar.EnvTaskTimeout: "86401"}, taskbar.Settings{}, "task_timeout"},
		{"timeout not int", taskbar.Config{ProjectRoot: root}, map[string]string{taskbar.EnvTaskTimeout: "60s"}, taskbar.Settings{}, "task_timeout"},
		{"timeout fraction", taskbar.Config{ProjectRoot: root, TaskTimeout: 90500 * time.Millisecond}, nil, taskbar.Settings{}, "task_timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cfg.Resolve(env(tc.env))
			if tc.wantErr != "" {
				var ce *taskbar.ConfigError
				if !errors.As(err, &ce) || ce.Setting != tc.wantErr {
					t.Fatalf("err = %v, want a ConfigError for %s", err, tc.wantErr)
				}
				if want := "pi_browser_taskbar " + tc.wantErr + " must be "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
					t.Fatalf("message %q", err.Error())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func FuzzParseAllowedHost(f *testing.F) {
	for _, s := range []string{"localhost", "a.b", "10.0.0.1", "::1", "2001:0DB8::0:1", "a.b:80", "*.x", "fe80::1%eth0", " A.B. ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		canon, err := taskbar.ParseAllowedHost(s)
		if err != nil {
			return
		}
		again, err := taskbar.ParseAllowedHost(canon)
		if err != nil || again != canon {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", s, canon, again, err)
		}
	})
}

// TestResolve_ProjectRootErrorNamesVariableAndValue: a bad
// PI_BROWSER_TASKBAR_PROJECT_ROOT is named with its value, so a newcomer
// sees which setting and what they passed.
func TestResolve_ProjectRootErrorNamesVariableAndValue(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no such dir")
	for _, tc := range []struct {
		name string
		c    taskbar.Config
		env  map[string]string
		want string
	}{
		{"env", taskbar.Config{}, map[string]string{taskbar.EnvProjectRoot: missing},
			`pi_browser_taskbar project_root must be an existing directory (PI_BROWSER_TASKBAR_PROJECT_ROOT is ` + strconv.Quote(missing) + `)`},
		{"empty env", taskbar.Config{}, map[string]string{taskbar.EnvProjectRoot: ""},
			`pi_browser_taskbar project_root must be an existing directory (PI_BROWSER_TASKBAR_PROJECT_ROOT is "")`},
		{"config", taskbar.Config{ProjectRoot: missing}, nil,
			`pi_browser_taskbar project_root must be an existing directory (got ` + strconv.Quote(missing) + `)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.Resolve(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if err == nil || err.Error() != tc.want {
				t.Errorf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
}
