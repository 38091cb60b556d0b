package client

import (
	"embed"
	"io/fs"
)

//go:embed client.js client.css
var devAssets embed.FS

// DevFS returns the Browser Client assets ([ScriptName] and [StyleName] at
// the root) whatever the build tags, for development tools that always
// serve the taskbar (cmd/pikit). A Go app serves [FS], empty without the
// pitaskbar tag; a binary that never calls DevFS links none of these
// bytes. The returned FS is read-only and safe for concurrent use.
func DevFS() fs.FS { return devAssets }
