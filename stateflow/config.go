package stateflow

import (
	"errors"
	"fmt"
	"math"

	"github.com/pikit-dev/pikit/stateflow/internal/sftext"
)

// Config is the operator's <agentDir>/state-flow/config.json (reference
// §1.4), read once per extension load; State Flow never writes it.
type Config struct {
	// Mode is the default for genuinely new sessions: "active", "passive"
	// or "off" (default "off").
	Mode string
	// Logging enables JSONL diagnostics (default false).
	Logging bool
	// ShowSuccessfulPatches is TUI rendering only (default true).
	ShowSuccessfulPatches bool
	// HistoryLimit is 0..100 (default 7).
	HistoryLimit int
}

// DefaultConfig is the configuration when config.json is missing.
func DefaultConfig() Config {
	return Config{Mode: ModeOff, ShowSuccessfulPatches: true, HistoryLimit: DefaultHistoryLimit}
}

// ConfigError is a config.json that fails loading; the tools and commands
// answer Msg and the session stays Off.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

// ParseConfig decodes config.json. Malformed JSON, unknown keys and invalid
// values are a *ConfigError naming path: "Invalid State Flow configuration
// at "<path>": <reason>" (upstream's exact text is not in the reference;
// this wording is ours). Legacy keys: autoStart true means active; both
// passiveBootstrap and passiveTools false mean off; otherwise passive; an
// explicit mode wins.
func ParseConfig(data []byte, path string) (Config, error) {
	fail := func(reason string) (Config, error) {
		return Config{}, &ConfigError{Msg: fmt.Sprintf("Invalid State Flow configuration at %q: %s", path, reason)}
	}
	v, err := DecodeValue(data)
	if errors.Is(err, ErrTooDeep) {
		return fail(sftext.TooDeepMsg("the document"))
	}
	if err != nil {
		return fail("invalid JSON")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fail("expected a JSON object")
	}
	c := DefaultConfig()
	legacy := false
	autoStart, pBoot, pTools := false, true, true
	for _, k := range sortedKeys(obj) {
		val := obj[k]
		switch k {
		case "mode":
			s, _ := val.(string)
			if s != ModeActive && s != ModePassive && s != ModeOff {
				return fail("mode must be one of: active, passive, off")
			}
		case "historyLimit":
			f, ok := val.(float64)
			if !ok || f != math.Trunc(f) || f < 0 || f > MaxHistoryLimit {
				return fail("historyLimit must be an integer from 0 to 100")
			}
			c.HistoryLimit = int(f)
		case "logging", "showSuccessfulPatches", "autoStart", "passiveBootstrap", "passiveTools":
			b, ok := val.(bool)
			if !ok {
				return fail(k + " must be a boolean")
			}
			switch k {
			case "logging":
				c.Logging = b
			case "showSuccessfulPatches":
				c.ShowSuccessfulPatches = b
			case "autoStart":
				autoStart, legacy = b, true
			case "passiveBootstrap":
				pBoot, legacy = b, true
			case "passiveTools":
				pTools, legacy = b, true
			}
		default:
			return fail("unknown key " + k)
		}
	}
	switch {
	case obj["mode"] != nil:
		c.Mode = obj["mode"].(string)
	case !legacy:
	case autoStart:
		c.Mode = ModeActive
	case !pBoot && !pTools:
		c.Mode = ModeOff
	default:
		c.Mode = ModePassive
	}
	return c, nil
}
