package host

import (
	"log/slog"

	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/broker"
)

// Options configure [Mount]. The zero value mounts at
// [taskbar.DefaultMountBase] with the configuration taken from the
// PI_BROWSER_TASKBAR_* environment and defaults, in front of the project
// broker.
type Options struct {
	// Config is the host's native configuration; unset fields fall back to
	// the environment, then to the defaults (seed 000 "Server-owned
	// configuration and activation").
	Config taskbar.Config

	// MountBase is the path prefix of the API and assets; "" means
	// [taskbar.DefaultMountBase].
	MountBase string

	// Owner is the Pi owner behind the API; the caller keeps and closes it.
	// Nil means the project broker (DESIGN.md: the host process is
	// disposable, the broker and Pi are not): Mount creates a
	// [broker.Client] configured by Broker, and [Taskbar.Close] closes that
	// client but leaves the broker, Pi, the conversation and a running task
	// to the next host process (hot reload). The broker exits after its
	// grace period (default 300 s) without clients or work.
	Owner taskbar.Owner

	// InProcess, with a nil Owner, makes Mount start a runtime owned by this
	// process instead of using the broker: Pi restarts with the host, and
	// [Taskbar.Close] stops it. For hosts that must leave nothing running
	// when they stop (`pikit demo`, `pikit taskbar proxy`, tests).
	InProcess bool

	// Broker configures the default broker client; nil means defaults.
	// Mount fills the fields left zero: ProjectRoot, Executable and
	// TaskTimeout from the resolved settings, Getenv from os.Getenv,
	// Logger from Logger, and Command as follows:
	//   - SelfBroker set: nil, so the client spawns this binary as
	//     `<exe> taskbar broker …` (its main must call [broker.Dispatch]);
	//   - else `pikit taskbar broker` with pikit found on PATH (it must speak
	//     the same broker protocol, or the taskbar shows Unavailable);
	//   - else there is no launcher: Mount logs a warning and falls back to
	//     an in-process runtime, so the taskbar still works (without
	//     surviving restarts).
	Broker *broker.ClientOptions

	// SelfBroker says this binary's main calls [broker.Dispatch] before
	// anything else, so the binary itself can be spawned as the project
	// broker (see Broker). A binary cannot detect this about itself safely:
	// spawning one that does not dispatch would start a second app.
	SelfBroker bool

	// Getenv looks up the environment fallbacks; nil means os.LookupEnv.
	Getenv func(string) (string, bool)

	// Logger receives fixed-text lifecycle and request records; nil
	// discards. Mount logs once which Pi it uses (version, where from) and
	// the project root.
	Logger *slog.Logger

	// PiCacheDir is the per-user cache where `pikit demo` installs Pi, read
	// (never written beyond Pi's launcher script) when no Pi command is
	// configured and no usable `pi` is on PATH; "" means
	// os.UserCacheDir()/pikit.
	PiCacheDir string

	// piResolved: RunProxy already looked Pi up and told its user.
	piResolved bool
}
