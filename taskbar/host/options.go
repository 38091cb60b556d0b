package host

import (
	"log/slog"

	"github.com/pikit-dev/pikit/taskbar"
)

// Options configure [Mount]. The zero value mounts at
// [taskbar.DefaultMountBase] with the configuration taken from the
// PI_BROWSER_TASKBAR_* environment and defaults.
type Options struct {
	// Config is the host's native configuration; unset fields fall back to
	// the environment, then to the defaults (seed 000 "Server-owned
	// configuration and activation").
	Config taskbar.Config

	// MountBase is the path prefix of the API and assets; "" means
	// [taskbar.DefaultMountBase].
	MountBase string

	// Owner is the Pi owner behind the API. Nil means a runtime owned by
	// this process (started by Mount, stopped by [Taskbar.Close]); Pi then
	// restarts with the app. To keep Pi and the conversation across app
	// restarts (hot reload), pass the project broker client, which the
	// caller closes:
	//
	//	c := broker.NewClient(&broker.ClientOptions{ProjectRoot: root,
	//		Command: []string{"pikit", "taskbar", "broker"}})
	//	defer c.Close()
	Owner taskbar.Owner

	// Getenv looks up the environment fallbacks; nil means os.LookupEnv.
	Getenv func(string) (string, bool)

	// Logger receives fixed-text lifecycle and request records; nil
	// discards.
	Logger *slog.Logger
}
