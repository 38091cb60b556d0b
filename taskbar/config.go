package taskbar

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/internal/loopback"
	"github.com/pikit-dev/pikit/internal/platform"
)

// Environment fallbacks of the five settings (seed 000 "Server-owned
// configuration and activation").
const (
	EnvEnabled      = "PI_BROWSER_TASKBAR_ENABLED"
	EnvAllowedHosts = "PI_BROWSER_TASKBAR_ALLOWED_HOSTS"
	EnvExecutable   = "PI_BROWSER_TASKBAR_EXECUTABLE"
	EnvProjectRoot  = "PI_BROWSER_TASKBAR_PROJECT_ROOT"
	EnvTaskTimeout  = "PI_BROWSER_TASKBAR_TASK_TIMEOUT"
)

// Task timeout bounds and default.
const (
	MinTaskTimeout     = 60 * time.Second
	MaxTaskTimeout     = 86400 * time.Second
	DefaultTaskTimeout = 1800 * time.Second
)

// Config is the host's native taskbar configuration. A zero field is
// unset and falls back to the PI_BROWSER_TASKBAR_* environment, then to
// the default. The zero Config is enabled with defaults.
type Config struct {
	// Enabled turns the taskbar on; nil means unset (default true in
	// development builds).
	Enabled *bool
	// AllowedHosts are exact DNS names or IP literals a non-loopback peer
	// may use; nil means unset, an empty non-nil slice means none.
	AllowedHosts []string
	// Executable is the Pi command; "" means unset (default "pi" from PATH).
	Executable string
	// ProjectRoot is Pi's working directory; "" means unset (default: the
	// current directory). It must resolve to an existing directory.
	ProjectRoot string
	// TaskTimeout bounds one task; 0 means unset (default 30 min). It must
	// be whole seconds from 60 through 86,400.
	TaskTimeout time.Duration
}

// Settings is a resolved, canonical configuration, fixed at startup and
// never exposed to the browser.
type Settings struct {
	Enabled      bool
	AllowedHosts []string // canonical: lower-case, no final dot, canonical IP spelling
	Executable   string
	ProjectRoot  string // canonical absolute directory, symlinks resolved
	TaskTimeout  time.Duration
}

// ConfigError names the malformed setting (reference taskbar.md
// "Configuration": "pi_browser_taskbar <setting> must be …"). Only a
// project root, which is a path and no secret, is quoted: when it came
// from the environment the message names the variable and its value, else
// the configured value.
type ConfigError struct {
	Setting string // enabled, allowed_hosts, executable, project_root, task_timeout
	Rule    string // what the value must be
	Err     error  // underlying cause, may be nil
	// Env is the environment variable the value came from, "" when it came
	// from Config; Value is the value, set for project_root only.
	Env, Value string
}

func (e *ConfigError) Error() string {
	msg := "pi_browser_taskbar " + e.Setting + " must be " + e.Rule
	switch {
	case e.Setting != "project_root":
	case e.Env != "":
		msg += fmt.Sprintf(" (%s is %q)", e.Env, e.Value)
	case e.Value != "":
		msg += fmt.Sprintf(" (got %q)", e.Value)
	}
	return msg
}

func (e *ConfigError) Unwrap() error { return e.Err }

const (
	ruleEnabled      = "true, false, 1 or 0"
	ruleAllowedHosts = "a list of exact DNS names or IP addresses (no schemes, ports, paths, wildcards or empty entries)"
	ruleExecutable   = "a non-empty command"
	ruleProjectRoot  = "an existing directory"
	ruleTaskTimeout  = "an integer number of seconds from 60 through 86400"
)

// Resolve applies Config > environment > defaults and validates every
// setting, returning a *ConfigError naming the first malformed one. getenv
// looks up one environment variable (os.LookupEnv in a host; nil means no
// environment). A disabled configuration skips validation of the others.
// A missing Pi executable is not an error: the session becomes unavailable.
func (c Config) Resolve(getenv func(string) (string, bool)) (Settings, error) {
	if getenv == nil {
		getenv = func(string) (string, bool) { return "", false }
	}
	var s Settings
	s.Enabled = true
	if c.Enabled != nil {
		s.Enabled = *c.Enabled
	} else if v, ok := getenv(EnvEnabled); ok {
		switch strings.TrimSpace(strings.ToLower(v)) {
		case "true", "1":
		case "false", "0":
			s.Enabled = false
		default:
			return Settings{}, &ConfigError{Setting: "enabled", Rule: ruleEnabled}
		}
	}
	if !s.Enabled {
		return s, nil
	}

	hosts := c.AllowedHosts
	if hosts == nil {
		if v, ok := getenv(EnvAllowedHosts); ok && v != "" {
			hosts = strings.Split(v, ",")
		}
	}
	for _, h := range hosts {
		canon, err := ParseAllowedHost(h)
		if err != nil {
			return Settings{}, err
		}
		s.AllowedHosts = append(s.AllowedHosts, canon)
	}

	s.Executable = c.Executable
	if s.Executable == "" {
		v, ok := getenv(EnvExecutable)
		if ok && strings.TrimSpace(v) == "" {
			return Settings{}, &ConfigError{Setting: "executable", Rule: ruleExecutable}
		}
		s.Executable = v
	}
	if s.Executable == "" {
		s.Executable = "pi"
	}
	if strings.TrimSpace(s.Executable) == "" || strings.ContainsRune(s.Executable, 0) {
		return Settings{}, &ConfigError{Setting: "executable", Rule: ruleExecutable}
	}

	root, fromEnv := c.ProjectRoot, ""
	if root == "" {
		v, ok := getenv(EnvProjectRoot)
		if ok && v == "" {
			return Settings{}, &ConfigError{Setting: "project_root", Rule: ruleProjectRoot, Env: EnvProjectRoot}
		}
		if ok {
			fromEnv = EnvProjectRoot
		}
		root = v
	}
	if root == "" {
		wd, err := platform.Getwd()
		if err != nil {
			return Settings{}, &ConfigError{Setting: "project_root", Rule: ruleProjectRoot, Err: err}
		}
		root = wd
	}
	canon, err := CanonicalRoot(root)
	if ce := (*ConfigError)(nil); errors.As(err, &ce) {
		ce.Env = fromEnv
	}
	if err != nil {
		return Settings{}, err
	}
	s.ProjectRoot = canon

	s.TaskTimeout = DefaultTaskTimeout
	switch {
	case c.TaskTimeout != 0:
		if c.TaskTimeout%time.Second != 0 || c.TaskTimeout < MinTaskTimeout || c.TaskTimeout > MaxTaskTimeout {
			return Settings{}, &ConfigError{Setting: "task_timeout", Rule: ruleTaskTimeout}
		}
		s.TaskTimeout = c.TaskTimeout
	default:
		if v, ok := getenv(EnvTaskTimeout); ok {
			d, err := parseTimeout(v)
			if err != nil {
				return Settings{}, err
			}
			s.TaskTimeout = d
		}
	}
	return s, nil
}

var timeoutPattern = regexp.MustCompile(`^[+-]?[0-9]+$`)

func parseTimeout(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	bad := &ConfigError{Setting: "task_timeout", Rule: ruleTaskTimeout}
	if !timeoutPattern.MatchString(v) {
		return 0, bad
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 60 || n > 86400 {
		return 0, bad
	}
	return time.Duration(n) * time.Second, nil
}

// CanonicalRoot resolves a project root to an existing absolute directory
// as Pi, started there, reports its working directory
// (platform.CanonicalPath: symlinks resolved on Unix), or a *ConfigError
// naming project_root.
func CanonicalRoot(root string) (string, error) {
	abs, err := platform.CanonicalPath(root)
	var fi os.FileInfo
	if err == nil {
		fi, err = os.Stat(abs)
	}
	if err == nil && !fi.IsDir() {
		err = errors.New("not a directory")
	}
	if err != nil {
		return "", &ConfigError{Setting: "project_root", Rule: ruleProjectRoot, Err: err, Value: root}
	}
	return abs, nil
}

// ParseAllowedHost validates one allowed_hosts entry and returns its
// canonical spelling: trimmed, lower-case, final dots removed, IP literals
// in canonical form. Ports, schemes, paths, wildcards, CIDR, bracketed or
// scoped IP literals, empty entries and names whose last label is a
// number (2130706433, 0x7f.1: browsers read those as IPv4 addresses) are a
// *ConfigError naming allowed_hosts.
func ParseAllowedHost(entry string) (string, error) {
	h, err := loopback.ParseAllowedHost(entry)
	if err != nil {
		return "", &ConfigError{Setting: "allowed_hosts", Rule: ruleAllowedHosts}
	}
	return h, nil
}

// String shows the settings without values that could leak paths.
func (s Settings) String() string {
	return fmt.Sprintf("taskbar settings{enabled:%v remote_hosts:%d timeout:%s}", s.Enabled, len(s.AllowedHosts), s.TaskTimeout)
}
