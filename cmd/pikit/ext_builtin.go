package main

import (
	"maps"
	"os"
	"slices"

	hello "github.com/pikit-dev/pikit/examples/piext-hello"
	mcext "github.com/pikit-dev/pikit/midcompact/extension"
	"github.com/pikit-dev/pikit/piext"
	sfext "github.com/pikit-dev/pikit/stateflow/extension"
)

// builtinExtensions is the one table of Go extensions pikit carries:
// `pikit ext install NAME` installs one, `pikit ext run NAME` is its sidecar.
// A new extension is one row.
func builtinExtensions() map[string]func() *piext.Extension {
	return map[string]func() *piext.Extension{
		"hello":      hello.New,
		"live":       newLiveExtension,
		"midcompact": mcext.New,
		"stateflow":  func() *piext.Extension { return sfext.New(os.Getenv("PI_CODING_AGENT_DIR"), os.Getenv("HOME")) },
	}
}

// builtinNames lists the built-in extensions in byte order.
func builtinNames() []string { return slices.Sorted(maps.Keys(builtinExtensions())) }
