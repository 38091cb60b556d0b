package piext

import (
	"fmt"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// The bridge ↔ sidecar protocol (methods, codes, shapes) is in
// piext/internal/wire; this file holds what the runtime answers with.

func mismatch(name string, bridge int) error {
	return &jsonrpc.Error{Code: wire.CodeProtocolMismatch, Message: fmt.Sprintf(
		"piext: protocol mismatch: the installed bridge speaks %d, the extension %d; run `pikit ext install %s` again",
		bridge, wire.ProtocolVersion, name)}
}
