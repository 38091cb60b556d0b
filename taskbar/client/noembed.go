//go:build !pitaskbar

package client

import (
	"embed"
	"io/fs"
)

// Embedded reports whether the assets are compiled in: false without the
// pitaskbar build tag.
const Embedded = false

// FS returns an empty file system: without the pitaskbar build tag no asset
// is compiled into the binary.
func FS() fs.FS { return embed.FS{} }
